"""Hostile clients against one node: what each may hold is bounded in bytes, and the node's
memory (RSS) stays within a stated bound under each attack.

The node runs with the default queue limits: `socket.outbound_queue_bytes` 4 MiB,
`socket.inbound_queue_bytes` 2 MiB (docs/operations/limits.md).
"""

import json
import os
import socket
import subprocess
import struct
import time
import urllib.error
import urllib.request

import pytest
import websocket

from roomcast_e2e import GatewayNode, jwt_sign, redis_cli, WAIT

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


def channels_subscribed(node):
    """`roomcast_channels_subscribed` by kind (room, node), from the node's /metrics."""
    with urllib.request.urlopen(f"http://127.0.0.1:{node.port}/metrics", timeout=WAIT) as response:
        text = response.read().decode()
    counts = {"room": 0.0, "node": 0.0}
    for line in text.splitlines():
        if line.startswith("roomcast_channels_subscribed{"):
            labels, value = line.rsplit(" ", 1)
            for kind in counts:
                if f'kind="{kind}"' in labels:
                    counts[kind] = float(value)
    return counts


def polling(node, sid=None, method="GET", body=None):
    query = "/socket.io/?EIO=4&transport=polling" + (f"&sid={sid}" if sid else "")
    request = urllib.request.Request(f"http://127.0.0.1:{node.port}{query}", method=method, data=body)
    try:
        with urllib.request.urlopen(request, timeout=WAIT) as response:
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
        deadline = time.monotonic() + WAIT
        while True:
            status, body = polling(abused_node, sid)
            if status == 400 and json.loads(body)["code"] == 1 or status == 200 and body.endswith(b"1"):
                break
            assert time.monotonic() < deadline, f"session {sid} still open: {status} {body[:80]!r}"
    grown = rss_mib(abused_node) - before
    assert grown < RSS_BOUND_MIB, f"RSS grew by {grown:.0f} MiB"


def test_an_authenticated_polling_client_that_never_polls_room_traffic_is_closed(api, roomcast_binary, redis_server, connect):
    """Signed in and in a room, POSTing now and then (so the session looks alive) but never
    polling: the room's traffic piles up for it only up to socket.outbound_queue_bytes, then the
    session is closed and its socket uncounted."""
    node = GatewayNode("unpolled", roomcast_binary, redis_server.url, log_directory=redis_server.directory, settings={
        "ROOMCAST_SOCKET_OUTBOUND_QUEUE_BYTES": "65536",
        "ROOMCAST_SOCKET_EVENTS_PER_SECOND": "100000",
        "ROOMCAST_SOCKET_EVENT_BURST": "100000",
    })
    try:
        alice, bob = api.register("unpolled"), api.register("talker")
        room_id = api.create_room(alice, other=bob)["id"]
        status, opened = polling(node)
        sid = json.loads(opened[1:])["sid"]
        assert polling(node, sid, "POST", ("40" + json.dumps({"token": alice.token})).encode()) == (200, b"ok")
        assert polling(node, sid)[1].startswith(b"40{")
        assert polling(node, sid, "POST", ("420" + json.dumps(["room:join", {"roomId": room_id}])).encode()) == (200, b"ok")
        before = rss_mib(node)
        talker = connect(node, bob)
        assert "data" in talker.call("room:join", {"roomId": room_id})
        key = f"user:{{{alice.id}}}:sockets"
        # 200 messages of about 1 KB: three times what alice's session may hold.
        closed = False
        for index in range(200):
            assert "data" in talker.call("message:send", {"roomId": room_id, "text": f"{index} " + "x" * 1000})
            if index % 20 == 0:
                status, _ = polling(node, sid, "POST", b"3")  # alive, in its way
                if status != 200:
                    closed = True
                    break
        # The session was closed: its next poll gets the close packet (or an unknown sid), and
        # the socket no longer counts for the user.
        status, body = polling(node, sid)
        assert closed or body == b"1" or status == 400, (status, body[:80])
        deadline = time.monotonic() + WAIT
        while int(redis_cli("-c", "-p", str(redis_server.port), "ZCARD", key).strip()) != 0:
            assert time.monotonic() < deadline, "the closed session is still counted"
            time.sleep(0.05)
        assert rss_mib(node) - before < RSS_BOUND_MIB
        assert node.is_running()
    finally:
        node.stop()


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
    # Pings until the node drops the connection (after its close frame it reads on for a
    # moment, waiting for the client's) or stops reading them, or 60 s: about 38 MB of pongs a
    # second if nothing stopped them. Either way what the node holds must stay bounded.
    closed = stalled = False
    sock.settimeout(30)
    deadline = time.monotonic() + 60
    while not closed and not stalled and time.monotonic() < deadline:
        try:
            sock.sendall(burst)
        except (BrokenPipeError, ConnectionResetError):
            closed = True
        except socket.timeout:
            stalled = True
    sock.close()
    assert closed or stalled, "the node kept reading and answering pings that were never read"
    grown = rss_mib(abused_node) - before
    assert grown < RSS_BOUND_MIB, f"RSS grew by {grown:.0f} MiB"


def test_a_full_inbox_still_cleans_up_the_socket(api, abused_node, redis_server):
    """A client that sends without waiting for acks is closed; its disconnect is handled all the
    same: the user's socket entry, its presence in the room and the node's subscriptions for it
    go away (20 leaks locked a user out), and the node's memory stays bounded."""
    account = api.register("flooder")
    room = api.create_room(account, other=api.register("other"))
    key = f"user:{{{account.id}}}:sockets"
    presence_key = f"room:{{{room['id']}}}:presence"
    channels_before = channels_subscribed(abused_node)
    rss_before = rss_mib(abused_node)
    for attempt in range(3):
        ws = websocket.create_connection(f"ws://127.0.0.1:{abused_node.port}/socket.io/?EIO=4&transport=websocket", timeout=WAIT)
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
        deadline = time.monotonic() + WAIT
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
        deadline = time.monotonic() + WAIT
        while int(redis_cli("-c", "-p", str(redis_server.port), "ZCARD", key).strip()) != 0:
            assert time.monotonic() < deadline, "the closed socket is still counted"
            time.sleep(0.05)
        # Its presence in the room (had a join been handled) and the node's room channel for
        # it are gone too (other tests' sockets may only have closed meanwhile).
        deadline = time.monotonic() + WAIT
        while True:
            members = redis_cli("-c", "-p", str(redis_server.port), "ZRANGE", presence_key, "0", "-1").split()
            channels = channels_subscribed(abused_node)
            # The node's channel of per-user events for a slot is kept once subscribed: only
            # room channels must go.
            if not [m for m in members if m.startswith(account.id + "|")] and \
                    channels["room"] <= channels_before["room"]:
                break
            assert time.monotonic() < deadline, f"left behind: presence {members}, channels {channels} (before {channels_before})"
            time.sleep(0.05)
    grown = rss_mib(abused_node) - rss_before
    assert grown < RSS_BOUND_MIB, f"RSS grew by {grown:.0f} MiB"


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
        deadline = time.monotonic() + WAIT
        while received.count(b"\x8a\x00") < 3:
            assert time.monotonic() < deadline, received
            chunk = sock.recv(4096)
            assert chunk, f"connection closed: {received!r}"
            received += chunk
        assert received.startswith(b"HTTP/1.1 101")
    finally:
        sock.close()
    assert abused_node.is_running()


# ---------------------------------------------------------------------------------------------
# HTTP timeouts (http.idle_timeout_ms) and the drain


IDLE_TIMEOUT = 1.0


@pytest.fixture(scope="module")
def impatient_node(roomcast_binary, redis_server):
    node = GatewayNode("impatient", roomcast_binary, redis_server.url, log_directory=redis_server.directory, settings={
        "ROOMCAST_HTTP_IDLE_TIMEOUT_MS": str(int(IDLE_TIMEOUT * 1000)),
        # Long against IDLE_TIMEOUT: a poll waits for the next ping, and the handshake before it
        # may take seconds on a loaded machine without the poll ending before IDLE_TIMEOUT.
        "ROOMCAST_ENGINEIO_PING_INTERVAL_MS": "6000",
    })
    try:
        yield node
    finally:
        node.stop()


def wait_closed(sock, within, feed=None):
    """Seconds until the server closes `sock` (reading and dropping what it sends), calling
    `feed` every 0.2 s meanwhile; fails after `within` seconds."""
    started = time.monotonic()
    sock.settimeout(0.2)
    while time.monotonic() - started < within:
        try:
            if not sock.recv(65536):
                return time.monotonic() - started
        except socket.timeout:
            pass
        except ConnectionResetError:
            return time.monotonic() - started
        if feed:
            try:
                feed()
            except (BrokenPipeError, ConnectionResetError):
                return time.monotonic() - started
    raise AssertionError(f"still open after {within} s")


def test_slow_headers_idle_keepalive_and_silent_connections_are_closed(impatient_node):
    # Headers trickled a byte at a time: partial headers never reset the clock.
    trickled = socket.create_connection(("127.0.0.1", impatient_node.port), timeout=WAIT)
    trickled.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\n")
    wait_closed(trickled, within=30, feed=lambda: trickled.sendall(b"X"))
    # A keep-alive connection left idle after its response.
    idle = socket.create_connection(("127.0.0.1", impatient_node.port), timeout=WAIT)
    idle.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
    assert idle.recv(4096).startswith(b"HTTP/1.1 200")
    wait_closed(idle, within=30)
    # Many connections that never send anything all go.
    silent = [socket.create_connection(("127.0.0.1", impatient_node.port), timeout=WAIT) for _ in range(300)]
    for connection in silent:
        wait_closed(connection, within=30)
    assert impatient_node.is_running()


def read_until_closed(sock, within=WAIT):
    """Everything the server sends until it closes its side, within `within` seconds."""
    sock.settimeout(within)
    received = b""
    while True:
        chunk = sock.recv(65536)
        if not chunk:
            return received
        received += chunk


@pytest.mark.parametrize("path", ["/healthz", "/socket.io/?EIO=4&transport=polling"])
def test_headers_over_the_parser_limit_get_431_and_the_connection_closes(node1, path):
    """NIO's parser takes 80 KiB of header names and values; past it the request is answered
    431 and the node closes its side at once, instead of leaving the client to the idle timeout."""
    allowed = socket.create_connection(("127.0.0.1", node1.port), timeout=WAIT)
    allowed.sendall(f"GET {path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\nX-Big: {'a' * 50_000}\r\n\r\n".encode())
    assert read_until_closed(allowed).startswith(b"HTTP/1.1 200"), "a 50 KB header is within the limit"
    refused = socket.create_connection(("127.0.0.1", node1.port), timeout=WAIT)
    refused.sendall(f"GET {path} HTTP/1.1\r\nHost: x\r\nX-Big: {'a' * 100_000}\r\n\r\n".encode())
    answer = read_until_closed(refused)
    assert answer.startswith(b"HTTP/1.1 431 Request Header Fields Too Large\r\n"), answer[:200]
    assert node1.is_running()


def test_a_long_poll_outlives_the_idle_timeout(api, impatient_node):
    """No clock runs while a response is being made: a poll waits for the next ping."""
    account = api.register("patient")
    status, opened = polling(impatient_node)
    sid = json.loads(opened[1:])["sid"]
    assert polling(impatient_node, sid, "POST", ("40" + json.dumps({"token": account.token})).encode()) == (200, b"ok")
    assert polling(impatient_node, sid)[1].startswith(b"40{")
    started = time.monotonic()
    status, body = polling(impatient_node, sid)
    assert (status, body) == (200, b"2"), (status, body)
    assert time.monotonic() - started > IDLE_TIMEOUT


def test_a_drain_ends_on_time_whatever_half_sent_requests_wait(roomcast_binary, redis_server):
    node = GatewayNode("drained", roomcast_binary, redis_server.url, log_directory=redis_server.directory, settings={
        "ROOMCAST_HTTP_IDLE_TIMEOUT_MS": "600000",
        "ROOMCAST_SHUTDOWN_DRAIN_TIMEOUT_MS": "3000",
    })
    try:
        # A first request half sent, and a second one half sent on a kept-alive connection.
        first = socket.create_connection(("127.0.0.1", node.port), timeout=WAIT)
        first.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\n")
        second = socket.create_connection(("127.0.0.1", node.port), timeout=WAIT)
        second.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
        assert second.recv(4096).startswith(b"HTTP/1.1 200")
        second.sendall(b"POST /api/auth/login HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n{")
        time.sleep(0.2)  # not a synchronisation: the drain must end on time whenever it starts
        node.process.terminate()
        # Ended by the 3 s drain timeout. A drain that waited for the half-sent requests would
        # wait out the ten-minute idle timeout: far beyond this patience, on any machine.
        try:
            node.process.wait(timeout=120)
        except subprocess.TimeoutExpired:
            pytest.fail("the drain waited for the half-sent requests")
        for connection in (first, second):
            wait_closed(connection, within=WAIT)
    finally:
        node.stop()


def test_a_socket_whose_token_expires_is_told_and_closed(api, impatient_node):
    """Told and closed at the token's expiry (tests/e2e/test_token_lifetime.py times it)."""
    account = api.register("expiring")
    # Seconds of validity, so that a slow CONNECT still comes before the expiry.
    token = jwt_sign({"sub": account.id, "exp": int(time.time()) + 5})
    ws = websocket.create_connection(f"ws://127.0.0.1:{impatient_node.port}/socket.io/?EIO=4&transport=websocket", timeout=WAIT)
    try:
        assert ws.recv().startswith("0{")
        ws.send("40" + json.dumps({"token": token}))
        assert ws.recv().startswith("40{")
        frames = []
        while True:
            opcode, data = ws.recv_data(control_frame=True)
            if opcode == websocket.ABNF.OPCODE_CLOSE:
                break
            text = data.decode()
            if text == "2":
                ws.send("3")
                continue
            frames.append(text)
        assert frames[-1] == "41", frames
        error = json.loads(frames[-2][2:])
        assert error[0] == "error" and error[1]["code"] == "token_expired", frames
    finally:
        ws.close()
    # The same token cannot connect again.
    ws = websocket.create_connection(f"ws://127.0.0.1:{impatient_node.port}/socket.io/?EIO=4&transport=websocket", timeout=WAIT)
    try:
        ws.recv()
        ws.send("40" + json.dumps({"token": token}))
        refusal = ws.recv()
        assert refusal.startswith("44") and "token_expired" in refusal
    finally:
        ws.close()
