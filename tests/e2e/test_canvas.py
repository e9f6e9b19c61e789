"""Elements and z-order across two gateway nodes, driven by the unmodified python-socketio client
(docs/clients/events.md)."""

import time

from roomcast_e2e import ISO_MS_UTC, ack_data, error_code, fence, offset_key, redis_cli

ELEMENT_KEYS = {
    "id", "roomId", "type", "positionX", "positionY", "width", "height", "rotation", "scaleX", "scaleY",
    "zIndex", "createdBy", "createdAt", "creator", "reactions",
}
ROOM_EVENTS = (
    "element:created", "element:updated", "element:transformed", "element:z-index-changed",
    "element:deleted", "room:cleared",
)


def for_element(element_id):
    return lambda payload: payload.get("elementId") == element_id or payload.get("element", {}).get("id") == element_id


def for_room(room_id):
    return lambda payload: payload["roomId"] == room_id


def element_count(api, account, room_id):
    response = api.request("GET", f"/api/rooms/{room_id}", token=account.token)
    assert response.status_code == 200, response.text
    return response.json()["data"]["elementCount"]


def rest_elements(api, account, room_id):
    response = api.request("GET", f"/api/rooms/{room_id}/elements", token=account.token)
    assert response.status_code == 200, response.text
    body = response.json()
    assert set(body) == {"data"}, body
    return body["data"]


def room_events(socket_client, room_id):
    """Every room event this client received for the room, in arrival order, as (name, payload)."""
    with socket_client._condition:
        return [(name, payload) for name, payload in socket_client._events
                if name in ROOM_EVENTS and isinstance(payload, dict) and payload.get("roomId") == room_id]


def test_canvas_session_across_nodes(api, api2, connect, node1, node2):
    alice = api.register("alice")
    bob = api.register("bob")
    room = api.create_room(alice, other=bob)
    room_id = room["id"]
    elements_path = f"/api/rooms/{room_id}/elements"
    assert rest_elements(api, alice, room_id) == []
    assert element_count(api2, bob, room_id) == 0

    # A photo made over REST (node 2) before anyone joins.
    response = api2.request("POST", elements_path, token=bob.token, json_body={
        "type": "photo", "positionX": 5, "positionY": 6, "width": 300, "height": 200,
        "imageUrl": "https://cdn.example.com/photos/1.jpg", "thumbnailUrl": "https://cdn.example.com/thumbs/1.jpg",
    })
    assert response.status_code == 201, response.text
    photo = response.json()["data"]
    assert set(photo) == ELEMENT_KEYS | {"imageUrl", "thumbnailUrl"}, photo
    assert photo["zIndex"] == 1 and photo["createdBy"] == bob.id and photo["reactions"] is None
    assert photo["creator"]["username"] == bob.username
    assert (photo["rotation"], photo["scaleX"], photo["scaleY"]) == (0, 1, 1)

    # Both join, one per node; each gets elements:batch with the photo.
    alice_socket = connect(node1, alice)
    bob_socket = connect(node2, bob)
    for socket_client in (alice_socket, bob_socket):
        assert socket_client.call("room:join", {"roomId": room_id}) == {"data": {"roomId": room_id, "recovered": False}}
        batch = socket_client.wait_for("elements:batch", for_room(room_id))
        assert set(batch) == {"roomId", "elements", "offset"}, batch
        assert batch["elements"] == [photo]
        offset_key(batch["offset"])
    batch_offset = offset_key(alice_socket.received("elements:batch")[0]["offset"])

    # Alice creates a note: on top; Bob (other node) sees element:created with the same element.
    ack = alice_socket.call("element:create", {"roomId": room_id, "element": {
        "type": "note", "positionX": 100.25, "positionY": -40, "width": 160, "height": 120, "content": "hello from node 1 ✨",
    }})
    assert set(ack_data(ack)) == {"element"}, ack
    note = ack_data(ack)["element"]
    assert set(note) == ELEMENT_KEYS | {"content"}, note
    assert note["zIndex"] == 2 and note["roomId"] == room_id and note["type"] == "note"
    assert note["content"] == "hello from node 1 ✨" and note["positionX"] == 100.25
    assert note["createdBy"] == alice.id and note["creator"]["id"] == alice.id
    assert ISO_MS_UTC.match(note["createdAt"]), note["createdAt"]
    created = bob_socket.wait_for("element:created", for_element(note["id"]))
    assert created == {"roomId": room_id, "element": note, "offset": created["offset"]}
    assert offset_key(created["offset"]) > batch_offset
    assert alice_socket.wait_for("element:created", for_element(note["id"])) == created
    assert element_count(api, alice, room_id) == 2

    # Bob moves the note, already on top: element:updated without zIndex.
    ack = bob_socket.call("element:update", {"roomId": room_id, "elementId": note["id"], "updates": {"positionX": 42.5}})
    updated = alice_socket.wait_for("element:updated", for_element(note["id"]))
    assert updated == {"roomId": room_id, "elementId": note["id"], "updates": {"positionX": 42.5}, "offset": updated["offset"]}
    # The ack carries the change exactly as the room's event does.
    assert ack_data(ack) == updated, ack

    # Bob moves the photo from the bottom: it comes to front and updates.zIndex says where.
    ack = bob_socket.call("element:update", {"roomId": room_id, "elementId": photo["id"], "updates": {"positionX": 7, "positionY": 8}})
    assert ack_data(ack)["updates"]["zIndex"] == 3
    updated = alice_socket.wait_for("element:updated", for_element(photo["id"]))
    assert updated["updates"] == {"positionX": 7, "positionY": 8, "zIndex": 3}, updated
    # A change that is not a move keeps the stack as it is.
    bob_socket.call("element:update", {"roomId": room_id, "elementId": note["id"], "updates": {"content": "edited"}})
    updated = alice_socket.wait_for("element:updated", lambda p: p["elementId"] == note["id"] and "content" in p["updates"])
    assert updated["updates"] == {"content": "edited"}
    assert [element["id"] for element in rest_elements(api2, bob, room_id)] == [note["id"], photo["id"]]

    # Alice transforms the note: element:transformed with the whole element, on top.
    ack = alice_socket.call("element:transform", {"roomId": room_id, "elementId": note["id"], "scaleX": 1.5, "rotation": -12})
    transformed = ack_data(ack)["element"]
    assert (transformed["zIndex"], transformed["scaleX"], transformed["rotation"], transformed["content"]) == (4, 1.5, -12, "edited")
    event = bob_socket.wait_for("element:transformed", for_element(note["id"]))
    assert event == {"roomId": room_id, "element": transformed, "offset": event["offset"]}

    # Alice brings the photo to front: element:z-index-changed.
    ack = alice_socket.call("element:bring-to-front", {"roomId": room_id, "elementId": photo["id"]})
    assert ack == {"data": {"elementId": photo["id"], "zIndex": 5}}
    changed = bob_socket.wait_for("element:z-index-changed", for_element(photo["id"]))
    assert changed == {"roomId": room_id, "elementId": photo["id"], "zIndex": 5, "offset": changed["offset"]}
    # Again: already on top, same answer, no event.
    assert alice_socket.call("element:bring-to-front", {"roomId": room_id, "elementId": photo["id"]}) == ack
    fence(room_id, alice_socket, bob_socket)  # every room event up to here has reached Bob
    bob_socket.assert_no("element:z-index-changed", lambda p: p["zIndex"] != 5, within=0.5)
    assert len(bob_socket.received("element:z-index-changed")) == 1
    listed = rest_elements(api, alice, room_id)
    assert [(element["id"], element["zIndex"]) for element in listed] == [(note["id"], 4), (photo["id"], 5)]
    assert listed[0] == transformed

    # Bob deletes the photo.
    assert bob_socket.call("element:delete", {"roomId": room_id, "elementId": photo["id"]}) == {"data": {"elementId": photo["id"]}}
    deleted = alice_socket.wait_for("element:deleted", for_element(photo["id"]))
    assert deleted == {"roomId": room_id, "elementId": photo["id"], "offset": deleted["offset"]}
    assert element_count(api2, bob, room_id) == 1
    assert [element["id"] for element in rest_elements(api2, bob, room_id)] == [note["id"]]

    # A REST change (PATCH) reaches the sockets as the same event.
    response = api.request("PATCH", f"{elements_path}/{note['id']}", token=alice.token, json_body={"stickerText": "♥"})
    assert response.status_code == 200, response.text
    assert response.json()["data"]["stickerText"] == "♥"
    updated = bob_socket.wait_for("element:updated", lambda p: p["elementId"] == note["id"] and "stickerText" in p["updates"])
    assert updated["updates"] == {"stickerText": "♥"}

    # Alice clears the room.
    assert alice_socket.call("room:clear", {"roomId": room_id}) == {"data": {"roomId": room_id}}
    cleared = bob_socket.wait_for("room:cleared", for_room(room_id))
    assert cleared == {"roomId": room_id, "offset": cleared["offset"]}
    alice_socket.wait_for("room:cleared", for_room(room_id))
    assert rest_elements(api, alice, room_id) == []
    assert element_count(api, alice, room_id) == 0

    # Both sockets saw the same room events, in the same order, with increasing offsets.
    alice_events = room_events(alice_socket, room_id)
    bob_events = room_events(bob_socket, room_id)
    assert alice_events == bob_events
    assert [name for name, _ in bob_events] == [
        "element:created", "element:updated", "element:updated", "element:updated", "element:transformed",
        "element:z-index-changed", "element:deleted", "element:updated", "room:cleared",
    ]
    offsets = [offset_key(payload["offset"]) for _, payload in bob_events]
    assert offsets == sorted(offsets) and len(set(offsets)) == len(offsets), offsets

    # A later join gets an empty batch at the clear's offset.
    late = connect(node2, alice, name="alice-late")
    assert late.call("room:join", {"roomId": room_id}) == {"data": {"roomId": room_id, "recovered": False}}
    assert late.wait_for("elements:batch", for_room(room_id)) == {"roomId": room_id, "elements": [], "offset": cleared["offset"]}


def test_bad_element_payloads_get_invalid_payload(pair):
    room_id = pair.room_id
    socket_client = pair.alice_socket
    valid = {"type": "note", "positionX": 0, "positionY": 0, "width": 10, "height": 10}
    cases = [
        ("element:create", {"roomId": room_id, "element": {**valid, "colour": "red"}}, "colour"),
        ("element:create", {"roomId": room_id, "element": {**valid, "type": "chart"}}, "type"),
        ("element:create", {"roomId": room_id, "element": {**valid, "width": 0}}, "width"),
        ("element:create", {"roomId": room_id, "element": {**valid, "positionX": "0"}}, "positionX"),
        ("element:create", {"roomId": room_id, "element": {"type": "note", "positionX": 0}}, "position"),
        ("element:create", {"roomId": room_id}, "element"),
        ("element:update", {"roomId": room_id, "elementId": "abc", "updates": {}}, "updates"),
        ("element:update", {"roomId": room_id, "elementId": "abc", "updates": {"type": "photo"}}, "type"),
        ("element:transform", {"roomId": room_id, "elementId": "abc", "content": "x"}, "content"),
        ("element:bring-to-front", {"roomId": room_id}, "elementId"),
        ("room:clear", {}, "roomId"),
    ]
    for event, payload, field in cases:
        ack = socket_client.call(event, payload)
        assert error_code(ack) == "invalid_payload", (event, payload, ack)
        assert field in ack["error"]["message"], (event, payload, ack)
    assert error_code(socket_client.call("element:create", ["not", "an", "object"])) == "invalid_payload"
    # Nothing was created (fenced: every room event up to here has reached Bob); the connection still works.
    fence(room_id, socket_client, pair.bob_socket)
    pair.bob_socket.assert_no("element:created", within=0.3)
    ack = socket_client.call("element:create", {"roomId": room_id, "element": valid})
    assert ack_data(ack)["element"]["zIndex"] == 1


def test_outsider_is_forbidden_and_sees_nothing(api, pair, connect, node2):
    eve = api.register("eve")
    eve_socket = connect(node2, eve)
    room_id = pair.room_id
    element = ack_data(pair.alice_socket.call("element:create", {"roomId": room_id, "element": {
        "type": "note", "positionX": 0, "positionY": 0, "width": 10, "height": 10}}))["element"]
    assert error_code(eve_socket.call("room:join", {"roomId": room_id})) == "forbidden"
    for event, payload in [
        ("element:create", {"roomId": room_id, "element": {"type": "note", "positionX": 0, "positionY": 0, "width": 1, "height": 1}}),
        ("element:update", {"roomId": room_id, "elementId": element["id"], "updates": {"content": "x"}}),
        ("element:transform", {"roomId": room_id, "elementId": element["id"], "scaleX": 2}),
        ("element:bring-to-front", {"roomId": room_id, "elementId": element["id"]}),
        ("element:delete", {"roomId": room_id, "elementId": element["id"]}),
        ("room:clear", {"roomId": room_id}),
    ]:
        assert error_code(eve_socket.call(event, payload)) == "forbidden", event
    response = api.request("GET", f"/api/rooms/{room_id}/elements", token=eve.token)
    assert response.status_code == 403 and response.json()["error"]["code"] == "forbidden"
    response = api.request("DELETE", f"/api/rooms/{room_id}/elements/{element['id']}", token=eve.token)
    assert response.status_code == 403
    # Unknown element, for a participant.
    assert error_code(pair.bob_socket.call("element:delete", {"roomId": room_id, "elementId": "nosuchelement"})) == "not_found"

    pair.bob_socket.call("element:bring-to-front", {"roomId": room_id, "elementId": element["id"]})
    pair.bob_socket.call("element:delete", {"roomId": room_id, "elementId": element["id"]})
    pair.alice_socket.wait_for("element:deleted", for_element(element["id"]))
    for event in ROOM_EVENTS + ("elements:batch",):
        eve_socket.assert_no(event, within=0.05)
    assert rest_elements(api, pair.alice, room_id) == []


def test_live_reactions_unseen_counts_and_presence_across_nodes(api, api2, connect, node1, node2):
    """docs/clients/events.md: hearts with hasReacted per recipient, unseen counts for a user
    who is away, room:seen on every device when they open the room, room:presence."""
    alice = api.register("alice")
    bob = api.register("bob")
    outsider = api.register("outsider")
    room_id = api.create_room(alice, other=bob)["id"]
    note = {"type": "note", "positionX": 1, "positionY": 2, "width": 30, "height": 40}

    alice_socket = connect(node1, alice)
    assert alice_socket.call("room:join", {"roomId": room_id}) == {"data": {"roomId": room_id, "recovered": False}}
    alice_socket.wait_for("room:presence", lambda p: p["activeUserIds"] == [alice.id])
    # Bob is online on both nodes but has not opened the room; the outsider shares no room.
    bob_socket = connect(node2, bob)
    bob_other = connect(node1, bob, name="bob@node1-second")
    outsider_socket = connect(node2, outsider)

    # Alice's first note: Bob's devices count it as unseen.
    first = ack_data(alice_socket.call("element:create", {"roomId": room_id, "element": note}))["element"]
    for socket_client in (bob_socket, bob_other):
        created = socket_client.wait_for("element:created:global", lambda p: p["elementId"] == first["id"])
        assert created == {"roomId": room_id, "elementId": first["id"], "createdBy": alice.id, "type": "note",
                           "elementCount": 1, "unseenCount": 1}
    assert alice_socket.wait_for("element:created:global", lambda p: p["elementId"] == first["id"])["unseenCount"] == 0

    # Alice hearts it: her own socket sees hasReacted true.
    ack = ack_data(alice_socket.call("element:reaction:toggle", {"roomId": room_id, "elementId": first["id"]}))
    assert set(ack) == {"action", "reaction", "elementStats"}, ack
    assert ack["action"] == "added"
    assert set(ack["reaction"]) == {"id", "elementId", "userId", "type", "createdAt", "user"}, ack
    assert (ack["reaction"]["userId"], ack["reaction"]["type"]) == (alice.id, "heart")
    assert ISO_MS_UTC.match(ack["reaction"]["createdAt"]), ack
    assert ack["elementStats"]["totalReactions"] == 1 and ack["elementStats"]["hasReacted"] is True
    assert [user["id"] for user in ack["elementStats"]["topReactors"]] == [alice.id]
    added = alice_socket.wait_for("element:reaction:added", for_element(first["id"]))
    assert set(added) == {"roomId", "elementId", "reaction", "stats", "offset"}, added
    assert added["reaction"] == ack["reaction"] and added["stats"] == ack["elementStats"]

    # A second note: two unseen.
    second = ack_data(alice_socket.call("element:create", {"roomId": room_id, "element": note}))["element"]
    for socket_client in (bob_socket, bob_other):
        created = socket_client.wait_for("element:created:global", lambda p: p["elementId"] == second["id"])
        assert (created["elementCount"], created["unseenCount"]) == (2, 2), created

    # Bob opens the room on node 2: his batch shows Alice's heart as not his; both of his devices
    # learn the room was seen; everyone in the room sees both users present.
    assert bob_socket.call("room:join", {"roomId": room_id}) == {"data": {"roomId": room_id, "recovered": False}}
    batch = bob_socket.wait_for("elements:batch", for_room(room_id))
    assert [element["id"] for element in batch["elements"]] == [first["id"], second["id"]]
    reactions = batch["elements"][0]["reactions"]
    assert (reactions["count"], reactions["hasReacted"], reactions["userReaction"]) == (1, False, None), reactions
    assert [user["id"] for user in reactions["topReactors"]] == [alice.id]
    assert batch["elements"][1]["reactions"] is None
    for socket_client in (bob_socket, bob_other):
        assert socket_client.wait_for("room:seen", for_room(room_id)) == {"roomId": room_id, "unseenCount": 0}
    both = sorted([alice.id, bob.id])
    presence = bob_socket.wait_for("room:presence", for_room(room_id))
    assert presence == {"roomId": room_id, "isActive": True, "activeUserIds": both, "offset": presence["offset"]}
    assert offset_key(presence["offset"]) > offset_key(batch["offset"])
    with bob_socket._condition:
        names = [name for name, _ in bob_socket._events]
    assert names.index("elements:batch") < names.index("room:presence"), names
    alice_socket.wait_for("room:presence", lambda p: p["activeUserIds"] == both)
    # Alice's devices got the room:seen of her own join only, not Bob's.
    time.sleep(0.2)
    assert alice_socket.received("room:seen", for_room(room_id)) == [{"roomId": room_id, "unseenCount": 0}]

    # Bob hearts the second note over REST on node 1: he sees true, Alice (no heart there) false.
    response = api.request("POST", f"/api/rooms/{room_id}/elements/{second['id']}/reactions/toggle", token=bob.token)
    assert response.status_code == 200, response.text
    toggled = response.json()["data"]
    assert toggled["action"] == "added" and toggled["elementStats"]["hasReacted"] is True
    at_bob = bob_socket.wait_for("element:reaction:added", for_element(second["id"]))
    at_alice = alice_socket.wait_for("element:reaction:added", for_element(second["id"]))
    assert at_bob["stats"]["hasReacted"] is True and at_alice["stats"]["hasReacted"] is False
    assert at_bob["reaction"] == at_alice["reaction"] == toggled["reaction"]
    assert at_bob["offset"] == at_alice["offset"] and at_bob["stats"]["totalReactions"] == 1
    listed = api2.request("GET", f"/api/rooms/{room_id}/elements/{second['id']}/reactions", token=alice.token)
    assert listed.status_code == 200, listed.text
    assert listed.json()["data"] == {"reactions": [toggled["reaction"]], "total": 1, "hasReacted": False}

    # Bob has the room open: Alice's next note leaves him at 0, on both devices.
    third = ack_data(alice_socket.call("element:create", {"roomId": room_id, "element": note}))["element"]
    for socket_client in (bob_socket, bob_other):
        created = socket_client.wait_for("element:created:global", lambda p: p["elementId"] == third["id"])
        assert (created["elementCount"], created["unseenCount"]) == (3, 0), created

    # Bob's node-2 socket goes away: Alice sees only herself.
    bob_socket.disconnect()
    alice_socket.wait_for("room:presence", lambda p: p["activeUserIds"] == [alice.id] and p["isActive"] is True)

    # The outsider heard nothing of this room.
    for event in ("element:created:global", "room:seen", "room:presence", "element:reaction:added"):
        outsider_socket.assert_no(event, within=0.05)


def test_drag_and_cursor_previews_reach_the_other_node_and_are_never_stored(pair, redis_server):
    """element:drag and cursor:move (volatile): relayed to the room's other sockets through
    pub/sub, never to the sender, never into the room's stream (so never replayed)."""
    room_id = pair.room_id
    element = ack_data(pair.alice_socket.call("element:create", {"roomId": room_id, "element": {
        "type": "note", "positionX": 0, "positionY": 0, "width": 10, "height": 10}}))["element"]
    stream_before = int(redis_cli("-c", "-p", str(redis_server.port), "XLEN", f"room:{{{room_id}}}:stream").strip())

    ack = pair.alice_socket.call("element:drag", {"roomId": room_id, "elementId": element["id"], "positionX": 40.5, "positionY": 7})
    assert ack == {"data": {"roomId": room_id}}, ack
    drag = pair.bob_socket.wait_for("element:drag", for_element(element["id"]))
    assert drag == {"roomId": room_id, "elementId": element["id"], "userId": pair.alice.id, "positionX": 40.5, "positionY": 7}
    ack = pair.bob_socket.call("cursor:move", {"roomId": room_id, "x": 3, "y": 4})
    assert ack == {"data": {"roomId": room_id}}, ack
    cursor = pair.alice_socket.wait_for("cursor:move", for_room(room_id))
    assert cursor == {"roomId": room_id, "userId": pair.bob.id, "x": 3, "y": 4}
    assert int(redis_cli("-c", "-p", str(redis_server.port), "XLEN", f"room:{{{room_id}}}:stream").strip()) == stream_before

    # Bad coordinates are refused by name; the senders never got their own previews.
    ack = pair.alice_socket.call("element:drag", {"roomId": room_id, "elementId": element["id"], "positionX": "x", "positionY": 0})
    assert error_code(ack) == "invalid_payload" and "positionX" in ack["error"]["message"], ack
    fence(room_id, pair.alice_socket, pair.alice_socket, pair.bob_socket)
    pair.alice_socket.assert_no("element:drag", within=0.05)
    pair.bob_socket.assert_no("cursor:move", within=0.05)
