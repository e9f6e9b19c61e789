"""No sticky sessions: Engine.IO long-polling through a round-robin nginx in front of two nodes.

A poll, a send or an upgrade that reaches the node which does not hold its session is passed on
by that node to the one that does (the node id is the session id's first 8 characters). These
tests drive that directly (a session opened on node 1, used through node 2) and through nginx
with docker/nginx/roomcast.conf.template, the file docker-compose uses, rendered for loopback:
its ROOMCAST_NODES names an upstream block of the test's own that lists the nodes' loopback
ports (compose's value is a DNS name that resolves to every node; scripts/compose-test.sh runs
that, and shows a recreated node taking traffic again).
"""

import json
import os
import shutil
import socket
import subprocess
import tempfile
import time
import urllib.parse
import uuid

import pytest
import websocket

from roomcast_e2e import ack_data, free_port, http, redis_cli, stop_process, tail, with_text, WAIT

REPOSITORY = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
TEMPLATE = os.path.join(REPOSITORY, "docker", "nginx", "roomcast.conf.template")
# The upstream block the tests' nginx.conf defines around the template (ROOMCAST_NODES names it).
UPSTREAM = "roomcast_e2e_nodes"
RECORD_SEPARATOR = "\x1e"


def render_template(path, values):
    """Fills `${NAME}` the way the nginx image's envsubst does, and only the names given."""
    with open(path, encoding="utf-8") as handle:
        text = handle.read()
    for name, value in values.items():
        text = text.replace("${" + name + "}", str(value))
    return text


class Nginx:
    """nginx from Debian's package (scripts/setup-tests.sh installs it) on a free loopback port."""

    def __init__(self, upstreams):
        binary = shutil.which("nginx") or "/usr/sbin/nginx"
        if not os.access(binary, os.X_OK):
            pytest.fail("nginx is not installed: run scripts/setup-tests.sh (scripts/test.sh does)")
        self.directory = tempfile.mkdtemp(prefix="roomcast-nginx-")
        self.port = free_port()
        site = render_template(TEMPLATE, {
            "ROOMCAST_NGINX_PORT": f"127.0.0.1:{self.port}",
            "ROOMCAST_NODES": UPSTREAM,
            # Never asked: an upstream block's name is not looked up.
            "ROOMCAST_NGINX_RESOLVER": "127.0.0.1",
        })
        servers = "".join(f"    server {upstream};\n" for upstream in upstreams)
        with open(os.path.join(self.directory, "roomcast.conf"), "w", encoding="utf-8") as handle:
            handle.write(site)
        self.config = os.path.join(self.directory, "nginx.conf")
        with open(self.config, "w", encoding="utf-8") as handle:
            handle.write(f"""
worker_processes 1;
pid {self.directory}/nginx.pid;
error_log {self.directory}/error.log info;
events {{ worker_connections 1024; }}
http {{
    log_format upstreams '$upstream_addr $request_uri';
    access_log {self.directory}/access.log upstreams;
    client_body_temp_path {self.directory}/body;
    proxy_temp_path {self.directory}/proxy;
    fastcgi_temp_path {self.directory}/fastcgi;
    uwsgi_temp_path {self.directory}/uwsgi;
    scgi_temp_path {self.directory}/scgi;
    upstream {UPSTREAM} {{
{servers}    }}
    include {self.directory}/roomcast.conf;
}}
""")
        check = subprocess.run([binary, "-t", "-p", self.directory, "-c", self.config], capture_output=True, text=True)
        assert check.returncode == 0, f"nginx -t refused the rendered config:\n{check.stderr}"
        self.process = subprocess.Popen([binary, "-p", self.directory, "-c", self.config, "-g", "daemon off;"],
                                        stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + 30
        while True:
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=0.2).close()
                break
            except OSError:
                if self.process.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError("nginx did not start:\n" + tail(os.path.join(self.directory, "error.log")))
                time.sleep(0.05)

    @property
    def url(self):
        return f"http://127.0.0.1:{self.port}"

    def nodes_by_session(self):
        """Engine.IO session id → the upstream nodes nginx sent its requests to (access log)."""
        sessions = {}
        with open(os.path.join(self.directory, "access.log"), encoding="utf-8") as handle:
            for line in handle:
                upstream, _, uri = line.strip().partition(" ")
                query = urllib.parse.parse_qs(urllib.parse.urlsplit(uri).query)
                for sid in query.get("sid", []):
                    sessions.setdefault(sid, set()).add(upstream)
        return sessions

    def stop(self):
        stop_process(self.process)
        shutil.rmtree(self.directory, ignore_errors=True)


@pytest.fixture(scope="module")
def nginx(nodes):
    server = Nginx([f"127.0.0.1:{node.port}" for node in nodes])
    try:
        yield server
    finally:
        server.stop()


def packets(body):
    return body.split(RECORD_SEPARATOR)


def open_polling_session(node, token):
    status, body, _ = http(f"{node.url}/socket.io/?EIO=4&transport=polling")
    assert status == 200 and body.startswith("0{"), (status, body)
    sid = json.loads(body[1:])["sid"]
    status, body, _ = http(f"{node.url}/socket.io/?EIO=4&transport=polling&sid={sid}", "POST",
                           ("40" + json.dumps({"token": token})).encode())
    assert (status, body) == (200, "ok"), (status, body)
    return sid


def test_session_ids_name_their_node(api, node1, node2):
    alice = api.register("alice")
    first = open_polling_session(node1, alice.token)
    second = open_polling_session(node2, alice.token)
    assert len(first) == len(second) == 28
    assert first[:8] != second[:8], "two nodes gave their sessions the same node tag"


def test_a_session_opened_on_one_node_is_served_through_the_other(api, node1, node2):
    alice, bob = api.register("alice"), api.register("bob")
    sid = open_polling_session(node1, alice.token)
    # The CONNECT answer, polled through node 2. Node 2 closes the connection after a forwarded
    # answer, and says so: a proxy that kept it for its next request (nginx's upstream keepalive)
    # would lose that request, and nginx never retries a POST.
    status, body, headers = http(f"{node2.url}/socket.io/?EIO=4&transport=polling&sid={sid}")
    assert status == 200, body
    assert {name.lower(): value for name, value in headers.items()}.get("connection") == "close", headers
    connect = [packet for packet in packets(body) if packet.startswith("40")]
    assert connect and "sid" in json.loads(connect[0][2:]), body
    # An event with an ack sent through node 2, its answer polled through node 1 and node 2.
    room = api.create_room(alice, other=bob)
    status, body, headers = http(f"{node2.url}/socket.io/?EIO=4&transport=polling&sid={sid}", "POST",
                                 ('421["room:join",' + json.dumps({"roomId": room["id"]}) + "]").encode())
    assert (status, body) == (200, "ok")
    assert {name.lower(): value for name, value in headers.items()}.get("connection") == "close", headers
    answers = []
    deadline = time.monotonic() + WAIT
    while not any(packet.startswith("431") for packet in answers) and time.monotonic() < deadline:
        node = node1 if len(answers) % 2 else node2
        status, body, _ = http(f"{node.url}/socket.io/?EIO=4&transport=polling&sid={sid}")
        assert status == 200, body
        answers += packets(body)
    ack = next(packet for packet in answers if packet.startswith("431"))
    assert json.loads(ack[3:])[0]["data"]["roomId"] == room["id"]


def test_an_upgrade_through_the_other_node_reaches_the_session(api, node1, node2):
    alice, bob = api.register("alice"), api.register("bob")
    sid = open_polling_session(node1, alice.token)
    status, body, _ = http(f"{node1.url}/socket.io/?EIO=4&transport=polling&sid={sid}")
    assert status == 200 and body.startswith("40"), body
    connection = websocket.create_connection(
        f"ws://127.0.0.1:{node2.port}/socket.io/?EIO=4&transport=websocket&sid={sid}", timeout=WAIT)
    try:
        connection.send("2probe")
        assert connection.recv() == "3probe"
        connection.send("5")
        room = api.create_room(alice, other=bob)
        connection.send('427["room:join",' + json.dumps({"roomId": room["id"]}) + "]")
        deadline = time.monotonic() + WAIT
        while time.monotonic() < deadline:
            frame = connection.recv()
            if frame.startswith("437"):
                assert json.loads(frame[3:])[0]["data"]["roomId"] == room["id"]
                break
        else:
            pytest.fail("no ack for room:join over the forwarded WebSocket")
    finally:
        connection.close()


def test_unknown_node_and_forwarding_limits(node1, node2):
    status, body, _ = http(f"{node2.url}/socket.io/?EIO=4&transport=polling&sid=zzzzzzzz{'a' * 20}")
    assert (status, json.loads(body)) == (400, {"code": 1, "message": "Session ID unknown"})
    # A request already forwarded once is not forwarded again.
    status, body, _ = http(f"{node1.url}/socket.io/?EIO=4&transport=polling")
    sid = json.loads(body[1:])["sid"]
    status, body, _ = http(f"{node2.url}/socket.io/?EIO=4&transport=polling&sid={sid}",
                           headers={"X-Roomcast-Forwarded-By": "someone1"})
    assert (status, json.loads(body)) == (400, {"code": 1, "message": "Session ID unknown"})
    # A body over maxPayload is refused by the forwarding node itself.
    status, body, _ = http(f"{node2.url}/socket.io/?EIO=4&transport=polling&sid={sid}", "POST",
                           b"4" + b"x" * 1_000_001)
    assert status == 413, body


def chat(api, alice_socket, bob_socket, alice, bob):
    room = api.create_room(alice, other=bob)
    for socket_client in (alice_socket, bob_socket):
        assert ack_data(socket_client.call("room:join", {"roomId": room["id"]}))["roomId"] == room["id"]
    for sender, receiver in ((alice_socket, bob_socket), (bob_socket, alice_socket)):
        for _ in range(3):
            text = f"hi {uuid.uuid4().hex[:8]}"
            assert ack_data(sender.call("message:send", {"roomId": room["id"], "text": text}))["message"]["text"] == text
            receiver.wait_for("message:new", with_text(text))


@pytest.mark.parametrize("transports", [None, ["polling"]], ids=["default-transports", "polling-only"])
def test_python_socketio_through_round_robin_nginx(api, client, nginx, redis_server, transports):
    alice, bob = api.register("alice"), api.register("bob")
    sockets = []
    for account in (alice, bob):
        sockets.append(client(f"{account.username} via nginx").connect(
            nginx.url, auth={"token": account.token}, transports=transports))
    chat(api, sockets[0], sockets[1], alice, bob)
    expected = "polling" if transports == ["polling"] else "websocket"
    deadline = time.monotonic() + WAIT
    while any(s.sio.transport() != expected for s in sockets) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert [s.sio.transport() for s in sockets] == [expected, expected]
    # Round robin sent a request of a session to the node that does not hold it: forwarding
    # carried it. nginx logs a WebSocket request when it closes.
    for socket_client in sockets:
        socket_client.disconnect()
    owners = node_addresses(redis_server)
    deadline = time.monotonic() + WAIT
    while not forwarded_sessions(nginx, owners) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert forwarded_sessions(nginx, owners), (nginx.nodes_by_session(), owners)


def test_nginx_keeps_metrics_and_internal_routes_off_the_public_listener(nginx, node1):
    assert http(f"{node1.url}/metrics")[0] == 200
    for method, path in (("GET", "/metrics"), ("GET", "/metrics?x=1"), ("POST", "/api/internal/notifications")):
        status, body, _ = http(f"{nginx.url}{path}", method, b"{}" if method == "POST" else None)
        assert status == 404, (path, status, body)


def node_addresses(redis_server):
    """Node id → host:port, from the node registry in Redis."""
    def read(*arguments):
        return redis_cli("-c", "-p", str(redis_server.port), *arguments).split()  # -c: follows a cluster's MOVED
    return {node: read("HGET", "node:{" + node + "}", "address")[0].removeprefix("http://")
            for node in read("ZRANGE", "nodes:{registry}", "0", "-1")}


def forwarded_sessions(nginx, owners):
    """Sessions with a request that nginx sent to a node other than the session's own."""
    return [sid for sid, upstreams in nginx.nodes_by_session().items()
            if any(upstream != owners.get(sid[:8]) for upstream in upstreams)]
