"""`http.max_connections_per_address`: one address cannot hold a node's descriptors.

Counted by the connection's peer, a connection over the limit is closed as it is accepted; a
sibling node's address is not counted (its forwarded connections stand for clients counted
where they connected), which is why these clients connect from 127.0.0.2, not from the nodes'
127.0.0.1. With `rate.trust_forwarded_for`, a connection counts under the client its first
request's `X-Forwarded-For` names, and one over the limit is answered 429 and closed.
"""

import socket
import time

import pytest

from roomcast_e2e import GatewayNode, WAIT

LIMIT = 3
CLIENT = "127.0.0.2"


@pytest.fixture(scope="module")
def capped_node(roomcast_binary, redis_server):
    node = GatewayNode("capped", roomcast_binary, redis_server.url, log_directory=redis_server.directory, settings={
        "ROOMCAST_HTTP_MAX_CONNECTIONS_PER_ADDRESS": str(LIMIT),
    })
    try:
        yield node
    finally:
        node.stop()


@pytest.fixture(scope="module")
def proxied_node(roomcast_binary, redis_server):
    node = GatewayNode("proxied", roomcast_binary, redis_server.url, log_directory=redis_server.directory, settings={
        "ROOMCAST_HTTP_MAX_CONNECTIONS_PER_ADDRESS": str(LIMIT),
        "ROOMCAST_RATE_TRUST_FORWARDED_FOR": "true",
    })
    try:
        yield node
    finally:
        node.stop()


def connect_from(address, node):
    return socket.create_connection(("127.0.0.1", node.port), timeout=WAIT, source_address=(address, 0))


def get(connection, forwarded_for=None):
    """One keep-alive GET /healthz on `connection`: the status line, or b"" once it is closed."""
    extra = f"X-Forwarded-For: {forwarded_for}\r\n" if forwarded_for else ""
    try:
        connection.sendall(f"GET /healthz HTTP/1.1\r\nHost: x\r\n{extra}\r\n".encode())
        received = b""
        while b"\r\n\r\n" not in received:
            chunk = connection.recv(4096)
            if not chunk:
                return received.split(b"\r\n")[0]
            received += chunk
        head, _, rest = received.partition(b"\r\n\r\n")
        length = int(next((line.split(b":")[1] for line in head.split(b"\r\n") if line.lower().startswith(b"content-length")), b"0"))
        while len(rest) < length:
            rest += connection.recv(4096)
        return head.split(b"\r\n")[0]
    except (ConnectionResetError, BrokenPipeError):
        return b""


def closed_by_server(connection):
    connection.settimeout(WAIT)
    try:
        return connection.recv(1) == b""
    except ConnectionResetError:
        return True


def test_connections_over_the_limit_are_closed_as_they_are_accepted(capped_node):
    held = [connect_from(CLIENT, capped_node) for _ in range(LIMIT)]
    for connection in held:
        assert get(connection) == b"HTTP/1.1 200 OK"
    over = connect_from(CLIENT, capped_node)
    assert closed_by_server(over), "a connection over the limit was kept"
    # The held ones still serve, and so does another address.
    assert get(held[0]) == b"HTTP/1.1 200 OK"
    other = connect_from("127.0.0.3", capped_node)
    assert get(other) == b"HTTP/1.1 200 OK"
    other.close()
    # A closed connection gives its place back (counted down as the node sees the close).
    held.pop().close()
    deadline = time.monotonic() + WAIT
    while True:
        again = connect_from(CLIENT, capped_node)
        if get(again) == b"HTTP/1.1 200 OK":
            break
        again.close()
        assert time.monotonic() < deadline, "the closed connection's place never came back"
        time.sleep(0.05)
    for connection in held + [again]:
        connection.close()
    assert capped_node.is_running()


def test_sibling_nodes_are_not_counted(capped_node):
    """The nodes advertise 127.0.0.1: its connections, as a sibling's forwarded ones, are free
    (once the node has read the live nodes after its first heartbeat)."""
    deadline = time.monotonic() + WAIT
    while True:
        held = [connect_from("127.0.0.1", capped_node) for _ in range(LIMIT + 2)]
        served = [get(connection) == b"HTTP/1.1 200 OK" for connection in held]
        for connection in held:
            connection.close()
        if all(served):
            return
        assert time.monotonic() < deadline, f"127.0.0.1 is still counted: {served}"
        time.sleep(0.1)


def test_behind_a_trusted_proxy_the_forwarded_client_is_counted(proxied_node):
    held = [connect_from("127.0.0.1", proxied_node) for _ in range(LIMIT)]
    for connection in held:
        assert get(connection, forwarded_for="198.51.100.1, 203.0.113.7") == b"HTTP/1.1 200 OK"
    over = connect_from("127.0.0.1", proxied_node)
    assert get(over, forwarded_for="203.0.113.7") == b"HTTP/1.1 429 Too Many Requests"
    assert closed_by_server(over)
    # Only the last entry counts: it is the one the node's own proxy wrote.
    other = connect_from("127.0.0.1", proxied_node)
    assert get(other, forwarded_for="203.0.113.7, 203.0.113.8") == b"HTTP/1.1 200 OK"
    for connection in held + [other]:
        connection.close()
