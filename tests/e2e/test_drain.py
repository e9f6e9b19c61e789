"""A drain brings every client back by itself: a rolling restart of two nodes behind nginx.

Each client is an ordinary one with its library's default reconnection, doing what an
application does: on every connection after its first it joins its rooms again with the last
offset it saw (`room:join {roomId, since}`). Six of them, through nginx
(docker/nginx/roomcast.conf.template, as test_load_balancer.py renders it): python-socketio over
long-polling only, over WebSocket only and with its default (polling, then the upgrade), and the
same three with socket.io-client (the reference JavaScript client) in headless Chromium.

Node 1 is sent SIGTERM while a third user keeps adding elements to the clients' room through the
other node's REST API; node 1 is started again on its port; then node 2 is sent SIGTERM the same
way. The clients on a drained node (after the first drain, all of them are on node 2) must come
back through nginx to the other node without being told to, and every client must end with every
element, each `element:created` once and in stream order, those added while it was away recovered
by offset. A drain that ended a session with Engine.IO's close packet failed this: python-socketio
takes that as the server ending the session on purpose and does not reconnect.

Every wait is on a condition, with minutes of patience for a loaded machine.
"""

import collections
import json
import logging
import os
import signal
import threading
import time

import pytest
import requests
import socketio

from roomcast_e2e import Api, GatewayNode, WAIT, offset_key, tail, wait_until
from socketio_client_js import bundle
from test_console import Browser, _executable
from test_load_balancer import Nginx

# Bound for a client to come back after a drain, and for a drained node to exit.
PATIENCE = 180
NOTE = {"type": "note", "positionX": 1, "positionY": 2, "width": 100, "height": 80, "content": "drain"}


def node_id(node):
    """The node's id: the first 8 characters of the Engine.IO session ids it gives out."""
    response = requests.get(f"{node.url}/socket.io/?EIO=4&transport=polling", timeout=WAIT)
    assert response.status_code == 200 and response.text.startswith("0{"), (response.status_code, response.text)
    return json.loads(response.text[1:])["sid"][:8]


class _Kept(logging.Handler):
    """Keeps a client library's log lines, warnings and up, in a bounded deque."""

    def __init__(self, sink):
        super().__init__(logging.WARNING)
        self.sink = sink

    def emit(self, record):
        self.sink.append(f"{record.created:.3f} {record.getMessage()}")


class PythonApp:
    """python-socketio with its default reconnection, as an application uses it."""

    def __init__(self, label, url, token, transports):
        self.label, self.url, self.token, self.transports = label, url, token, transports
        # What the client library says (why it dropped a transport), kept for a failure's message.
        self.said = collections.deque(maxlen=30)
        logger = logging.getLogger(f"drain.{label}")
        logger.setLevel(logging.INFO)
        logger.propagate = False
        logger.addHandler(_Kept(self.said))
        self.sio = socketio.Client(logger=logger, engineio_logger=logger)
        self.condition = threading.Condition()
        self.offsets = {}  # room → the last offset seen
        self.created = []  # (element id, offset) of each element:created, in arrival order
        self.connects = 0
        self.rejoined = 0  # the connection (by count) whose rejoin was acknowledged
        self.recovered = []
        self.reasons = []
        self.errors = []
        self.sio.on("connect", self._on_connect)
        self.sio.on("disconnect", self._on_disconnect)
        self.sio.on("element:created", self._on_created)
        self.sio.on("elements:batch", self._on_batch)

    def connect(self):
        self.sio.connect(self.url, auth={"token": self.token}, transports=self.transports, wait_timeout=WAIT)

    def _on_connect(self):
        with self.condition:
            self.connects += 1
            if self.offsets:
                # Outside the handler, which runs on the client's reading thread.
                self.sio.start_background_task(self._rejoin, self.connects, dict(self.offsets))
            self.condition.notify_all()

    def _rejoin(self, connection, offsets):
        try:
            for room, since in offsets.items():
                ack = self.sio.call("room:join", {"roomId": room, "since": since}, timeout=WAIT)
                assert ack.get("data", {}).get("roomId") == room, ack
                with self.condition:
                    self.recovered.append(ack["data"]["recovered"])
            with self.condition:
                self.rejoined = max(self.rejoined, connection)
                self.condition.notify_all()
        except Exception as error:  # noqa: BLE001 - recorded, and the state tells the test
            with self.condition:
                self.errors.append(f"rejoin on connection {connection}: {error!r}")

    def _on_disconnect(self, reason=None):
        with self.condition:
            self.reasons.append(str(reason))
            self.condition.notify_all()

    def _on_created(self, data):
        with self.condition:
            self.created.append((data["element"]["id"], data["offset"]))
            self.offsets[data["roomId"]] = data["offset"]
            self.condition.notify_all()

    def _on_batch(self, data):
        with self.condition:
            self.offsets[data["roomId"]] = data["offset"]
            self.condition.notify_all()

    def join(self, room):
        ack = self.sio.call("room:join", {"roomId": room}, timeout=WAIT)
        assert ack.get("data", {}).get("roomId") == room, ack
        wait_until(lambda: room in self.offsets, f"{self.label}: elements:batch of {room}", WAIT)
        with self.condition:
            self.rejoined = self.connects

    def state(self):
        with self.condition:
            return {"connects": self.connects, "rejoined": self.rejoined, "sid": self.sio.eio.sid or "",
                    "connected": self.sio.connected, "created": list(self.created), "reasons": list(self.reasons),
                    "recovered": list(self.recovered), "errors": list(self.errors), "said": list(self.said),
                    "transport": self.sio.transport() if self.sio.connected else None}

    def close(self):
        try:
            self.sio.shutdown()
        except Exception:  # noqa: BLE001 - teardown goes on
            pass


# The same application in the browser: socket.io-client with its default reconnection.
BROWSER_APP = """
window.drainTest = window.drainTest || {apps: {}};
window.drainTest.start = function (label, token, options) {
  const app = {connects: 0, rejoined: 0, offsets: {}, created: [], reasons: [], recovered: [], errors: []};
  const socket = io(location.origin, Object.assign({auth: {token: token}}, options));
  app.socket = socket;
  socket.on("connect", () => {
    app.connects += 1;
    const connection = app.connects;
    const rooms = Object.keys(app.offsets);
    if (rooms.length === 0) return;
    Promise.all(rooms.map((room) => socket.timeout(30000).emitWithAck("room:join", {roomId: room, since: app.offsets[room]})))
      .then((acks) => {
        acks.forEach((ack) => app.recovered.push(ack && ack.data ? ack.data.recovered : "no data: " + JSON.stringify(ack)));
        app.rejoined = Math.max(app.rejoined, connection);
      })
      .catch((error) => app.errors.push("rejoin on connection " + connection + ": " + error));
  });
  socket.on("disconnect", (reason) => app.reasons.push(reason));
  socket.on("connect_error", (error) => app.errors.push("connect_error: " + error.message));
  socket.on("element:created", (data) => {
    app.created.push([data.element.id, data.offset]);
    app.offsets[data.roomId] = data.offset;
  });
  socket.on("elements:batch", (data) => { app.offsets[data.roomId] = data.offset; });
  window.drainTest.apps[label] = app;
};
window.drainTest.state = function (label) {
  const app = window.drainTest.apps[label];
  const engine = app.socket.io.engine;
  return JSON.stringify({
    connects: app.connects, rejoined: app.rejoined, sid: app.socket.connected && engine ? engine.id : "",
    connected: app.socket.connected, created: app.created, reasons: app.reasons, recovered: app.recovered,
    errors: app.errors, transport: app.socket.connected && engine ? engine.transport.name : null,
  });
};
"""


class BrowserApp:
    """One socket.io-client socket in the shared Chromium page."""

    def __init__(self, browser, label, token, options):
        self.browser, self.label, self.token, self.options = browser, label, token, options

    def connect(self):
        self.browser.driver.execute_script("window.drainTest.start(arguments[0], arguments[1], arguments[2]);",
                                           self.label, self.token, self.options)
        wait_until(lambda: self.state()["connected"], lambda: f"{self.label} connected: {self.state()}", WAIT)

    def join(self, room):
        self.browser.driver.set_script_timeout(WAIT)
        ack = self.browser.driver.execute_async_script("""
            const [label, room, done] = arguments;
            const app = window.drainTest.apps[label];
            app.socket.timeout(30000).emitWithAck("room:join", {roomId: room}).then(done, (error) => done({error: String(error)}));
        """, self.label, room)
        assert ack.get("data", {}).get("roomId") == room, ack
        wait_until(lambda: self.browser.driver.execute_script(
            "return arguments[1] in window.drainTest.apps[arguments[0]].offsets;", self.label, room),
            f"{self.label}: elements:batch of {room}", WAIT)
        self.browser.driver.execute_script(
            "const app = window.drainTest.apps[arguments[0]]; app.rejoined = app.connects;", self.label)

    def state(self):
        state = json.loads(self.browser.driver.execute_script("return window.drainTest.state(arguments[0]);", self.label))
        state["created"] = [tuple(item) for item in state["created"]]
        return state

    def close(self):
        pass


@pytest.fixture
def stack(roomcast_binary, redis_server):
    """Two nodes of this test's own (it stops them) behind nginx; a started-again node goes in
    `nodes` in place of the one it replaces."""
    started = []
    nodes = {}

    def start(name, port=0):
        node = GatewayNode(name, roomcast_binary, redis_server.url, log_directory=redis_server.directory, port=port)
        started.append(node)
        return node

    nodes[1], nodes[2] = start("drain-1"), start("drain-2")
    nginx = Nginx([f"127.0.0.1:{nodes[1].port}", f"127.0.0.1:{nodes[2].port}"])
    try:
        yield nodes, start, nginx
    finally:
        nginx.stop()
        for node in started:
            node.stop()


@pytest.fixture
def browser(redis_server):
    chromium = _executable("CHROMIUM", "chromium", "chromium-browser")
    chromedriver = _executable("CHROMEDRIVER", "chromedriver")
    made = Browser("drain", chromium, chromedriver, redis_server.directory)
    try:
        yield made
    finally:
        made.quit()


# Two drains with minutes of patience each on a loaded machine (pytest.ini's 120 s is for one step).
@pytest.mark.timeout(900)
def test_a_rolling_restart_brings_every_client_back_with_nothing_lost(stack, browser):
    nodes, start, nginx = stack
    ids = {index: node_id(node) for index, node in nodes.items()}
    api = Api(nodes[2].url)
    alice, bob, carol = api.register("alice"), api.register("bob"), api.register("carol")
    room = api.create_room(carol, participants=[alice, bob])["id"]

    # A page of the balancer's origin (the clients' own origin, so no CORS) with the reference
    # client loaded into it.
    browser.driver.get(nginx.url + "/healthz")
    browser.driver.execute_script(bundle() + "\n;" + BROWSER_APP)
    assert browser.driver.execute_script("return typeof io === 'function' && typeof io.Manager === 'function';")

    apps = [
        PythonApp("python polling", nginx.url, alice.token, ["polling"]),
        PythonApp("python websocket", nginx.url, alice.token, ["websocket"]),
        PythonApp("python default", nginx.url, bob.token, None),
        BrowserApp(browser, "browser polling", alice.token, {"transports": ["polling"]}),
        BrowserApp(browser, "browser websocket", bob.token, {"transports": ["websocket"]}),
        BrowserApp(browser, "browser default", bob.token, {}),
    ]
    try:
        for app in apps:
            app.connect()
            app.join(room)
        for app in apps:
            expected = "polling" if "polling" in app.label else "websocket"
            wait_until(lambda: app.state()["transport"] == expected, lambda: f"{app.label} on {expected}: {app.state()}", WAIT)

        created = []  # element ids in the order the REST API created them (the room's stream order)

        def add_element(through):
            response = requests.post(f"{through.url}/api/rooms/{room}/elements", json=NOTE,
                                     headers={"Authorization": f"Bearer {carol.token}"}, timeout=WAIT)
            assert response.status_code == 201, (response.status_code, response.text)
            created.append(response.json()["data"]["id"])

        add_element(nodes[2])
        for app in apps:
            wait_until(lambda: [e for e, _ in app.state()["created"]] == created, f"{app.label} got the first element", WAIT)

        for victim, survivor in ((1, 2), (2, 1)):
            drained, other = nodes[victim], nodes[survivor]
            states = {app.label: app.state() for app in apps}
            on_victim = [app for app in apps if states[app.label]["sid"].startswith(ids[victim])]
            if victim == 2:
                assert len(on_victim) == len(apps), f"after node 1's drain every client is on node 2: {states}"
            print(f"\nSIGTERM node {victim} ({ids[victim]}): on it {[app.label for app in on_victim]}", flush=True)
            started = time.monotonic()
            drained.process.send_signal(signal.SIGTERM)

            # Elements keep coming through the other node while the clients are away, and a few
            # after all of them are back.
            def back(app):
                state = app.state()
                return (state["connected"] and state["sid"].startswith(ids[survivor])
                        and state["connects"] > states[app.label]["connects"] and state["rejoined"] == state["connects"])

            deadline = time.monotonic() + PATIENCE
            while not all(back(app) for app in on_victim):
                assert time.monotonic() < deadline, "not back within %d s: %s\nnode %d (drained):\n%s\nnode %d:\n%s\nnginx:\n%s" % (
                    PATIENCE, {app.label: app.state() for app in on_victim if not back(app)},
                    victim, tail(drained.log_path), survivor, tail(other.log_path),
                    tail(os.path.join(nginx.directory, "error.log"), 20))
                add_element(other)
                # An element, then the clients' state again a little later (a pace for the
                # writer, not a wait for something: the loop's condition is what it waits for).
                until = time.monotonic() + 0.25
                while time.monotonic() < until and not all(back(app) for app in on_victim):
                    time.sleep(0.05)
            for app in on_victim:
                state = app.state()
                print(f"     {app.label} back on node {survivor} after {time.monotonic() - started:.1f} s: "
                      f"connections {states[app.label]['connects']} -> {state['connects']}, disconnect reasons "
                      f"{state['reasons']}, recovered {state['recovered'][-1:]}", flush=True)
            for _ in range(3):
                add_element(other)

            # The drained node ends by itself.
            status = drained.process.wait(timeout=PATIENCE)
            assert status == 0, f"node {victim} exited with {status}:\n{tail(drained.log_path)}"
            # Every client is on the other node now, back in its room: also one whose session
            # was there but whose WebSocket nginx had sent through the drained node (which relays
            # it to the owner) and so ended with it.
            for app in apps:
                wait_until(lambda: app.state()["connected"] and app.state()["sid"].startswith(ids[survivor])
                           and app.state()["rejoined"] == app.state()["connects"],
                           lambda: f"{app.label} settled on node {survivor}: {app.state()}", PATIENCE)

            # Every client has every element once, in the stream's order, whether it stayed or
            # came back (then recovered by offset).
            for app in apps:
                wait_until(lambda: len(app.state()["created"]) >= len(created),
                           lambda: f"{app.label}: {len(app.state()['created'])} of {len(created)} elements", PATIENCE)
                state = app.state()
                assert [element for element, _ in state["created"]] == created, (app.label, state)
                offsets = [offset_key(offset) for _, offset in state["created"]]
                assert offsets == sorted(set(offsets)), (app.label, state["created"])
                assert not state["errors"], (app.label, state["errors"])
            for app in on_victim:
                assert app.state()["recovered"][-1] is True, (app.label, app.state())

            if victim == 1:
                # Started again, and back in nginx's rotation before the next node stops, as a
                # rolling restart goes: nginx counts the node's port as failed for `fail_timeout`
                # (10 s) after the refused connections of its drain.
                nodes[1] = start("drain-1-again", port=drained.port)
                ids[1] = node_id(nodes[1])

                def through_nginx_to_node_1():
                    try:
                        return node_id(nginx) == ids[1]
                    except (requests.RequestException, AssertionError):
                        return False
                wait_until(through_nginx_to_node_1, "a handshake through nginx reaches node 1 again", PATIENCE)
    finally:
        for app in apps:
            app.close()
