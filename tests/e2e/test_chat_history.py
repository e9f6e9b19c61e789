"""Chat history on two nodes: messages sent with python-socketio on either node are listed by
`GET /api/rooms/:roomId/messages`, newest first, paged by cursor, participants only."""

from roomcast_e2e import Api, GatewayNode, error_code, redis_cli


def test_history_pages_newest_first(api, api2, pair):
    for index in range(5):
        socket_client = pair.alice_socket if index % 2 == 0 else pair.bob_socket
        assert "data" in socket_client.call("message:send", {"roomId": pair.room_id, "text": f"message {index}"})
    texts = []
    cursor = ""
    pages = 0
    while True:
        rest = api if pages % 2 == 0 else api2  # either node serves any page
        response = rest.request("GET", f"/api/rooms/{pair.room_id}/messages?limit=2&cursor={cursor}", token=pair.bob.token)
        assert response.status_code == 200, response.text
        body = response.json()
        assert set(body) == {"data", "nextCursor"}
        for message in body["data"]:
            assert set(message) >= {"id", "roomId", "userId", "text", "createdAt", "user"}
            assert message["roomId"] == pair.room_id and message["user"]["id"] == message["userId"]
            assert "email" not in message["user"]
        texts += [message["text"] for message in body["data"]]
        pages += 1
        if body["nextCursor"] is None:
            break
        cursor = body["nextCursor"]
    assert texts == [f"message {index}" for index in reversed(range(5))]
    assert pages == 3


def test_history_is_for_participants(api, pair):
    eve = api.register("eve")
    forbidden = api.request("GET", f"/api/rooms/{pair.room_id}/messages", token=eve.token)
    assert forbidden.status_code == 403 and error_code(forbidden.json()) == "forbidden"
    missing = api.request("GET", "/api/rooms/nosuchroom/messages", token=eve.token)
    assert missing.status_code == 404 and error_code(missing.json()) == "not_found"
    bad = api.request("GET", f"/api/rooms/{pair.room_id}/messages?cursor=nope", token=pair.alice.token)
    assert bad.status_code == 400 and error_code(bad.json()) == "invalid_payload"
    assert api.request("GET", f"/api/rooms/{pair.room_id}/messages", token=None).status_code == 401


def test_a_running_node_keeps_messages_kept_per_room(roomcast_binary, redis_server, connect):
    """`messages.kept_per_room` reaches the node's store: with 3 kept, the 5th message pushes the
    first two out of the history (and of the room's message stream in Redis)."""
    node = GatewayNode("keeps3", roomcast_binary, redis_server.url, log_directory=redis_server.directory,
                       settings={"ROOMCAST_MESSAGES_KEPT_PER_ROOM": "3"})
    try:
        api = Api(node.url)
        alice, bob = api.register("keeper"), api.register("kept")
        room_id = api.create_room(alice, other=bob)["id"]
        socket_client = connect(node, alice)
        for index in range(5):
            assert "data" in socket_client.call("message:send", {"roomId": room_id, "text": f"message {index}"})
        response = api.request("GET", f"/api/rooms/{room_id}/messages?limit=50", token=bob.token)
        assert response.status_code == 200, response.text
        assert [message["text"] for message in response.json()["data"]] == ["message 4", "message 3", "message 2"]
        assert response.json()["nextCursor"] is None
        length = redis_cli("-c", "-p", str(redis_server.port), "XLEN", f"room:{{{room_id}}}:messages").strip()
        assert length == "3", length
    finally:
        node.stop()
