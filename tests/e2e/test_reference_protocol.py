"""Engine.IO and Socket.IO as the reference implementations run them, checked on the wire.

Each test follows what the reference server (socketio/engine.io `lib/socket.ts`) does and what
the reference clients (socket.io-client / engine.io-client, python-engineio) rely on:

- heartbeat: the server pings `pingInterval` after the open packet and `pingInterval` after each
  pong, and closes a socket whose pong has not come `pingTimeout` after the ping; engine.io-client
  drops a connection that has seen no ping for `pingInterval + pingTimeout`;
- upgrade: after `2probe` on the new WebSocket, the server releases the pending long-poll with a
  noop (`6`): engine.io-client's polling transport `pause()` waits for that poll to end before
  the client sends `5`;
- keep-alive: Node's HTTP server takes an upgrade on any request of a keep-alive connection
  (aiohttp, python-socketio's async client, reuses pooled connections for the upgrade);
- binary packets this server refuses are refused through the ack the client asked for.
"""

import asyncio
import base64
import json
import os
import socket
import struct
import threading
import time
import urllib.request

import pytest
import socketio
import websocket

from roomcast_e2e import GatewayNode, WAIT

PING_INTERVAL = 1.5
# The reference client's grace for a late ping: a loaded machine's scheduling delays fit in it.
PING_TIMEOUT = 4.0
# How much sooner than due a ping or a close may come: the two clocks' reading of the same instant.
TOLERANCE = 0.10


@pytest.fixture(scope="module")
def timed_node(roomcast_binary, redis_server):
    """A node with short Engine.IO timers, so a few heartbeats fit in a test."""
    node = GatewayNode("timed", roomcast_binary, redis_server.url, log_directory=redis_server.directory, settings={
        "ROOMCAST_ENGINEIO_PING_INTERVAL_MS": str(int(PING_INTERVAL * 1000)),
        "ROOMCAST_ENGINEIO_PING_TIMEOUT_MS": str(int(PING_TIMEOUT * 1000)),
    })
    try:
        yield node
    finally:
        node.stop()


def ws_url(node, query=""):
    return f"ws://127.0.0.1:{node.port}/socket.io/?EIO=4&transport=websocket{query}"


def connect_websocket(node, token):
    """A raw Engine.IO WebSocket with Socket.IO connected to `/`; returns it and the open packet."""
    ws = websocket.create_connection(ws_url(node), timeout=WAIT)
    opened = ws.recv()
    assert opened.startswith("0{"), opened
    ws.send("40" + json.dumps({"token": token}))
    connected = ws.recv()
    assert connected.startswith("40{"), connected
    return ws, json.loads(opened[1:])


def assert_ping_due(measured, what):
    """Not before `pingInterval`, and before the reference client gives up: engine.io-client's
    `_resetPingTimeout` closes the connection when no ping comes within pingInterval + pingTimeout
    of the last one (or of the open packet). That timer, not a guess about this machine's speed,
    is the upper bound."""
    assert measured >= PING_INTERVAL * (1 - TOLERANCE), f"{what}: {measured:.3f} s, sooner than pingInterval {PING_INTERVAL} s"
    assert measured < PING_INTERVAL + PING_TIMEOUT, \
        f"{what}: {measured:.3f} s, past pingInterval + pingTimeout ({PING_INTERVAL + PING_TIMEOUT} s): a reference client has closed"


# ---------------------------------------------------------------------------------------------
# Heartbeat


def test_pings_come_every_ping_interval_and_a_silent_client_is_closed(api, timed_node):
    account = api.register("pinged")
    ws, handshake = connect_websocket(timed_node, account.token)
    assert handshake["pingInterval"] == PING_INTERVAL * 1000 and handshake["pingTimeout"] == PING_TIMEOUT * 1000
    opened_at = time.monotonic()
    pings = []
    ws.settimeout(0.25)
    # Answer four pings at once, and in between send pongs that answer nothing: they must not
    # move the next ping (nor, below, stand in for the answer to one).
    while len(pings) < 4:
        last = pings[-1] if pings else opened_at
        assert time.monotonic() - last < PING_INTERVAL + PING_TIMEOUT, f"no ping in time for the reference client; pings so far: {pings}"
        try:
            frame = ws.recv()
        except websocket.WebSocketTimeoutException:
            ws.send("3")
            continue
        if frame == "2":
            pings.append(time.monotonic())
            ws.send("3")
    assert_ping_due(pings[0] - opened_at, "open packet to first ping")
    for earlier, later in zip(pings, pings[1:]):
        assert_ping_due(later - earlier, "ping to ping")

    # Silent now: closed pingInterval + pingTimeout after the last pong, pingTimeout after the
    # unanswered ping. (No stray pongs here: Engine.IO pings carry no id, so a `3` sent while a
    # ping is out answers it.)
    last_pong = pings[-1]
    unanswered_ping = None
    closed_at = None
    while closed_at is None:
        assert time.monotonic() - last_pong < PING_INTERVAL + PING_TIMEOUT + WAIT, "the silent client was never closed"
        try:
            frame = ws.recv()
        except websocket.WebSocketTimeoutException:
            continue
        except (websocket.WebSocketConnectionClosedException, ConnectionError):
            closed_at = time.monotonic()
            break
        if frame == "2":
            unanswered_ping = time.monotonic()
        elif frame == "" or ws.connected is False:
            closed_at = time.monotonic()
    assert unanswered_ping is not None
    assert_ping_due(unanswered_ping - last_pong, "last pong to the unanswered ping")
    # Not before the client's pingTimeout for the unanswered ping has passed; how much later a
    # busy machine closes it is no client's concern.
    assert closed_at - unanswered_ping >= PING_TIMEOUT * (1 - TOLERANCE), \
        f"closed {closed_at - unanswered_ping:.3f} s after the unanswered ping, sooner than pingTimeout {PING_TIMEOUT} s"


def test_python_socketio_client_stays_connected_across_heartbeats(api, timed_node):
    """The unmodified client's own timer (pingInterval + pingTimeout without a ping) never fires."""
    account = api.register("steady")
    disconnects = []
    sio = socketio.Client(reconnection=False)
    sio.on("disconnect", lambda *args: disconnects.append(time.monotonic()))
    sio.connect(timed_node.url, auth={"token": account.token}, transports=["websocket"], wait_timeout=WAIT)
    try:
        # Four heartbeats and then some: the client's timer would have fired on any missed one.
        deadline = time.monotonic() + 4 * PING_INTERVAL + PING_TIMEOUT
        while time.monotonic() < deadline and not disconnects:
            time.sleep(0.1)
        assert not disconnects, "the client gave up on the server's pings"
        assert sio.call("room:leave", {"roomId": "r_none"}, timeout=WAIT) is not None
    finally:
        sio.disconnect()


# ---------------------------------------------------------------------------------------------
# Long-polling to WebSocket


def poll(node, sid=None, method="GET", body=None, timeout=WAIT):
    query = f"/socket.io/?EIO=4&transport=polling&t={time.monotonic_ns()}" + (f"&sid={sid}" if sid else "")
    request = urllib.request.Request(f"http://127.0.0.1:{node.port}{query}", method=method,
                                     data=body.encode() if body is not None else None)
    with urllib.request.urlopen(request, timeout=timeout) as response:
        return response.status, response.read().decode()


def test_pending_poll_is_released_with_a_noop_right_after_the_probe(api, node1):
    account = api.register("upgrader")
    status, opened = poll(node1)
    assert status == 200 and opened.startswith("0{")
    sid = json.loads(opened[1:])["sid"]
    assert poll(node1, sid, "POST", "40" + json.dumps({"token": account.token})) == (200, "ok")
    status, connected = poll(node1, sid)
    assert connected.startswith("40{"), connected

    # The poll the client keeps pending while it probes the WebSocket.
    pending = {}
    def long_poll():
        try:
            pending["result"] = poll(node1, sid, timeout=WAIT)
        except Exception as error:  # noqa: BLE001 - reported below
            pending["error"] = error
    poller = threading.Thread(target=long_poll, daemon=True)
    poller.start()

    ws = websocket.create_connection(ws_url(node1, f"&sid={sid}"), timeout=WAIT)
    try:
        ws.send("2probe")
        assert ws.recv() == "3probe"
        # engine.io-client sends the upgrade packet only once that poll has ended. Ended by the
        # probe, it carries a noop; left to the next heartbeat (node1's pingInterval is 25 s,
        # within this patience), it would carry the ping `2` instead.
        poller.join(timeout=WAIT)
        assert not poller.is_alive(), "the pending poll was not answered after the probe"
        assert "error" not in pending, pending
        assert pending["result"] == (200, "6")
        # A poll while the upgrade is pending ends at once with a noop too.
        assert poll(node1, sid) == (200, "6")
        ws.send("5")
        # The session lives on the WebSocket now: an event is answered there.
        ws.send('421["room:leave",{"roomId":"r_none"}]')
        reply = ws.recv()
        assert reply.startswith("431["), reply
    finally:
        ws.close()


# ---------------------------------------------------------------------------------------------
# One keep-alive connection, any request after any other


class RawHTTP:
    """One TCP connection speaking HTTP/1.1 by hand, then WebSocket frames after a 101."""

    def __init__(self, node):
        self.sock = socket.create_connection(("127.0.0.1", node.port), timeout=WAIT)
        self.buffer = b""

    def _read(self, count):
        while len(self.buffer) < count:
            chunk = self.sock.recv(65536)
            if not chunk:
                raise ConnectionError("connection closed")
            self.buffer += chunk
        data, self.buffer = self.buffer[:count], self.buffer[count:]
        return data

    def _read_until(self, marker):
        while marker not in self.buffer:
            chunk = self.sock.recv(65536)
            if not chunk:
                raise ConnectionError(f"connection closed; received {self.buffer!r}")
            self.buffer += chunk
        head, self.buffer = self.buffer.split(marker, 1)
        return head

    def request(self, method, path, body=b"", headers=()):
        lines = [f"{method} {path} HTTP/1.1", "Host: 127.0.0.1", f"Content-Length: {len(body)}", *headers]
        self.sock.sendall(("\r\n".join(lines) + "\r\n\r\n").encode() + body)
        head = self._read_until(b"\r\n\r\n").decode()
        status = int(head.split(" ", 2)[1])
        fields = {line.split(":", 1)[0].strip().lower(): line.split(":", 1)[1].strip() for line in head.split("\r\n")[1:]}
        if status == 101:
            return status, fields, b""
        return status, fields, self._read(int(fields.get("content-length", "0")))

    def upgrade(self, path):
        key = base64.b64encode(os.urandom(16)).decode()
        return self.request("GET", path, headers=(
            "Connection: Upgrade", "Upgrade: websocket", "Sec-WebSocket-Version: 13", f"Sec-WebSocket-Key: {key}"))

    def send_text(self, text):
        payload, mask = text.encode(), os.urandom(4)
        assert len(payload) < 126
        masked = bytes(byte ^ mask[index % 4] for index, byte in enumerate(payload))
        self.sock.sendall(bytes([0x81, 0x80 | len(payload)]) + mask + masked)

    def receive_text(self):
        first, second = self._read(2)
        length = second & 0x7F
        if length == 126:
            length = struct.unpack("!H", self._read(2))[0]
        elif length == 127:
            length = struct.unpack("!Q", self._read(8))[0]
        assert first & 0x0F == 0x1, f"opcode {first & 0x0F}"
        return self._read(length).decode()

    def close(self):
        self.sock.close()


def test_websocket_upgrade_after_a_rest_request_on_the_same_connection(node1):
    connection = RawHTTP(node1)
    try:
        status, _, body = connection.request("GET", "/readyz")
        assert status == 200, body
        status, fields, _ = connection.upgrade("/socket.io/?EIO=4&transport=websocket")
        assert status == 101 and fields["upgrade"].lower() == "websocket"
        assert connection.receive_text().startswith("0{")
    finally:
        connection.close()


def test_rest_polling_and_upgrade_share_one_keepalive_connection(api, node1):
    account = api.register("keepalive")
    connection = RawHTTP(node1)
    try:
        assert connection.request("GET", "/healthz")[0] == 200
        status, _, opened = connection.request("GET", "/socket.io/?EIO=4&transport=polling")
        assert status == 200 and opened.startswith(b"0{")
        sid = json.loads(opened[1:])["sid"]
        status, _, body = connection.request("POST", f"/socket.io/?EIO=4&transport=polling&sid={sid}",
                                             body=("40" + json.dumps({"token": account.token})).encode())
        assert (status, body) == (200, b"ok")
        status, _, body = connection.request("GET", f"/socket.io/?EIO=4&transport=polling&sid={sid}")
        assert status == 200 and body.startswith(b"40{"), body
        status, _, body = connection.request("GET", "/api/users/me", headers=(f"Authorization: Bearer {account.token}",))
        assert status == 200 and json.loads(body)["data"]["id"] == account.id
        status, _, _ = connection.upgrade(f"/socket.io/?EIO=4&transport=websocket&sid={sid}")
        assert status == 101
        connection.send_text("2probe")
        assert connection.receive_text() == "3probe"
        connection.send_text("5")
        connection.send_text('421["room:leave",{"roomId":"r_none"}]')
        assert connection.receive_text().startswith("431[")
    finally:
        connection.close()


def test_a_refused_upgrade_on_a_reused_connection_is_answered_and_closed(node1):
    connection = RawHTTP(node1)
    try:
        assert connection.request("GET", "/readyz")[0] == 200
        status, fields, body = connection.upgrade("/socket.io/?EIO=3&transport=websocket")
        assert status == 400 and json.loads(body) == {"code": 5, "message": "Unsupported protocol version"}
        connection.sock.settimeout(WAIT)
        assert connection.sock.recv(1) == b"", "the connection should close after refusing the upgrade"
    finally:
        connection.close()


def test_python_socketio_async_client_with_default_transports(api, node1):
    """aiohttp upgrades on the pooled connection its polling requests used."""
    alice, bob = api.register("async_alice"), api.register("async_bob")
    room = api.create_room(alice, other=bob)

    async def scenario():
        sio = socketio.AsyncClient(reconnection=False)
        created = asyncio.Event()
        sio.on("element:created", lambda payload: created.set())
        await sio.connect(node1.url, auth={"token": alice.token}, wait_timeout=WAIT)
        try:
            deadline = time.monotonic() + WAIT
            while sio.transport() != "websocket" and time.monotonic() < deadline:
                await asyncio.sleep(0.05)
            assert sio.transport() == "websocket"
            joined = await sio.call("room:join", {"roomId": room["id"]}, timeout=WAIT)
            assert joined["data"]["roomId"] == room["id"], joined
            element = {"type": "note", "positionX": 1, "positionY": 2, "width": 30, "height": 40, "content": "hi"}
            ack = await sio.call("element:create", {"roomId": room["id"], "element": element}, timeout=WAIT)
            assert ack["data"]["element"]["content"] == "hi", ack
            await asyncio.wait_for(created.wait(), WAIT)
        finally:
            await sio.disconnect()
        assert not sio.connected

    asyncio.run(scenario())


# ---------------------------------------------------------------------------------------------
# Binary packets


def test_binary_event_asking_for_an_ack_gets_an_error_ack(api, node1):
    account = api.register("binary")
    ws, _ = connect_websocket(node1, account.token)
    try:
        ws.send('451-0["message:send",{"_placeholder":true,"num":0}]')
        ws.send_binary(b"\x01\x02\x03")
        reply = ws.recv()
        assert reply.startswith("430["), reply
        error = json.loads(reply[3:])[0]["error"]
        assert error["code"] == "binary_not_supported" and error["message"], error
        # Without an ack: an error event that names the event.
        ws.send('451-["message:send",{"_placeholder":true,"num":0}]')
        ws.send_binary(b"\x04")
        event = json.loads(ws.recv()[2:])
        assert event[0] == "error" and event[1]["event"] == "message:send" and event[1]["code"] == "binary_not_supported"
        # The attachments were part of those refusals: the next answer is this event's.
        ws.send('421["room:leave",{"roomId":"r_none"}]')
        assert ws.recv().startswith("431[")
        # A binary frame that belongs to no packet cannot be decoded: it ends the connection, as
        # in the reference server (tests/e2e/test_reference_close_rules.py).
        ws.send_binary(b"\x05")
        opcode, data = ws.recv_data(control_frame=True)
        assert opcode == websocket.ABNF.OPCODE_CLOSE and struct.unpack("!H", data[:2])[0] == 1002, (opcode, data)
    finally:
        ws.close()
