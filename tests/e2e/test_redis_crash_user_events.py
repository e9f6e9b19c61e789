"""Redis SIGKILLed and started again (AOF, appendfsync always) under two nodes, with the
unmodified python-socketio client: the same sockets, never reconnected, get room events,
per-user events and notifications again on both nodes, and the per-user events published while a
node's pub/sub link was down are read back from the user's stream, each once.

How long the nodes' pub/sub links stay down after a restart is up to timing, so the second test
makes that window certain: Redis comes back refusing SSUBSCRIBE (an ACL) while commands work,
elements are created, then SSUBSCRIBE is allowed again and the subscribers reconnect."""

import threading

import pytest
import requests

import roomcast_e2e

from roomcast_e2e import Api, GatewayNode, RedisServer, ack_data, redis_cli

NOTE = {"type": "note", "positionX": 1, "positionY": 2, "width": 100, "height": 80}
PATIENCE = 60.0  # generous: the machine may be busy; nothing here waits on a fixed delay


@pytest.fixture
def crashable(roomcast_binary):
    """A Redis of its own (with an AOF) and two nodes on it, so killing it disturbs no other test."""
    redis = RedisServer(arguments=("--appendonly", "yes", "--appendfsync", "always"))
    nodes = []
    try:
        for name in ("crash-1", "crash-2"):
            nodes.append(GatewayNode(name, roomcast_binary, redis.url, log_directory=redis.directory))
        yield redis, nodes
    finally:
        for node in nodes:
            node.stop()
        redis.destroy()


def wait_until(condition, what):
    roomcast_e2e.wait_until(condition, what, PATIENCE)


def ready(node):
    try:
        return requests.get(node.url + "/readyz", timeout=5).status_code == 200
    except requests.RequestException:
        return False


def two_users_on_both_nodes(node1, node2, connect):
    """Alice and Bob in a room, each with a socket on each node; Alice's on node 1 and Bob's on
    node 2 have joined it."""
    api = Api(node1.url)
    alice = api.register("alice")
    bob = api.register("bob")
    room = api.create_room(alice, other=bob)["id"]
    sockets = {
        "alice@1": connect(node1, alice), "alice@2": connect(node2, alice),
        "bob@1": connect(node1, bob), "bob@2": connect(node2, bob),
    }
    sockets["alice@1"].call("room:join", {"roomId": room})
    sockets["bob@2"].call("room:join", {"roomId": room})
    return api, alice, bob, room, sockets


def test_user_and_notification_events_after_a_redis_crash(crashable, connect):
    redis, (node1, node2) = crashable
    api, alice, bob, room, sockets = two_users_on_both_nodes(node1, node2, connect)

    # Alice creates elements one after another while Redis is killed and started again.
    acked, stop = [], threading.Event()

    def traffic():
        while not stop.is_set() and len(acked) < 500:
            try:
                ack = sockets["alice@1"].call("element:create", {"roomId": room, "element": NOTE}, timeout=15)
            except Exception:  # a timed-out call is a refusal: only acknowledged creates count
                continue
            if "data" in ack:
                acked.append(ack["data"]["element"]["id"])

    worker = threading.Thread(target=traffic, daemon=True)
    worker.start()
    wait_until(lambda: len(acked) >= 5, "5 creates before the crash")
    redis.kill()
    redis.start_again()
    before = len(acked)
    wait_until(lambda: ready(node1) and ready(node2), "both nodes ready again")
    wait_until(lambda: len(acked) >= before + 10, "10 creates after the restart")
    stop.set()
    worker.join(timeout=PATIENCE)
    ids = set(acked)

    # Room events on both nodes, per-user events on every socket of both users, each once.
    for name in ("alice@1", "bob@2"):
        wait_until(lambda: ids <= {p["element"]["id"] for p in sockets[name].received("element:created")},
                   f"{name}: element:created for every acknowledged create")
    for name, socket_client in sockets.items():
        wait_until(lambda: ids <= {p["elementId"] for p in socket_client.received("element:created:global")},
                   f"{name}: element:created:global for every acknowledged create")
        seen = [p["elementId"] for p in socket_client.received("element:created:global")]
        assert len(seen) == len(set(seen)), f"{name}: an element:created:global came twice"
        assert socket_client.sio.connected, f"{name} was disconnected"

    # Notifications on both of Alice's nodes: Bob's heart, then her read-all's badge.
    element = acked[-1]
    assert ack_data(sockets["bob@1"].call("element:reaction:toggle", {"roomId": room, "elementId": element}))["action"] == "added"
    for name in ("alice@1", "alice@2"):
        sockets[name].wait_for("notification:new", lambda p: p["notification"].get("elementId") == element, timeout=PATIENCE)
    assert api.request("POST", "/api/notifications/read-all", token=alice.token).status_code == 200
    for name in ("alice@1", "alice@2"):
        wait_until(lambda: (sockets[name].received("badge:updated") or [{}])[-1].get("unreadCount") == 0,
                   f"{name}: badge:updated to 0")


def test_per_user_events_published_while_the_links_are_down_are_read_back(crashable, connect):
    redis, (node1, node2) = crashable
    api, alice, bob, room, sockets = two_users_on_both_nodes(node1, node2, connect)

    redis.kill()
    # Back with every command but SSUBSCRIBE: the nodes serve requests, their subscribers cannot
    # subscribe again, so what is published now reaches no node over pub/sub.
    redis.start_again(("--user", "default", "on", "nopass", "~*", "&*", "+@all", "-ssubscribe"))
    wait_until(lambda: ready(node1) and ready(node2), "both nodes ready again")
    acked = []
    def create():
        try:
            ack = sockets["alice@1"].call("element:create", {"roomId": room, "element": NOTE}, timeout=15)
        except Exception:
            return False
        if "data" in ack:
            acked.append(ack["data"]["element"]["id"])
        return len(acked) >= 3
    wait_until(create, "3 creates while the subscribers are refused")
    redis_cli("-p", str(redis.port), "ACL", "SETUSER", "default", "+ssubscribe")
    ids = set(acked)

    for name in ("alice@1", "bob@2"):
        wait_until(lambda: ids <= {p["element"]["id"] for p in sockets[name].received("element:created")},
                   f"{name}: element:created read back from the room's stream")
    for name, socket_client in sockets.items():
        wait_until(lambda: ids <= {p["elementId"] for p in socket_client.received("element:created:global")},
                   f"{name}: element:created:global read back from the user's stream")
        seen = [p["elementId"] for p in socket_client.received("element:created:global")]
        assert len(seen) == len(set(seen)), f"{name}: an element:created:global came twice"
        assert socket_client.sio.connected, f"{name} was disconnected"
