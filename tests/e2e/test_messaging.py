"""Room join and chat messages across two gateway nodes sharing one Redis."""

import uuid

from roomcast_e2e import ISO_MS_UTC, ack_data, offset_key


def unique_text(label):
    return f"{label} {uuid.uuid4().hex[:8]}"


def with_text(text):
    return lambda payload: isinstance(payload, dict) and isinstance(payload.get("message"), dict) \
        and payload["message"].get("text") == text


def test_join_ack_is_the_room_id(api, connect, node1):
    alice = api.register("alice")
    bob = api.register("bob")
    room = api.create_room(alice, other=bob)
    socket = connect(node1, alice)
    assert socket.call("room:join", {"roomId": room["id"]}) == {"data": {"roomId": room["id"], "recovered": False}}
    # Joining again is harmless and acknowledged the same way.
    assert ack_data(socket.call("room:join", {"roomId": room["id"]}))["roomId"] == room["id"]
    assert socket.call("room:leave", {"roomId": room["id"]}) == {"data": {"roomId": room["id"]}}


def test_message_crosses_nodes_both_ways(pair):
    first = unique_text("hello from node 1")
    pair.alice_socket.call("message:send", {"roomId": pair.room_id, "text": first})

    event = pair.bob_socket.wait_for("message:new", with_text(first))
    assert event["roomId"] == pair.room_id
    assert event["message"]["roomId"] == pair.room_id
    assert event["message"]["userId"] == pair.alice.id
    assert event["message"]["user"]["username"] == pair.alice.username
    first_offset = offset_key(event["offset"])

    second = unique_text("hello back from node 2")
    pair.bob_socket.call("message:send", {"roomId": pair.room_id, "text": second})

    event = pair.alice_socket.wait_for("message:new", with_text(second))
    assert event["roomId"] == pair.room_id
    assert event["message"]["user"]["username"] == pair.bob.username
    assert event["message"]["userId"] == pair.bob.id
    assert offset_key(event["offset"]) > first_offset, "offsets of one room must increase"


def test_sender_gets_its_own_message_too(pair):
    text = unique_text("echo")
    ack = pair.alice_socket.call("message:send", {"roomId": pair.room_id, "text": text})
    event = pair.alice_socket.wait_for("message:new", with_text(text))
    assert event["message"]["id"] == ack_data(ack)["message"]["id"]


def test_send_ack_carries_the_stored_message(pair):
    text = unique_text("ack round trip")
    ack = pair.alice_socket.call("message:send", {"roomId": pair.room_id, "text": text})

    assert set(ack) == {"data"}, ack
    assert set(ack["data"]) == {"message"}, ack
    message = ack["data"]["message"]
    assert message["text"] == text
    assert message["roomId"] == pair.room_id
    assert message["userId"] == pair.alice.id
    assert isinstance(message["id"], str) and message["id"]
    assert ISO_MS_UTC.match(message["createdAt"]), message["createdAt"]
    assert message["user"]["id"] == pair.alice.id
    assert message["user"]["username"] == pair.alice.username

    # The other node delivers the same message.
    event = pair.bob_socket.wait_for("message:new", with_text(text))
    assert event["message"]["id"] == message["id"]
    assert event["message"]["createdAt"] == message["createdAt"]


def test_messages_arrive_in_order_with_increasing_offsets(pair):
    texts = [unique_text(f"burst {index}") for index in range(10)]
    for text in texts:
        pair.alice_socket.call("message:send", {"roomId": pair.room_id, "text": text})
    pair.bob_socket.wait_for("message:new", with_text(texts[-1]))

    events = pair.bob_socket.received("message:new", lambda payload: payload["message"]["text"] in texts)
    assert [event["message"]["text"] for event in events] == texts
    offsets = [offset_key(event["offset"]) for event in events]
    assert offsets == sorted(offsets) and len(set(offsets)) == len(offsets), offsets


def test_longest_message_is_accepted(pair):
    text = "x" * 3992 + uuid.uuid4().hex[:8]
    assert len(text) == 4000
    ack = pair.alice_socket.call("message:send", {"roomId": pair.room_id, "text": text})
    assert ack_data(ack)["message"]["text"] == text
    pair.bob_socket.wait_for("message:new", with_text(text))


def test_left_room_receives_nothing_more(pair):
    assert pair.bob_socket.call("room:leave", {"roomId": pair.room_id}) == {"data": {"roomId": pair.room_id}}
    text = unique_text("after leave")
    pair.alice_socket.call("message:send", {"roomId": pair.room_id, "text": text})
    pair.alice_socket.wait_for("message:new", with_text(text))
    pair.bob_socket.assert_no("message:new", with_text(text), within=0.5)
