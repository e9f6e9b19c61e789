"""Engine.IO transports: long-polling, and the upgrade from polling to WebSocket that clients on
default settings go through."""

import time
import uuid

import json

from roomcast_e2e import ack_data, http, with_text, WAIT


def chat_both_ways(api, alice_socket, bob_socket, alice, bob):
    room = api.create_room(alice, other=bob)
    for socket in (alice_socket, bob_socket):
        assert ack_data(socket.call("room:join", {"roomId": room["id"]}))["roomId"] == room["id"]
    for sender, receiver in ((alice_socket, bob_socket), (bob_socket, alice_socket)):
        text = f"hi {uuid.uuid4().hex[:8]}"
        ack = sender.call("message:send", {"roomId": room["id"], "text": text})
        assert ack_data(ack)["message"]["text"] == text
        receiver.wait_for("message:new", with_text(text))
        sender.wait_for("message:new", with_text(text))


def wait_for_transport(socket, name, timeout=WAIT):
    deadline = time.monotonic() + timeout
    while socket.sio.transport() != name and time.monotonic() < deadline:
        time.sleep(0.05)
    return socket.sio.transport()


def test_polling_only_client_chats_with_a_websocket_client(api, client, node1, node2):
    alice, bob = api.register("alice"), api.register("bob")
    alice_socket = client("alice polling").connect(node1.url, auth={"token": alice.token}, transports=["polling"])
    bob_socket = client("bob websocket").connect(node2.url, auth={"token": bob.token})
    assert alice_socket.sio.transport() == "polling"
    chat_both_ways(api, alice_socket, bob_socket, alice, bob)


def test_default_transports_start_with_polling_and_upgrade(api, client, node1, node2):
    alice, bob = api.register("alice"), api.register("bob")
    alice_socket = client("alice default").connect(node1.url, auth={"token": alice.token}, transports=None)
    bob_socket = client("bob default").connect(node2.url, auth={"token": bob.token}, transports=None)
    assert wait_for_transport(alice_socket, "websocket") == "websocket"
    assert wait_for_transport(bob_socket, "websocket") == "websocket"
    chat_both_ways(api, alice_socket, bob_socket, alice, bob)


def test_polling_token_in_query_and_refusal(api, client, node1):
    alice = api.register("alice")
    socket = client("alice query token").connect(f"{node1.url}?token={alice.token}", transports=["polling"])
    assert socket.sio.transport() == "polling"
    refusal = client("nobody").connect_refused(node1.url, auth={"token": "not-a-jwt"}, transports=["polling"])
    assert isinstance(refusal.payload, dict), f"expected CONNECT_ERROR over polling: {refusal.exception!r}"
    assert refusal.payload.get("data", {}).get("code") == "unauthorized", refusal.payload


def test_unknown_session_and_bad_requests_get_reference_errors(node1):
    def get(path, method="GET", body=None):
        return http(node1.url + path, method, body, timeout=WAIT)[:2]

    status, body = get("/socket.io/?EIO=4&transport=polling&sid=nope")
    assert (status, json.loads(body)) == (400, {"code": 1, "message": "Session ID unknown"})
    status, body = get("/socket.io/?EIO=4&transport=polling&sid=nope", method="POST", body=b"40")
    assert (status, json.loads(body)) == (400, {"code": 1, "message": "Session ID unknown"})
    status, body = get("/socket.io/?EIO=3&transport=polling")
    assert (status, json.loads(body)) == (400, {"code": 5, "message": "Unsupported protocol version"})
    # A handshake answers the open packet, offering the upgrade.
    status, body = get("/socket.io/?EIO=4&transport=polling")
    assert status == 200 and body.startswith("0{")
    handshake = json.loads(body[1:])
    assert handshake["upgrades"] == ["websocket"]
    # A body that is not Engine.IO packets.
    status, body = get(f"/socket.io/?EIO=4&transport=polling&sid={handshake['sid']}", method="POST", body=b"")
    assert status == 400


def test_a_draining_node_sends_its_polling_clients_away(api, roomcast_binary, redis_server):
    """SIGTERM: a pending poll ends at once with an HTTP error (503), which every client takes as
    a lost transport and reconnects after, never with Engine.IO's close packet (python-socketio
    takes that for a deliberate end and stays away); the node then exits. test_drain.py shows the
    clients coming back."""
    import signal
    import socket

    from roomcast_e2e import GatewayNode, wait_until

    node = GatewayNode("draining", roomcast_binary, redis_server.url, log_directory=redis_server.directory)
    try:
        alice = api.register("alice")
        status, body = http(f"{node.url}/socket.io/?EIO=4&transport=polling")[:2]
        sid = json.loads(body[1:])["sid"]
        assert http(f"{node.url}/socket.io/?EIO=4&transport=polling&sid={sid}", "POST",
                    ("40" + json.dumps({"token": alice.token})).encode())[:2] == (200, "ok")
        status, body = http(f"{node.url}/socket.io/?EIO=4&transport=polling&sid={sid}")[:2]
        assert body.startswith("40"), body

        poll = socket.create_connection(("127.0.0.1", node.port), timeout=WAIT * 2)
        poll.sendall(f"GET /socket.io/?EIO=4&transport=polling&sid={sid} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n".encode())
        # The poll waits on the node once the node has read it (nothing left in its receive queue).
        wait_until(lambda: received_queue(node.port, poll.getsockname()[1]) == 0, "the node read the poll", WAIT)
        node.process.send_signal(signal.SIGTERM)
        answer = b""
        while b"\r\n\r\n" not in answer or len(answer.partition(b"\r\n\r\n")[2]) < content_length(answer):
            chunk = poll.recv(4096)
            assert chunk, f"the node closed the pending poll without a whole answer: {answer!r}"
            answer += chunk
        poll.close()
        head, _, body = answer.partition(b"\r\n\r\n")
        assert head.split()[1] == b"503", answer
        assert json.loads(body) == {"message": "Server shutting down"}, answer
        node.process.wait(timeout=WAIT * 2)
    finally:
        node.stop()


def received_queue(local_port, remote_port):
    """The receive queue (bytes not read yet) of the loopback connection from `remote_port` to
    `local_port`, as /proc/net/tcp shows it; None while there is none."""
    with open("/proc/net/tcp", encoding="ascii") as table:
        for row in table.read().splitlines()[1:]:
            columns = row.split()
            local, remote, queues = columns[1], columns[2], columns[4]
            if int(local.rsplit(":", 1)[1], 16) == local_port and int(remote.rsplit(":", 1)[1], 16) == remote_port:
                return int(queues.split(":")[1], 16)
    return None


def content_length(answer):
    head = answer.partition(b"\r\n\r\n")[0].decode("latin-1").lower()
    for line in head.split("\r\n")[1:]:
        name, _, value = line.partition(":")
        if name.strip() == "content-length":
            return int(value)
    return 0
