"""Rooms over REST, and `room:created` to the other participants' sockets on any node."""

import time

from roomcast_e2e import ISO_MS_UTC


def is_room(room_id):
    return lambda payload: isinstance(payload, dict) and isinstance(payload.get("room"), dict) \
        and payload["room"].get("id") == room_id


def test_room_created_reaches_the_other_participant_on_every_device(api, connect, node1, node2):
    alice = api.register("alice")
    bob = api.register("bob")
    dave = api.register("dave")
    bob_phone = connect(node2, bob, name="bob@node2")
    bob_tablet = connect(node1, bob, name="bob@node1")
    bystanders = [connect(node1, dave, name="dave@node1"), connect(node2, dave, name="dave@node2")]

    room = api.create_room(alice, other=bob, name="Weekend")

    for device in (bob_phone, bob_tablet):
        event = device.wait_for("room:created", is_room(room["id"]))
        assert event["room"]["name"] == "Weekend"
        assert event["room"]["createdBy"] == alice.id
        assert {user["id"] for user in event["room"]["participants"]} == {alice.id, bob.id}
    for bystander in bystanders:
        bystander.assert_no("room:created", within=0.5)


def test_group_room_created_reaches_each_other_participant(api, connect, node1, node2):
    alice = api.register("alice")
    bob = api.register("bob")
    carol = api.register("carol")
    bob_socket = connect(node1, bob)
    carol_socket = connect(node2, carol)

    room = api.create_room(alice, participants=[bob, carol])

    for socket_client in (bob_socket, carol_socket):
        event = socket_client.wait_for("room:created", is_room(room["id"]))
        assert {user["id"] for user in event["room"]["participants"]} == {alice.id, bob.id, carol.id}


def test_room_shape(api):
    alice = api.register("alice")
    bob = api.register("bob")
    room = api.create_room(alice, other=bob, name="Shape")
    assert room["name"] == "Shape"
    assert room["createdBy"] == alice.id
    assert room["isActive"] in (True, False)
    assert room["elementCount"] == 0
    assert ISO_MS_UTC.match(room["createdAt"]) and ISO_MS_UTC.match(room["updatedAt"]), room
    participants = {user["id"]: user for user in room["participants"]}
    assert set(participants) == {alice.id, bob.id}
    assert participants[bob.id]["username"] == bob.username
    assert "password" not in str(room).lower() and "hash" not in str(room).lower(), room


def test_room_is_readable_by_participants_only(api, api2):
    alice = api.register("alice")
    bob = api.register("bob")
    eve = api.register("eve")
    room = api.create_room(alice, other=bob)

    fetched = api2.request("GET", f"/api/rooms/{room['id']}", token=bob.token)
    assert fetched.status_code == 200, fetched.text
    assert fetched.json()["data"]["id"] == room["id"]

    refused = api2.request("GET", f"/api/rooms/{room['id']}", token=eve.token)
    assert refused.status_code == 403, refused.text
    assert refused.json()["error"]["code"] == "forbidden"


def test_room_with_unknown_user_is_not_found(api):
    alice = api.register("alice")
    response = api.request("POST", "/api/rooms", token=alice.token, json_body={"otherUserId": "nobody0123456789"})
    assert response.status_code == 404, response.text
    assert response.json()["error"]["code"] == "not_found"


def test_username_taken_in_any_case_is_a_conflict(api):
    alice = api.register("alice")
    response = api.request("POST", "/api/auth/register",
                           json_body={"username": alice.username.upper(), "password": "another-password"})
    assert response.status_code == 409, response.text
    assert response.json()["error"]["code"] == "conflict"


def test_login_returns_a_working_token(api, api2):
    alice = api.register("alice")
    response = api2.request("POST", "/api/auth/login", json_body={"username": alice.username, "password": alice.password})
    assert response.status_code == 200, response.text
    token = response.json()["data"]["token"]
    me = api.request("GET", "/api/users/me", token=token)
    assert me.status_code == 200 and me.json()["data"]["id"] == alice.id, me.text

    wrong = api2.request("POST", "/api/auth/login", json_body={"username": alice.username, "password": "wrong-password"})
    assert wrong.status_code == 401, wrong.text
    assert wrong.json()["error"]["code"] == "unauthorized"


def test_grouped_by_person_and_rename(api, api2, connect, node2):
    alice = api.register("alice")
    bob = api.register("bob")
    carol = api.register("carol")
    bob_socket = connect(node2, bob)
    pair = api.create_room(alice, other=bob)
    group = api2.create_room(carol, participants=[alice, bob])
    time.sleep(0.01)  # timestamps are milliseconds: the rename is strictly newer than the group

    renamed = api.request("PUT", f"/api/rooms/{pair['id']}/name", token=alice.token, json_body={"name": "Italian engagement 2025"})
    assert renamed.status_code == 200, renamed.text
    room = renamed.json()["data"]
    assert room["name"] == "Italian engagement 2025" and room["id"] == pair["id"], room
    assert room["updatedAt"] >= pair["updatedAt"], room
    event = bob_socket.wait_for("room:updated", is_room(pair["id"]))
    assert event["room"] == room

    grouped = api2.request("GET", "/api/rooms/grouped-by-person", token=alice.token)
    assert grouped.status_code == 200, grouped.text
    people = grouped.json()["data"]
    # Bob's newest room was just renamed: he comes before Carol, whose only room is older.
    assert [person["id"] for person in people] == [bob.id, carol.id], people
    assert people[0]["username"] == bob.username
    assert [entry["id"] for entry in people[0]["rooms"]] == [pair["id"], group["id"]], people[0]
    assert [entry["id"] for entry in people[1]["rooms"]] == [group["id"]], people[1]
    summary = people[0]["rooms"][0]
    assert set(summary) == {"id", "name", "createdAt", "updatedAt", "isActive", "elementCount"}, summary
    assert summary["name"] == "Italian engagement 2025" and summary["updatedAt"] == room["updatedAt"]
    assert people[0]["rooms"][1]["name"] is None

    cleared = api2.request("PUT", f"/api/rooms/{pair['id']}/name", token=bob.token, json_body={"name": ""})
    assert cleared.status_code == 200 and cleared.json()["data"]["name"] is None, cleared.text
    too_long = api.request("PUT", f"/api/rooms/{pair['id']}/name", token=alice.token, json_body={"name": "x" * 101})
    assert too_long.status_code == 400 and too_long.json()["error"]["code"] == "invalid_payload", too_long.text
