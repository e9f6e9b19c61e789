"""Recovery by offset with the unmodified python-socketio client: a client that reconnects to the
other node rejoins with the last offset it saw and gets exactly the room events it missed."""

from roomcast_e2e import ack_data, offset_key

NOTE = {"type": "note", "positionX": 1, "positionY": 2, "width": 100, "height": 80, "content": "hi"}


def test_rejoin_with_since_replays_what_was_missed(api, connect, node1, node2):
    alice = api.register("alice")
    bob = api.register("bob")
    room = api.create_room(alice, other=bob)["id"]
    bob_socket = connect(node2, bob)
    assert ack_data(bob_socket.call("room:join", {"roomId": room}))["recovered"] is False

    first = connect(node1, alice)
    first.call("room:join", {"roomId": room})
    batch = first.wait_for("elements:batch")
    last_seen = batch["offset"]
    first.disconnect()

    created = [ack_data(bob_socket.call("element:create", {"roomId": room, "element": NOTE}))["element"]["id"]
               for _ in range(3)]
    bob_socket.call("message:send", {"roomId": room, "text": "while you were away"})
    for element_id in created:
        bob_socket.wait_for("element:created", lambda p, i=element_id: p["element"]["id"] == i)

    second = connect(node2, alice, name="alice again")
    assert second.call("room:join", {"roomId": room, "since": last_seen}) == \
        {"data": {"roomId": room, "recovered": True}}
    replayed = [second.wait_for("element:created", lambda p, i=element_id: p["element"]["id"] == i)
                for element_id in created]
    offsets = [offset_key(event["offset"]) for event in replayed]
    assert offsets == sorted(offsets) and all(offset > offset_key(last_seen) for offset in offsets)
    second.wait_for("message:new", lambda p: p["message"]["text"] == "while you were away")
    second.assert_no("elements:batch")
    assert len(second.received("element:created")) == 3, "each missed event exactly once"


def test_unknown_offset_gets_a_snapshot(api, connect, node1):
    alice = api.register("alice")
    bob = api.register("bob")
    room = api.create_room(alice, other=bob)["id"]
    socket = connect(node1, alice)
    socket.call("element:create", {"roomId": room, "element": NOTE})
    assert socket.call("room:join", {"roomId": room, "since": "not-an-offset"}) == \
        {"data": {"roomId": room, "recovered": False}}
    assert len(socket.wait_for("elements:batch")["elements"]) == 1
