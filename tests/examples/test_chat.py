"""Examples/Chat's contract, checked with the unmodified python-socketio client over WebSocket
and over long-polling.

The example's binary is `CHAT_BINARY`, or `Examples/Chat/.build/debug/chat`; scripts/test.sh
builds it before running this file. Each test starts its own server on a free port.
"""

import os
import queue
import socket
import subprocess
import time

import pytest
import socketio

REPOSITORY = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BINARY = os.environ.get("CHAT_BINARY", os.path.join(REPOSITORY, "Examples", "Chat", ".build", "debug", "chat"))
TRANSPORTS = [["websocket"], ["polling"]]
# Generous: every wait below ends as soon as its condition holds; this only bounds a failure.
PATIENCE = 60


def free_port():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@pytest.fixture
def chat_url():
    if not os.access(BINARY, os.X_OK):
        pytest.fail(f"no chat binary at {BINARY}: swift build --package-path Examples/Chat, or set CHAT_BINARY")
    port = free_port()
    process = subprocess.Popen([BINARY, "--port", str(port)], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        seen = []
        for line in process.stdout:
            seen.append(line)
            if line.startswith("chat ready on"):
                break
        else:
            pytest.fail("chat exited before it was ready:\n" + "".join(seen))
        yield f"http://127.0.0.1:{port}"
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()


class Member:
    """A connected client whose `joined` and `said` events are queued as they come."""

    def __init__(self, url, transports, name):
        self.client = socketio.Client(reconnection=False)
        self.events = queue.Queue()
        self.client.on("joined", lambda data: self.events.put(("joined", data)))
        self.client.on("said", lambda data: self.events.put(("said", data)))
        self.client.on("ping", lambda data: {"pong": self.name, "got": data})
        self.name = name
        self.client.connect(url, transports=transports, auth={"name": name}, wait_timeout=PATIENCE)

    def next_event(self):
        return self.events.get(timeout=PATIENCE)

    def nothing_pending(self):
        return self.events.empty()

    def call(self, event, data):
        return self.client.call(event, data, timeout=PATIENCE)

    def close(self):
        self.client.disconnect()


@pytest.fixture
def members(chat_url):
    made = []

    def make(transports, name):
        member = Member(chat_url, transports, name)
        made.append(member)
        return member

    yield make
    for member in made:
        member.close()


@pytest.mark.parametrize("transports", TRANSPORTS, ids=["websocket", "polling"])
def test_connect_needs_a_name(chat_url, transports):
    client = socketio.Client(reconnection=False)
    errors = []
    client.on("connect_error", lambda data: errors.append(data))
    with pytest.raises(socketio.exceptions.ConnectionError):
        client.connect(chat_url, transports=transports, auth={}, wait_timeout=PATIENCE)
    # The refusal's message reaches the client's connect_error handler.
    assert any("a name is required" in str(error) for error in errors), errors
    client.connect(chat_url, transports=transports, auth={"name": "ann"}, wait_timeout=PATIENCE)
    assert client.connected
    client.disconnect()


@pytest.mark.parametrize("transports", TRANSPORTS, ids=["websocket", "polling"])
def test_join_and_say(members, transports):
    ann = members(transports, "ann")
    bob = members(transports, "bob")
    assert ann.call("join", {"room": "lobby"}) == {"ok": True}
    assert bob.call("join", {"room": "lobby"}) == {"ok": True}
    # The others in the room hear of a join; the joiner does not.
    assert ann.next_event() == ("joined", {"room": "lobby", "name": "bob"})
    assert bob.call("say", {"room": "lobby", "text": "hello"}) == {"ok": True}
    assert ann.next_event() == ("said", {"room": "lobby", "name": "bob", "text": "hello"})
    # Bytes travel as a binary attachment, and come back as bytes.
    assert ann.call("say", {"room": "lobby", "text": b"\x00\x01\xff"}) == {"ok": True}
    assert bob.next_event() == ("said", {"room": "lobby", "name": "ann", "text": b"\x00\x01\xff"})
    # Nobody hears their own messages, and a room's messages stay in the room.
    carl = members(transports, "carl")
    assert carl.call("join", {"room": "elsewhere"}) == {"ok": True}
    assert bob.call("say", {"room": "lobby", "text": "again"}) == {"ok": True}
    assert ann.next_event() == ("said", {"room": "lobby", "name": "bob", "text": "again"})
    assert bob.nothing_pending() and carl.nothing_pending()


@pytest.mark.parametrize("transports", TRANSPORTS, ids=["websocket", "polling"])
def test_ping_me(members, transports):
    ann = members(transports, "ann")
    # The server calls `ping` on the client and answers with what the client's ack returned.
    assert ann.call("ping-me", {}) == {"pong": "ann", "got": {}}
