"""User profiles on two nodes with the unmodified python-socketio client: registration and
`PUT /api/users/me` take firstName, lastName, email and avatarUrl; every user object carries the
public profile (email only to its owner and in without-rooms); an element's creator and its
hearts' topReactors show the creator's current profile after a change."""

import uuid

from roomcast_e2e import ack_data, error_code

NOTE = {"type": "note", "positionX": 1, "positionY": 2, "width": 100, "height": 80, "content": "hi"}
PUBLIC = {"id", "username", "firstName", "lastName", "avatarUrl", "createdAt"}


def register(api, **profile):
    username = f"p_{uuid.uuid4().hex[:12]}"
    response = api.request("POST", "/api/auth/register", json_body={"username": username, "password": "correct-horse", **profile})
    return response


def test_register_update_and_read_the_profile(api, api2):
    email = f"ann.{uuid.uuid4().hex[:8]}@Example.com"
    response = register(api, firstName="Ann", lastName="Lee", email=email, avatarUrl="https://cdn.example.com/ann.png")
    assert response.status_code == 201, response.text
    data = response.json()["data"]
    token, me = data["token"], data["user"]
    assert me["firstName"] == "Ann" and me["lastName"] == "Lee" and me["email"] == email
    assert me["avatarUrl"] == "https://cdn.example.com/ann.png"

    # Read on the other node; change some fields, clear one, keep the rest.
    assert api2.request("GET", "/api/users/me", token=token).json()["data"] == me
    changed = api2.request("PUT", "/api/users/me", token=token, json_body={"firstName": "Annie", "lastName": None})
    assert changed.status_code == 200, changed.text
    after = changed.json()["data"]
    assert after["firstName"] == "Annie" and after["lastName"] is None and after["email"] == email
    assert api.request("GET", "/api/users/me", token=token).json()["data"] == after

    # Email unique, case-insensitively; avatarUrl https; bounds in bytes.
    assert register(api, email=email.upper()).status_code == 409
    other = register(api).json()["data"]["token"]
    taken = api.request("PUT", "/api/users/me", token=other, json_body={"email": email.lower()})
    assert taken.status_code == 409 and error_code(taken.json()) == "conflict"
    for bad in ({"avatarUrl": "http://example.com/a.png"}, {"email": "nope"}, {"firstName": "é" * 51}, {"lastName": "x" * 101}):
        refused = api.request("PUT", "/api/users/me", token=other, json_body=bad)
        assert refused.status_code == 400 and error_code(refused.json()) == "invalid_payload", (bad, refused.text)
    assert api.request("PUT", "/api/users/me", token=other, json_body={"firstName": "é" * 50}).status_code == 200


def test_profiles_in_user_objects_and_elements(api, api2, connect, node1, node2):
    alice = api.register("alice")
    bob = api.register("bob")
    assert api.request("PUT", "/api/users/me", token=alice.token,
                       json_body={"firstName": "Alice", "email": f"{alice.username}@e.io", "avatarUrl": "https://e.io/a.png"}).status_code == 200
    room = api.create_room(alice, other=bob)["id"]

    # The public profile, no email, wherever another person shows.
    people = api2.request("GET", "/api/rooms/grouped-by-person", token=bob.token).json()["data"]
    person = next(p for p in people if p["id"] == alice.id)
    assert PUBLIC <= set(person) and "email" not in person and person["firstName"] == "Alice"
    participants = api.request("GET", f"/api/rooms/{room}", token=bob.token).json()["data"]["participants"]
    assert all("email" not in p and PUBLIC <= set(p) for p in participants)
    # without-rooms shows the email, as the seed does.
    carol = api.register("carol")
    page = api.request("GET", "/api/users/without-rooms?limit=100", token=carol.token).json()
    listed = [u for u in page["data"] if u["id"] == alice.id]
    while not listed and page["nextCursor"]:
        page = api.request("GET", f"/api/users/without-rooms?limit=100&cursor={page['nextCursor']}", token=carol.token).json()
        listed = [u for u in page["data"] if u["id"] == alice.id]
    assert listed and listed[0]["email"] == f"{alice.username}@e.io"

    alice_socket = connect(node1, alice)
    bob_socket = connect(node2, bob)
    for socket_client in (alice_socket, bob_socket):
        socket_client.call("room:join", {"roomId": room})
    element = ack_data(alice_socket.call("element:create", {"roomId": room, "element": NOTE}))["element"]
    assert element["creator"]["firstName"] == "Alice" and "email" not in element["creator"]
    created = bob_socket.wait_for("element:created", lambda p: p["element"]["id"] == element["id"])
    assert created["element"]["creator"]["avatarUrl"] == "https://e.io/a.png"
    bob_socket.call("element:reaction:toggle", {"roomId": room, "elementId": element["id"]})

    # A change reaches the element's creator and the hearts' topReactors, on both nodes.
    api2.request("PUT", "/api/users/me", token=alice.token, json_body={"firstName": "Alicia", "avatarUrl": "https://e.io/b.png"})
    api2.request("PUT", "/api/users/me", token=bob.token, json_body={"firstName": "Robert"})
    for rest in (api, api2):
        elements = rest.request("GET", f"/api/rooms/{room}/elements", token=bob.token).json()["data"]
        shown = next(e for e in elements if e["id"] == element["id"])
        assert shown["creator"]["firstName"] == "Alicia" and shown["creator"]["avatarUrl"] == "https://e.io/b.png"
        assert shown["reactions"]["topReactors"][0]["firstName"] == "Robert"
    rejoined = connect(node2, bob, name="bob again")
    rejoined.call("room:join", {"roomId": room})
    batch = rejoined.wait_for("elements:batch")
    assert batch["elements"][0]["creator"]["firstName"] == "Alicia"


def test_registration_bounds_names_and_passwords_in_bytes(api):
    """displayName at most 64 bytes and passwords at most 128 bytes of UTF-8, whatever the
    characters: one character of combining marks can be kilobytes."""
    assert register(api, displayName="é" * 32).status_code == 201
    for body in ({"displayName": "é" * 33}, {"displayName": "a" + "\u0301" * 40}):
        refused = register(api, **body)
        assert refused.status_code == 400 and error_code(refused.json()) == "invalid_payload", (body, refused.text)
        assert "displayName" in refused.json()["error"]["message"]
    username = f"p_{uuid.uuid4().hex[:12]}"
    for password, status in (("🎉" * 32, 201), ("🎉" * 33, 400), ("é" * 65, 400)):
        response = api.request("POST", "/api/auth/register", json_body={"username": f"{username}{status}{len(password)}", "password": password})
        assert response.status_code == status, (len(password), response.text)
        if status == 400:
            assert "password" in response.json()["error"]["message"]
