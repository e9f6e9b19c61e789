"""The iOS quickstart (docs/clients/ios.md) on the wire: the frames Socket.IO-Client-Swift v16 sends
with the options the quickstart documents, replayed against a node, since the library cannot run
here.

What the library sends, from its source (socketio/socket.io-client-swift, v16):
- `SocketEngine.createURLs`: `/socket.io/?transport=websocket&EIO=4` (connectParams, if any,
  between the two), and `?transport=polling&b64=1&EIO=4` for long-polling; `&sid=` is appended
  for the upgrade's WebSocket and the polls;
- `SocketManager.connectSocket`: the CONNECT always names the namespace, `0/,{"token":…}` (the
  payload of `connect(withPayload:)`, serialised by JSONSerialization), sent again as it is on
  every automatic reconnect;
- `SocketPacket`: events `42<ack id>["name",{…}]` without a namespace for `/`; ack ids count
  from 0 per socket and go on across reconnects;
- `SocketManager.disconnectSocket`: `41/,`;
- `SocketEngine` with `version .three`: answers the server's `2` with `3` and sends no pings;
  without `.forceWebsockets(true)` it probes the WebSocket (`2probe`), on `3probe` POSTs a noop
  (`6`), and sends `5` on the WebSocket once its pending poll has returned.
"""

import json
import os
import re
import threading
import time

import requests
import websocket

from roomcast_e2e import WAIT, jwt_sign

REPOSITORY = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
QUICKSTART = os.path.join(REPOSITORY, "docs", "clients", "ios.md")
REPLAY_MARKER = "<!-- replayed by tests/e2e/test_socketio_client_swift.py -->"


def documented_configuration():
    """The `SocketIOClientOption`s of the quickstart's configuration block, by name."""
    with open(QUICKSTART, encoding="utf-8") as handle:
        text = handle.read()
    assert REPLAY_MARKER in text, f"{QUICKSTART} no longer marks the configuration this test replays"
    block = text.split(REPLAY_MARKER, 1)[1].split("```swift", 1)[1].split("```", 1)[0]
    config = block.split("config:", 1)[1]
    return dict(re.findall(r"\.(\w+)\(([^)]*)\)", config)), text


def test_the_replay_follows_the_documented_configuration():
    """If the quickstart's options change, the replay below must change with them."""
    options, text = documented_configuration()
    assert options.get("forceWebsockets") == "true", options
    assert options.get("reconnects") == "true", options
    # Nothing that changes the URL, the headers or the protocol version of the replay.
    for changing in ("connectParams", "extraHeaders", "version", "path", "forcePolling", "compress"):
        assert changing not in options, f".{changing} in the documented configuration: replay it too"
    assert 'socket.connect(withPayload: ["token": ' in text
    assert 'emitWithAck("room:join", payload)' in text and 'payload["since"] = since' in text
    assert 'emitWithAck("auth:refresh", ["token": token])' in text


def swift_json(value):
    """JSON as Foundation's JSONSerialization writes it: no spaces, `/` escaped."""
    return json.dumps(value, separators=(",", ":")).replace("/", "\\/")


class SwiftSocket:
    """One engine of the library over a WebSocket: it answers pings as the library does and
    keeps every packet it received, in order."""

    def __init__(self, node, sid=None, connect_params=""):
        """`connect_params`: `&key=value…`, placed as the library places `.connectParams`."""
        query = "transport=websocket" + connect_params + "&EIO=4" + (f"&sid={sid}" if sid else "")
        self.ws = websocket.create_connection(f"ws://127.0.0.1:{node.port}/socket.io/?{query}", timeout=WAIT)
        self.received = []
        self.next_ack = 0

    def open(self):
        opened = self.next()
        assert opened.startswith("0{"), opened
        return json.loads(opened[1:])

    def next(self):
        """The next Engine.IO packet; a ping is answered with a pong on the way, as the library does."""
        while True:
            frame = self.ws.recv()
            if frame == "2":
                self.ws.send("3")
                continue
            self.received.append(frame)
            return frame

    def connect(self, token):
        self.ws.send("40/," + swift_json({"token": token}))
        answer = self.next()
        assert answer.startswith("40{"), answer
        return json.loads(answer[2:])

    def emit_with_ack(self, event, payload):
        """`emitWithAck(event, payload)`; returns (the ack's argument, the events that came before it)."""
        ack = self.next_ack
        self.next_ack += 1
        self.ws.send(f"42{ack}" + swift_json([event, payload]))
        before = []
        deadline = time.monotonic() + WAIT
        while time.monotonic() < deadline:
            packet = self.next()
            if packet.startswith(f"43{ack}["):
                return json.loads(packet[len(f"43{ack}"):])[0], before
            if packet.startswith("42["):
                before.append(json.loads(packet[2:]))
        raise AssertionError(f"no ack {ack} for {event}: {self.received}")

    def event(self, name):
        """Waits for server event `name`; returns its payload."""
        deadline = time.monotonic() + WAIT
        while time.monotonic() < deadline:
            packet = self.next()
            if packet.startswith("42["):
                decoded = json.loads(packet[2:])
                if decoded[0] == name:
                    return decoded[1]
        raise AssertionError(f"no {name}: {self.received}")

    def close(self):
        self.ws.close()


def create_note(api, account, room_id, content):
    response = api.request("POST", f"/api/rooms/{room_id}/elements", token=account.token, json_body={
        "type": "note", "positionX": 40, "positionY": 80, "width": 200, "height": 120, "content": content})
    assert response.status_code == 201, response.text
    return response.json()["data"]


def test_websocket_session_join_refresh_and_recovery(api, node1, node2):
    """`.forceWebsockets(true)`: connect with the token in the CONNECT payload, join, receive a
    change, refresh the token, leave (`41/,`), reconnect to another node with the same payload,
    and recover by offset."""
    alice, bob = api.register("swift"), api.register("bob")
    room = api.create_room(alice, other=bob)["id"]
    offsets = {}

    socket = SwiftSocket(node1)
    handshake = socket.open()
    assert handshake["upgrades"] == [] and handshake["pingInterval"] and handshake["maxPayload"]
    socket.connect(alice.token)

    joined, before = socket.emit_with_ack("room:join", {"roomId": room})
    assert joined == {"data": {"roomId": room, "recovered": False}}, joined
    assert before and before[0][0] == "elements:batch" and before[0][1]["elements"] == [], before
    offsets[room] = before[0][1]["offset"]

    note = create_note(api, bob, room, "from Bob")
    created = socket.event("element:created")
    assert created["element"]["id"] == note["id"]
    offsets[room] = created["offset"]

    fresh = jwt_sign({"sub": alice.id, "iat": int(time.time()), "exp": int(time.time()) + 3600})
    refreshed, _ = socket.emit_with_ack("auth:refresh", {"token": fresh})
    assert set(refreshed["data"]) == {"expiresAt"}, refreshed

    # `socket.disconnect()`, then the transport goes; meanwhile Bob adds another note.
    socket.ws.send("41/,")
    socket.close()
    missed = create_note(api, bob, room, "while Alice was away")

    # The library's reconnect: a new engine (here on the other node), the same CONNECT payload,
    # and the quickstart's rejoin with the last offset; ack ids go on counting.
    again = SwiftSocket(node2)
    again.next_ack = socket.next_ack
    again.open()
    again.connect(alice.token)
    rejoined, replayed = again.emit_with_ack("room:join", {"roomId": room, "since": offsets[room]})
    assert rejoined == {"data": {"roomId": room, "recovered": True}}, rejoined
    names = [name for name, _ in replayed]
    assert "elements:batch" not in names, names
    replayed_ids = [payload["element"]["id"] for name, payload in replayed if name == "element:created"]
    assert replayed_ids == [missed["id"]], replayed
    again.close()


def test_the_token_in_connect_params_with_an_empty_connect(api, node1):
    """The quickstart's alternative, `.connectParams(["token": jwt])` with `connect()`: the token
    in the query between `transport` and `EIO`, and the CONNECT `40/,` with no payload."""
    alice = api.register("swift")
    socket = SwiftSocket(node1, connect_params=f"&token={alice.token}")
    socket.open()
    socket.ws.send("40/,")
    assert socket.next().startswith("40{"), socket.received
    left, _ = socket.emit_with_ack("room:leave", {"roomId": "r_none"})
    assert left == {"data": {"roomId": "r_none"}}, left
    socket.close()


def test_an_expired_payload_token_is_refused_and_a_fresh_one_connects(api, node1):
    """The library resends the token of `connect(withPayload:)` on every reconnect; once it has
    expired the CONNECT is refused `token_expired` (the `.error` handler's cue) on the same
    transport, and `connect(withPayload:)` with a fresh token connects."""
    alice = api.register("swift")
    expired = jwt_sign({"sub": alice.id, "iat": int(time.time()) - 120, "exp": int(time.time()) - 60})
    socket = SwiftSocket(node1)
    socket.open()
    socket.ws.send("40/," + swift_json({"token": expired}))
    refusal = socket.next()
    assert refusal.startswith("44"), refusal
    body = json.loads(refusal[2:])
    assert body["data"]["code"] == "token_expired" and body["message"], body
    socket.connect(alice.token)
    left, _ = socket.emit_with_ack("room:leave", {"roomId": "r_none"})
    assert left == {"data": {"roomId": "r_none"}}, left
    socket.close()


def test_a_socket_left_to_expire_is_told_and_ended(api, node1):
    """No `auth:refresh`: `auth:expiring` comes at once (the token has less than a minute left),
    then at `exp` the `error` event the `.error` handler reads, `41`, and a normal close."""
    alice = api.register("swift")
    expires = int(time.time()) + 3
    short = jwt_sign({"sub": alice.id, "iat": int(time.time()), "exp": expires})
    socket = SwiftSocket(node1)
    socket.open()
    socket.connect(short)
    assert socket.event("auth:expiring")["expiresAt"]
    error = socket.event("error")
    assert error["code"] == "token_expired" and error["event"] is None, error
    assert socket.next() == "41"
    opcode, data = socket.ws.recv_data(control_frame=True)
    assert opcode == websocket.ABNF.OPCODE_CLOSE, (opcode, data)
    assert int.from_bytes(data[:2], "big") == 1000, data
    socket.close()


def test_long_polling_then_upgrade_as_the_library_does_it(api, node1):
    """Without `.forceWebsockets(true)`: the polling handshake with `b64=1`, the CONNECT POSTed,
    the probe on a WebSocket with the sid, the noop POSTed after `3probe`, `5` once the pending
    poll has returned, then events on the WebSocket."""
    alice = api.register("swift")
    base = f"http://127.0.0.1:{node1.port}/socket.io/?transport=polling&b64=1&EIO=4"
    opened = requests.get(base, timeout=WAIT)
    assert opened.status_code == 200 and opened.text.startswith("0{"), opened.text
    handshake = json.loads(opened.text[1:])
    assert handshake["upgrades"] == ["websocket"]
    sid = handshake["sid"]
    polling = f"{base}&sid={sid}"
    posted = requests.post(polling, data="40/," + swift_json({"token": alice.token}),
                           headers={"Content-Type": "text/plain; charset=UTF-8"}, timeout=WAIT)
    assert posted.status_code == 200, posted.text
    connected = requests.get(polling, timeout=WAIT)
    assert connected.text.startswith("40{"), connected.text

    # The library's next poll is pending while it probes.
    pending = {}
    poller = threading.Thread(target=lambda: pending.update(answer=requests.get(polling, timeout=WAIT)), daemon=True)
    poller.start()
    upgrade = SwiftSocket(node1, sid=sid)
    upgrade.ws.send("2probe")
    assert upgrade.ws.recv() == "3probe"
    noop = requests.post(polling, data="6", headers={"Content-Type": "text/plain; charset=UTF-8"}, timeout=WAIT)
    assert noop.status_code == 200, noop.text
    poller.join(timeout=WAIT)
    assert pending["answer"].status_code == 200 and pending["answer"].text == "6", pending["answer"].text
    upgrade.ws.send("5")

    left, _ = upgrade.emit_with_ack("room:leave", {"roomId": "r_none"})
    assert left == {"data": {"roomId": "r_none"}}, left
    upgrade.close()
