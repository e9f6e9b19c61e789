"""Fixtures: a private Redis, two gateway nodes on it, REST helpers and Socket.IO clients.

The processes are started once per test session and stopped (SIGTERM, then SIGKILL after 5 s)
whatever the tests did. Each test registers its own users and rooms, so tests share nothing.

The gateway binary is `ROOMCAST_BINARY` or `$(swift build --show-bin-path)/roomcast` (computed
once); scripts/test.sh builds it before running this suite.
"""

import os
import subprocess
import threading

import pytest

from roomcast_e2e import Api, ack_data, GatewayNode, SocketClient, tail, private_redis

REPOSITORY = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

# Nodes alive in this session, for the logs attached to failed tests.
_NODES = []


def _roomcast_binary():
    binary = os.environ.get("ROOMCAST_BINARY")
    if not binary:
        try:
            result = subprocess.run(["swift", "build", "--show-bin-path"], cwd=REPOSITORY,
                                    capture_output=True, text=True, timeout=120, check=True)
        except (OSError, subprocess.SubprocessError) as error:
            pytest.fail(f"cannot locate the roomcast binary (swift build --show-bin-path): {error}; set ROOMCAST_BINARY")
        binary = os.path.join(result.stdout.strip().splitlines()[-1], "roomcast")
    if not os.access(binary, os.X_OK):
        pytest.fail(f"no roomcast binary at {binary}: run `swift build` first or set ROOMCAST_BINARY")
    return binary


@pytest.fixture(scope="session")
def roomcast_binary():
    return _roomcast_binary()


@pytest.fixture(scope="session")
def redis_server():
    """A private redis-server, or a 3-master Redis Cluster under ROOMCAST_TEST_REDIS=cluster."""
    server = private_redis()
    try:
        yield server
    finally:
        server.destroy()


@pytest.fixture(scope="session")
def nodes(roomcast_binary, redis_server):
    """Two gateway nodes sharing the private Redis."""
    started = []
    try:
        for name in ("1", "2"):
            node = GatewayNode(name, roomcast_binary, redis_server.url, log_directory=redis_server.directory)
            started.append(node)
            _NODES.append(node)
        yield started
    finally:
        for node in started:
            node.stop()
        _NODES.clear()


@pytest.fixture
def node1(nodes):
    assert nodes[0].is_running(), "gateway node 1 has exited:\n" + tail(nodes[0].log_path)
    return nodes[0]


@pytest.fixture
def node2(nodes):
    assert nodes[1].is_running(), "gateway node 2 has exited:\n" + tail(nodes[1].log_path)
    return nodes[1]


@pytest.fixture
def api(node1):
    """REST on node 1 (any node serves the same data)."""
    return Api(node1.url)


@pytest.fixture
def api2(node2):
    return Api(node2.url)


@pytest.fixture
def client():
    """A factory of recording Socket.IO clients, all disconnected after the test."""
    made = []

    def make(name="client"):
        socket_client = SocketClient(name=name)
        made.append(socket_client)
        return socket_client

    yield make
    # In parallel: a client's close handshake may wait a few seconds for the server's reply.
    closers = [threading.Thread(target=socket_client.disconnect, daemon=True) for socket_client in made]
    for closer in closers:
        closer.start()
    for closer in closers:
        closer.join(timeout=30)


@pytest.fixture
def connect(client):
    """`connect(node, account, name=...)`: a client connected with the account's token in the
    CONNECT auth object, ready to use."""
    def make(node, account, name=None):
        socket_client = client(name or f"{account.username}@node{node.name}")
        return socket_client.connect(node.url, auth={"token": account.token})
    return make


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    """Attaches the tail of each node's log to a failed test's report."""
    outcome = yield
    report = outcome.get_result()
    if report.failed:
        for node in list(_NODES):
            state = "running" if node.is_running() else f"exited {node.process.returncode}"
            report.sections.append((f"roomcast node {node.name} ({state}), last lines", tail(node.log_path)))


class Pair:
    """Alice on node 1 and Bob on node 2, both joined to a room they share."""

    def __init__(self, alice, bob, room, alice_socket, bob_socket):
        self.alice, self.bob, self.room = alice, bob, room
        self.alice_socket, self.bob_socket = alice_socket, bob_socket

    @property
    def room_id(self):
        return self.room["id"]


@pytest.fixture
def pair(api, connect, node1, node2):
    alice = api.register("alice")
    bob = api.register("bob")
    room = api.create_room(alice, other=bob)
    alice_socket = connect(node1, alice)
    bob_socket = connect(node2, bob)
    for socket_client in (alice_socket, bob_socket):
        ack = socket_client.call("room:join", {"roomId": room["id"]})
        assert ack_data(ack).get("roomId") == room["id"], f"{socket_client.name}: room:join ack {ack!r}"
    return Pair(alice, bob, room, alice_socket, bob_socket)
