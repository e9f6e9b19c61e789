"""Bad events get clear errors and the connection stays usable."""

import uuid

import pytest

from roomcast_e2e import ack_data, error_code


def assert_still_usable(pair):
    text = f"still here {uuid.uuid4().hex[:8]}"
    ack = pair.alice_socket.call("message:send", {"roomId": pair.room_id, "text": text})
    assert ack_data(ack)["message"]["text"] == text
    pair.bob_socket.wait_for("message:new", lambda payload: payload["message"]["text"] == text)
    assert pair.alice_socket.sio.connected
    return text


NOT_AN_OBJECT = [
    pytest.param("just a string", id="string"),
    pytest.param(["a", "list"], id="list"),
    pytest.param(42, id="number"),
    pytest.param(None, id="no payload"),
]


@pytest.mark.parametrize("payload", NOT_AN_OBJECT)
def test_non_object_payload_is_invalid(payload, pair):
    ack = pair.alice_socket.call("message:send", payload)
    assert error_code(ack) == "invalid_payload", ack
    assert_still_usable(pair)


@pytest.mark.parametrize("payload", NOT_AN_OBJECT[:3])
def test_non_object_join_is_invalid(payload, pair):
    assert error_code(pair.alice_socket.call("room:join", payload)) == "invalid_payload"
    assert_still_usable(pair)


WRONG_FIELDS = [
    pytest.param(lambda room: {"text": "no room"}, id="missing roomId"),
    pytest.param(lambda room: {"roomId": room}, id="missing text"),
    pytest.param(lambda room: {"roomId": 123, "text": "number as room"}, id="roomId not a string"),
    pytest.param(lambda room: {"roomId": room, "text": ["not", "text"]}, id="text not a string"),
    pytest.param(lambda room: {"roomId": room, "text": ""}, id="empty text"),
    pytest.param(lambda room: {"roomId": room, "text": "x" * 16001}, id="text over 16000 bytes"),
    pytest.param(lambda room: {"roomId": room, "text": "a" + "\u0301" * 8000}, id="one character of 16001 bytes"),
]


@pytest.mark.parametrize("make", WRONG_FIELDS)
def test_wrong_fields_are_invalid(make, pair):
    ack = pair.alice_socket.call("message:send", make(pair.room_id))
    assert error_code(ack) == "invalid_payload", ack
    pair.bob_socket.assert_no("message:new", within=0.2)
    # Room events arrive in order: once the next message is in, nothing else came before it
    # (however slow the machine was above).
    text = assert_still_usable(pair)
    assert [payload["message"]["text"] for payload in pair.bob_socket.received("message:new")] == [text]


def test_error_without_ack_comes_as_error_event(pair):
    pair.alice_socket.emit("message:send", "just a string")
    error = pair.alice_socket.wait_for("error")
    assert error["code"] == "invalid_payload", error
    assert isinstance(error["message"], str) and error["message"], error
    assert error["event"] == "message:send", error
    assert_still_usable(pair)


def test_unknown_event_with_ack(pair):
    ack = pair.alice_socket.call("room:dance", {"roomId": pair.room_id})
    assert error_code(ack) == "unknown_event", ack
    assert_still_usable(pair)


def test_unknown_event_without_ack(pair):
    pair.alice_socket.emit("room:dance", {"roomId": pair.room_id})
    error = pair.alice_socket.wait_for("error")
    assert error["code"] == "unknown_event", error
    assert isinstance(error["message"], str) and error["message"], error
    assert error["event"] == "room:dance", error
    assert_still_usable(pair)


def test_join_unknown_room_is_not_found(pair):
    missing = uuid.uuid4().hex
    assert error_code(pair.alice_socket.call("room:join", {"roomId": missing})) == "not_found"
    assert_still_usable(pair)


def test_outsider_cannot_join_send_or_listen(pair, api, connect, node1, node2):
    carol = api.register("carol")
    # On node 2 Bob's socket makes the node subscribe to the room: it must still not forward
    # the room's events to Carol. On node 1 likewise with Alice.
    outsiders = [connect(node1, carol, name="carol@node1"), connect(node2, carol, name="carol@node2")]
    for outsider in outsiders:
        assert error_code(outsider.call("room:join", {"roomId": pair.room_id})) == "forbidden"
        assert error_code(outsider.call("message:send", {"roomId": pair.room_id, "text": "let me in"})) == "forbidden"

    text = f"members only {uuid.uuid4().hex[:8]}"
    pair.alice_socket.call("message:send", {"roomId": pair.room_id, "text": text})
    pair.bob_socket.wait_for("message:new", lambda payload: payload["message"]["text"] == text)
    pair.alice_socket.wait_for("message:new", lambda payload: payload["message"]["text"] == text)
    for outsider in outsiders:
        outsider.assert_no("message:new", within=0.5)
    for member in (pair.alice_socket, pair.bob_socket):
        member.assert_no("message:new", lambda payload: payload["message"]["text"] == "let me in", within=0.1)
