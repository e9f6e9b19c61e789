"""Authentication of Socket.IO connections: where the token may come from, and bad tokens."""

import time
import urllib.parse

import pytest

from roomcast_e2e import JWT_SECRET, ack_data, jwt_claims, jwt_sign, jwt_unsigned, jwt_with_claims_swapped

WRONG_SECRET = "not-the-roomcast-secret-0123456789abcdef"


def assert_refused(refusal, code):
    """The connection failed with CONNECT_ERROR `{"message": ..., "data": {"code": code}}`."""
    payload = refusal.payload
    assert isinstance(payload, dict), \
        f"expected a CONNECT_ERROR packet, but the Engine.IO/WebSocket connection itself failed: {refusal.exception!r}"
    # python-socketio raises this for a namespace the server refused with CONNECT_ERROR.
    assert "failed to connect" in str(refusal.exception), str(refusal.exception)
    assert isinstance(payload.get("message"), str) and payload["message"], f"CONNECT_ERROR without a message: {payload!r}"
    assert payload.get("data", {}).get("code") == code, f"CONNECT_ERROR {payload!r}, expected code {code!r}"


def assert_usable(socket_client, api, account):
    """The connection belongs to `account`: it can join its own room and send in it."""
    other = api.register("peer")
    room = api.create_room(account, other=other)
    assert ack_data(socket_client.call("room:join", {"roomId": room["id"]}))["roomId"] == room["id"]
    ack = socket_client.call("message:send", {"roomId": room["id"], "text": "it is me"})
    assert ack_data(ack)["message"]["userId"] == account.id


def test_token_in_auth_object(api, client, node1):
    alice = api.register("alice")
    socket = client("auth").connect(node1.url, auth={"token": alice.token})
    assert socket.sio.connected and socket.sio.get_sid("/")
    assert_usable(socket, api, alice)


def test_token_in_authorization_header(api, client, node2):
    alice = api.register("alice")
    socket = client("header").connect(node2.url, headers={"Authorization": f"Bearer {alice.token}"})
    assert_usable(socket, api, alice)


def test_token_in_query(api, client, node1):
    alice = api.register("alice")
    socket = client("query").connect(node1.url + "?token=" + urllib.parse.quote(alice.token))
    assert_usable(socket, api, alice)


def test_auth_object_wins_over_header(api, client, node1):
    alice = api.register("alice")
    socket = client("both").connect(node1.url, auth={"token": alice.token}, headers={"Authorization": "Bearer garbage"})
    assert_usable(socket, api, alice)


def test_token_signed_elsewhere_with_the_shared_key_is_accepted(api, client, node1):
    # Also proves that the forged tokens below differ from a good one only where they are bad.
    alice = api.register("alice")
    now = int(time.time())
    token = jwt_sign({"sub": alice.id, "iat": now, "exp": now + 600})
    socket = client("external").connect(node1.url, auth={"token": token})
    assert_usable(socket, api, alice)


def forged(kind, alice, bob):
    now = int(time.time())
    claims = jwt_claims(alice.token)
    if kind == "garbage":
        return "garbage"
    if kind == "three garbage parts":
        return "abc.def.ghi"
    if kind == "tampered claims":
        return jwt_with_claims_swapped(alice.token, sub=bob.id)
    if kind == "tampered signature":
        header, payload, signature = alice.token.split(".")
        flipped = ("A" if signature[0] != "A" else "B") + signature[1:]
        return f"{header}.{payload}.{flipped}"
    if kind == "wrong key":
        return jwt_sign({**claims, "exp": now + 600}, secret=WRONG_SECRET)
    if kind == "alg none":
        return jwt_unsigned({**claims, "exp": now + 600})
    if kind == "alg none with the real signature":
        header = jwt_unsigned(claims).split(".")[0]
        _, payload, signature = alice.token.split(".")
        return f"{header}.{payload}.{signature}"
    raise ValueError(kind)


BAD_TOKENS = ["garbage", "three garbage parts", "tampered claims", "tampered signature", "wrong key",
              "alg none", "alg none with the real signature"]


@pytest.mark.parametrize("kind", BAD_TOKENS)
def test_bad_token_is_refused(kind, api, client, node1):
    alice = api.register("alice")
    bob = api.register("bob")
    refusal = client(kind).connect_refused(node1.url, auth={"token": forged(kind, alice, bob)})
    assert_refused(refusal, "unauthorized")


@pytest.mark.parametrize("kind", ["tampered claims", "alg none"])
def test_bad_token_in_header_is_refused(kind, api, client, node2):
    alice = api.register("alice")
    bob = api.register("bob")
    refusal = client(kind).connect_refused(node2.url, headers={"Authorization": f"Bearer {forged(kind, alice, bob)}"})
    assert_refused(refusal, "unauthorized")


def test_expired_token_is_refused(api, client, node1):
    alice = api.register("alice")
    now = int(time.time())
    claims = {**jwt_claims(alice.token), "iat": now - 7200, "exp": now - 3600}
    refusal = client("expired").connect_refused(node1.url, auth={"token": jwt_sign(claims, secret=JWT_SECRET)})
    assert_refused(refusal, "token_expired")


def test_missing_token_is_refused(client, node2):
    refusal = client("anonymous").connect_refused(node2.url)
    assert_refused(refusal, "unauthorized")


def test_other_namespace_is_refused(api, client, node1):
    alice = api.register("alice")
    refusal = client("admin").connect_refused(node1.url, auth={"token": alice.token}, namespaces=["/admin"])
    # The reference server's refusal, word for word (no `data`).
    assert refusal.payload == {"message": "Invalid namespace"}, refusal


@pytest.mark.parametrize("kind", ["tampered claims", "wrong key", "alg none"])
def test_rest_refuses_bad_tokens(kind, api):
    alice = api.register("alice")
    bob = api.register("bob")
    response = api.request("GET", "/api/users/me", token=forged(kind, alice, bob))
    assert response.status_code == 401, response.text
    assert response.json()["error"]["code"] == "unauthorized"


def test_rest_reports_expired_tokens(api):
    alice = api.register("alice")
    now = int(time.time())
    token = jwt_sign({**jwt_claims(alice.token), "iat": now - 7200, "exp": now - 3600})
    response = api.request("GET", "/api/users/me", token=token)
    assert response.status_code == 401, response.text
    assert response.json()["error"]["code"] == "token_expired"
    me = api.request("GET", "/api/users/me", token=alice.token)
    assert me.status_code == 200 and me.json()["data"]["id"] == alice.id, me.text
