"""Hostile clients against one node: what each may hold is bounded in bytes, and the node's
memory (RSS) stays within a stated bound under each attack (issue #19).

The node runs with the default queue limits: `socket.outbound_queue_bytes` 4 MiB,
`socket.inbound_queue_bytes` 2 MiB (see README → Limits and abuse).
"""

import json
import os
import socket
import struct
import time
import urllib.error
import urllib.request

import pytest
import websocket

from roomcast_e2e import GatewayNode, redis_cli, WAIT

# What one attack may add to the node's resident memory: the queue limits (a few MiB) plus
# what the allocator keeps of transient buffers. The attacks below grew it by hundreds of MiB
# before the limits existed.
RSS_BOUND_MIB = 96


@pytest.fixture(scope="module")
def abused_node(roomcast_binary, redis_server):
    node = GatewayNode("abused", roomcast_binary, redis_server.url, log_directory=redis_server.directory, settings={
        # The inbox attack below needs packets that are large next to the inbox.
        "ROOMCAST_ENGINEIO_MAX_PAYLOAD": "4096",
        "ROOMCAST_SOCKET_INBOUND_QUEUE_BYTES": "8192",
        "ROOMCAST_SOCKET_EVENTS_PER_SECOND": "100000",
        "ROOMCAST_SOCKET_EVENT_BURST": "100000",
    })
    try:
        yield node
    finally:
        node.stop()


def rss_mib(node):
    with open(f"/proc/{node.process.pid}/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    raise AssertionError("no VmRSS")


def polling(node, sid=None, method="GET", body=None):
    query = f"/socket.io/?EIO=4&transport=polling" + (f"&sid={sid}" if sid else "")
    request = urllib.request.Request(f"http://127.0.0.1:{node.port}{query}", method=method, data=body)
    try:
        with urllib.request.urlopen(request, timeout=WAIT * 6) as response:
            return response.status, response.read()
    except urllib.error.HTTPError as error:
        return error.code, error.read()


def test_a_polling_client_that_never_polls_is_closed_and_holds_little(abused_node):
    """No token needed: a handshake, then a body of pings (each answered with a pong that waits
    for a poll), and no poll ever."""
    before = rss_mib(abused_node)
    pings = b"\x1e".join([b"2"] * 2000)  # within max_payload (4096 bytes here) ... repeated below
    for _ in range(5):
        status, opened = polling(abused_node)
        assert status == 200
        sid = json.loads(opened[1:])["sid"]
        # 2,000 pongs a request, 40 requests: 80,000 pongs, about 5 MiB counted: over the limit.
        for _ in range(40):
            status, _ = polling(abused_node, sid, "POST", pings)
            if status != 200:
                break
        # The session was closed: the client is told to start over.
        deadline = time.monotonic() + WAIT * 6
        while True:
            status, body = polling(abused_node, sid)
            if status == 400 and json.loads(body)["code"] == 1 or status == 200 and body.endswith(b"1"):
                break
            assert time.monotonic() < deadline, f"session {sid} still open: {status} {body[:80]!r}"
    grown = rss_mib(abused_node) - before
    assert grown < RSS_BOUND_MIB, f"RSS grew by {grown:.0f} MiB"


def test_a_websocket_client_that_pings_and_never_reads_is_closed(abused_node):
    """WebSocket ping frames, each answered with a pong the client never reads."""
    before = rss_mib(abused_node)
    sock = socket.create_connection(("127.0.0.1", abused_node.port), timeout=WAIT)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    sock.sendall(b"GET /socket.io/?EIO=4&transport=websocket HTTP/1.1\r\nHost: x\r\nConnection: Upgrade\r\n"
                 b"Upgrade: websocket\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n")
    payload, mask = b"p" * 125, b"\x01\x02\x03\x04"
    frame = bytes([0x89, 0x80 | len(payload)]) + mask + bytes(b ^ mask[i % 4] for i, b in enumerate(payload))
    burst = frame * 1000
    closed = False
    # 300,000 pings: 38 MB of pongs if nothing stopped them.
    for _ in range(300):
        try:
            sock.sendall(burst)
        except (BrokenPipeError, ConnectionResetError):
            closed = True
            break
    sock.close()
    assert closed, "the node kept answering pings that were never read"
    grown = rss_mib(abused_node) - before
    assert grown < RSS_BOUND_MIB, f"RSS grew by {grown:.0f} MiB"


def test_a_full_inbox_still_cleans_up_the_socket(api, abused_node, redis_server):
    """A client that sends without waiting for acks is closed; its disconnect is handled all the
    same: the user's socket entry and room membership go away (20 leaks locked a user out)."""
    account = api.register("flooder")
    room = api.create_room(account, other=api.register("other"))
    key = f"user:{{{account.id}}}:sockets"
    for attempt in range(3):
        ws = websocket.create_connection(f"ws://127.0.0.1:{abused_node.port}/socket.io/?EIO=4&transport=websocket", timeout=WAIT * 6)
        assert ws.recv().startswith("0{")
        ws.send("40" + json.dumps({"token": account.token}))
        assert ws.recv().startswith("40{")
        assert int(redis_cli("-c", "-p", str(redis_server.port), "ZCARD", key).strip()) == 1
        # One write of 200 joins of about 1 KB each (each needs Redis): far over 8 KiB of inbox.
        padding = "x" * 900
        join = "42" + json.dumps(["room:join", {"roomId": room["id"], "padding": padding}])
        masked = b"".join(masked_text(join) for _ in range(200))
        ws.sock.sendall(masked)
        closed_with = None
        deadline = time.monotonic() + WAIT * 6
        while closed_with is None and time.monotonic() < deadline:
            try:
                opcode, data = ws.recv_data(control_frame=True)
            except (websocket.WebSocketConnectionClosedException, ConnectionError):
                closed_with = "reset"
                break
            if opcode == websocket.ABNF.OPCODE_CLOSE:
                closed_with = struct.unpack("!H", data[:2])[0]
        assert closed_with == 1008, f"attempt {attempt}: closed with {closed_with}"
        ws.close()
        # Cleanup happened: no socket of this user is left counted.
        deadline = time.monotonic() + WAIT * 6
        while int(redis_cli("-c", "-p", str(redis_server.port), "ZCARD", key).strip()) != 0:
            assert time.monotonic() < deadline, "the closed socket is still counted"
            time.sleep(0.05)


def masked_text(text):
    payload, mask = text.encode(), os.urandom(4)
    header = bytes([0x81])
    if len(payload) < 126:
        header += bytes([0x80 | len(payload)])
    else:
        header += bytes([0x80 | 126]) + struct.pack("!H", len(payload))
    return header + mask + bytes(b ^ mask[i % 4] for i, b in enumerate(payload))


def test_frames_sent_with_the_upgrade_request_are_taken_not_fatal(abused_node):
    """A client that does not wait for the 101 (its frames in the same segment as the request)
    once took the node down: the bytes reached a handler that expected HTTP."""
    sock = socket.create_connection(("127.0.0.1", abused_node.port), timeout=WAIT)
    try:
        sock.sendall(b"GET /socket.io/?EIO=4&transport=websocket HTTP/1.1\r\nHost: x\r\nConnection: Upgrade\r\n"
                     b"Upgrade: websocket\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n"
                     + b"\x89\x80\x01\x02\x03\x04" * 3)
        received = b""
        deadline = time.monotonic() + WAIT * 6
        while received.count(b"\x8a\x00") < 3:
            assert time.monotonic() < deadline, received
            chunk = sock.recv(4096)
            assert chunk, f"connection closed: {received!r}"
            received += chunk
        assert received.startswith(b"HTTP/1.1 101")
    finally:
        sock.close()
    assert abused_node.is_running()
