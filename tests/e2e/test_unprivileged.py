"""The nodes as an operator runs them: an unprivileged user without capabilities (the image's
`roomcast`), and every outgoing connection with Nagle off.

Every test in this suite already talks to such nodes (`GatewayNode` drops root, see
`roomcast_e2e.unprivileged`); these tests check that the drop happened, and read back with
`getsockopt` what the nodes set on their own sockets. `TCP_NODELAY` was once asked for at the
socket level, where its number means `SO_DEBUG`: root got a debug option and Nagle's delay, and
any other user a refused Redis connection.
"""

import os
import threading
import time

import requests

from roomcast_e2e import WAIT, process_identity, socket_options


def redis_ports(redis_server):
    servers = getattr(redis_server, "servers", [redis_server])
    return [server.port for server in servers]


NAGLE_OFF = (1, 0)  # TCP_NODELAY set, SO_DEBUG not


def wait_for_connections(pid, ports, timeout=WAIT):
    """(TCP_NODELAY, SO_DEBUG) of `pid`'s connections to `ports`, once there is at least one."""
    deadline = time.monotonic() + timeout
    while True:
        options = socket_options(pid, ports)
        if options or time.monotonic() > deadline:
            return options
        time.sleep(0.05)


def test_nodes_run_without_root_or_capabilities(nodes):
    for node in nodes:
        uid, capabilities = process_identity(node.process.pid)
        if os.geteuid() == 0:
            assert uid != 0, f"node {node.name} runs as root"
        else:
            assert uid == os.geteuid()
        assert capabilities == 0, f"node {node.name} holds capabilities {capabilities:#x}"


def test_unprivileged_nodes_reach_redis(nodes):
    for node in nodes:
        response = requests.get(f"{node.url}/readyz", timeout=WAIT)
        assert response.status_code == 200, f"node {node.name}: {response.status_code} {response.text}"


def test_redis_connections_have_nagle_off(nodes, redis_server):
    for node in nodes:
        options = wait_for_connections(node.process.pid, redis_ports(redis_server))
        assert options, f"node {node.name} holds no connection to Redis"
        assert all(option == NAGLE_OFF for option in options), f"node {node.name}: (TCP_NODELAY, SO_DEBUG) per Redis connection {options}"


def test_forwarding_connection_has_nagle_off(node1, node2, api):
    """A poll sent to node 2 for node 1's session is relayed over a connection node 2 opens to
    node 1, held while the poll waits."""
    account = api.register("nagle")
    opened = requests.get(f"{node1.url}/socket.io/", params={"EIO": "4", "transport": "polling"}, timeout=WAIT)
    assert opened.status_code == 200, opened.text
    sid = opened.text[opened.text.index('"sid":"') + 7:].split('"', 1)[0]
    session = {"EIO": "4", "transport": "polling", "sid": sid}

    answers = []
    poll = threading.Thread(target=lambda: answers.append(
        requests.get(f"{node2.url}/socket.io/", params=session, timeout=WAIT)), daemon=True)
    poll.start()
    try:
        options = wait_for_connections(node2.process.pid, [node1.port])
    finally:
        # The CONNECT's answer ends the waiting poll.
        sent = requests.post(f"{node1.url}/socket.io/", params=session,
                             data=f'40{{"token":"{account.token}"}}', timeout=WAIT)
        poll.join(WAIT)
    assert sent.status_code == 200, sent.text
    assert answers and answers[0].status_code == 200 and answers[0].text.startswith("40"), answers
    assert options, "node 2 opened no connection to node 1 for the forwarded poll"
    assert all(option == NAGLE_OFF for option in options), f"(TCP_NODELAY, SO_DEBUG) per forwarding connection {options}"
