"""A socket's token over the connection's life: warned of (`auth:expiring`) before it expires,
closed with `token_expired` when it expires (not at the next ping), and renewed on the live
connection with `auth:refresh` (the same user only), the new expiry replacing the old.

The node pings rarely (every 120 s), so that a close at the next ping, as it used to be, would
miss every bound here. Waits are on the token's own clock (its `exp` second), never on the
machine's speed.
"""

import json
import time

import pytest
import websocket

from roomcast_e2e import GatewayNode, WAIT, ISO_MS_UTC, jwt_claims, jwt_sign

WARNING_SECONDS = 2


@pytest.fixture(scope="module")
def expiring_node(roomcast_binary, redis_server):
    node = GatewayNode("expiring", roomcast_binary, redis_server.url, log_directory=redis_server.directory, settings={
        "ROOMCAST_AUTH_EXPIRY_WARNING_MS": str(WARNING_SECONDS * 1000),
        "ROOMCAST_ENGINEIO_PING_INTERVAL_MS": "120000",
        "ROOMCAST_ENGINEIO_PING_TIMEOUT_MS": "60000",
    })
    try:
        yield node
    finally:
        node.stop()


def token_for(account, seconds):
    """A token of `account`'s user valid for `seconds` more, and its `exp`."""
    expires = int(time.time()) + seconds
    return jwt_sign({"sub": jwt_claims(account.token)["sub"], "iat": int(time.time()), "exp": expires}), expires


def iso(seconds):
    return time.strftime("%Y-%m-%dT%H:%M:%S.000Z", time.gmtime(seconds))


class Socket:
    """A raw Engine.IO WebSocket with Socket.IO connected, reading frames in order."""

    def __init__(self, node, token):
        self.ws = websocket.create_connection(f"ws://127.0.0.1:{node.port}/socket.io/?EIO=4&transport=websocket", timeout=WAIT)
        assert self.ws.recv().startswith("0{")
        self.ws.send("40" + json.dumps({"token": token}))
        connected = self.ws.recv()
        assert connected.startswith("40{"), connected
        self.next_ack = 1

    def frame(self):
        """The next text frame but pings, or None once the server closed."""
        while True:
            try:
                opcode, data = self.ws.recv_data(control_frame=True)
            except (websocket.WebSocketConnectionClosedException, ConnectionError):
                return None
            if opcode == websocket.ABNF.OPCODE_CLOSE:
                return None
            if data != b"2":
                return data.decode()

    def call(self, event, payload):
        ack_id = self.next_ack
        self.next_ack += 1
        self.ws.send(f"42{ack_id}" + json.dumps([event, payload]))
        while True:
            frame = self.frame()
            assert frame is not None, f"closed while waiting for the ack of {event}"
            if frame.startswith(f"43{ack_id}["):
                return json.loads(frame[2 + len(str(ack_id)):])[0]

    def close(self):
        self.ws.close()


def events(frames):
    return [json.loads(frame[2:]) for frame in frames if frame.startswith("42[")]


def frames_until_closed(socket):
    frames = []
    while (frame := socket.frame()) is not None:
        frames.append(frame)
    return frames


def test_a_token_is_warned_of_then_the_socket_closes_when_it_expires(api, expiring_node):
    token, expires = token_for(api.register("lapsing"), WARNING_SECONDS + 3)
    socket = Socket(expiring_node, token)
    frames = frames_until_closed(socket)
    closed_at = time.time()
    received = events(frames)
    assert received[0] == ["auth:expiring", {"expiresAt": iso(expires)}], frames
    assert ISO_MS_UTC.match(received[0][1]["expiresAt"])
    assert received[-1][0] == "error" and received[-1][1]["code"] == "token_expired", frames
    assert frames[-1] == "41", frames
    assert closed_at >= expires, "closed before the token expired"
    # Not at the next ping (120 s away): at the expiry, whatever the machine's delays.
    assert closed_at < expires + WAIT


def test_refresh_keeps_the_socket_past_the_old_expiry(api, expiring_node):
    account = api.register("refreshed")
    token, expires = token_for(account, WARNING_SECONDS + 3)
    socket = Socket(expiring_node, token)
    try:
        warning = socket.frame()
        assert warning is not None and warning.startswith('42["auth:expiring"'), warning
        longer, longer_expires = token_for(account, 3600)
        ack = socket.call("auth:refresh", {"token": longer})
        assert ack == {"data": {"expiresAt": iso(longer_expires)}}, ack
        while time.time() < expires + 1:
            time.sleep(expires + 1 - time.time())
        # Past the first token's expiry the socket still answers, and nothing else came.
        assert "data" in socket.call("room:leave", {"roomId": "r_none"})
    finally:
        socket.close()


def test_a_sooner_expiry_replaces_a_later_one(api, expiring_node):
    account = api.register("shortened")
    socket = Socket(expiring_node, account.token)
    shorter, expires = token_for(account, WARNING_SECONDS + 2)
    ack = socket.call("auth:refresh", {"token": shorter})
    assert ack == {"data": {"expiresAt": iso(expires)}}, ack
    frames = frames_until_closed(socket)
    assert [event[0] for event in events(frames)] == ["auth:expiring", "error"], frames
    assert time.time() >= expires


def test_refresh_refuses_another_users_or_a_bad_token_and_the_socket_stays(api, expiring_node):
    account = api.register("owner")
    socket = Socket(expiring_node, account.token)
    try:
        someone_else = api.register("intruder")
        assert socket.call("auth:refresh", {"token": someone_else.token})["error"]["code"] == "forbidden"
        expired = jwt_sign({"sub": jwt_claims(account.token)["sub"], "exp": int(time.time()) - 10})
        assert socket.call("auth:refresh", {"token": expired})["error"]["code"] == "token_expired"
        assert socket.call("auth:refresh", {"token": "not.a.token"})["error"]["code"] == "unauthorized"
        assert socket.call("auth:refresh", {"nothing": 1})["error"]["code"] == "invalid_payload"
        assert "data" in socket.call("room:leave", {"roomId": "r_none"})
    finally:
        socket.close()
