"""Smoke test of a running compose stack (docker/docker-compose*.yml) through its nginx.

Run by scripts/compose-test.sh once the stack is up:

    python tests/compose/smoke.py --base http://127.0.0.1:8080 --node docker_node1_1 --node docker_node2_1
    python tests/compose/smoke.py --base https://127.0.0.1:8443 --ca ca.crt --redirect-from http://127.0.0.1:8080 ...

With the unmodified python-socketio client (threaded) and requests, through nginx only (over
https:// and wss:// with `--ca`, the test CA the certificate was made with):
/readyz 200 and /metrics 404; two users register; each connects twice, once with the default
transports (polling, then the upgrade to WebSocket) and once polling only; a room over REST,
`room:join` on all four sockets, `element:create` -> `element:created`, a heart over Socket.IO and
one over REST -> `element:reaction:added`, `message:send` -> `message:new`, the chat history over
REST. Then the node holding the most of those sockets is stopped (`podman stop`, a graceful
drain): each socket comes back by itself (python-socketio's own reconnection) through nginx to
the other node (its new Engine.IO session id starts with that node's id), joins the room again
from the last offset it saw, as an application does on every connection after its first, and
receives new events; then the node is started again and must be ready. Every wait is on a
condition, bounded.

Prints one line per check, `ALL OK` at the end; exits non-zero on the first failure.
"""
import argparse
import json
import subprocess
import threading
import time
import uuid

import requests
import socketio

WAIT = 20  # seconds, for any one event or answer


def ok(what, detail=""):
    print(f"OK   {what} {detail}".rstrip(), flush=True)


def podman(*args, timeout=60):
    return subprocess.run(["podman", *args], check=True, capture_output=True, text=True,
                          timeout=timeout).stdout.strip()


def container_ip(container):
    return podman("inspect", "-f", "{{range .NetworkSettings.Networks}}{{.IPAddress}} {{end}}",
                  container).split()[0]


def wait_until(what, predicate, timeout=WAIT, interval=0.1):
    """Polls predicate (a condition, not a delay) until it is truthy or the time is up."""
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout} s waiting for {what}")
        time.sleep(interval)


def wait_ready(url, timeout=60, ca=None):
    last = None

    def ready():
        nonlocal last
        try:
            r = requests.get(url, timeout=2, verify=ca or True)
            last = f"{r.status_code} {r.text[:100]}"
            return r.status_code == 200
        except requests.RequestException as e:
            last = repr(e)
            return False
    try:
        wait_until(f"{url} to answer 200", ready, timeout, 0.2)
    except AssertionError as e:
        raise AssertionError(f"{e}; last answer: {last}") from None
    return last


def https_session(ca):
    """A requests session that trusts `ca` (None: the system's CAs). python-engineio takes its
    `verify` for https:// and for wss://; without the environment (trust_env), since
    REQUESTS_CA_BUNDLE or CURL_CA_BUNDLE, when set, would replace it on every request."""
    session = requests.Session()
    if ca:
        session.verify = ca
        session.trust_env = False
    return session


def node_id_at(url, ca=None):
    """The id of the node that answers a handshake at `url` (a node's own address, or nginx's:
    then whichever node nginx chose): an Engine.IO session id starts with its node's id."""
    r = requests.get(f"{url}/socket.io/?EIO=4&transport=polling", timeout=WAIT, verify=ca or True)
    assert r.status_code == 200 and r.text.startswith("0"), (url, r.status_code, r.text[:200])
    return json.loads(r.text[1:])["sid"][:8]


def reach(base, node_url, ca=None, timeout=60):
    """Handshakes through nginx at `base` until one lands on the node at `node_url` (a node
    recreated with a new address: nginx must have looked its name up again). Returns how many
    handshakes it took."""
    wanted = node_id_at(node_url)
    tries = 0

    def landed():
        nonlocal tries
        tries += 1
        try:
            return node_id_at(base, ca) == wanted
        except (requests.RequestException, AssertionError):
            return False
    wait_until(f"a handshake through {base} to reach node {wanted} at {node_url}", landed, timeout, 0.2)
    return tries


class Client:
    """One python-socketio client; records every event it gets, and the last offset per room."""

    def __init__(self, label, base, token, transports, ca=None):
        self.label, self.base, self.token, self.transports, self.ca = label, base, token, transports, ca
        self.cond = threading.Condition()
        self.events = []
        self.offsets = {}
        self.rooms = set()
        self.connects = 0
        self.rejoined = 0  # the connection (by count) whose rejoin of self.rooms was acknowledged
        self.recovered = None
        self.disconnects = 0
        self.disconnect_reason = None
        session = https_session(self.ca)
        self.sio = socketio.Client(reconnection=True, reconnection_delay=0.5, reconnection_delay_max=2,
                                   randomization_factor=0.2, http_session=session)
        self.sio.on("connect", self._on_connect)
        self.sio.on("disconnect", self._on_disconnect)
        self.sio.on("*", self._on_event)

    def _on_connect(self):
        with self.cond:
            self.connects += 1
            if self.rooms:
                # As an application does: join its rooms again, from the last offset it saw
                # (outside this handler, which runs on the client's reading thread).
                self.sio.start_background_task(self._rejoin, self.connects)
            self.cond.notify_all()

    def _rejoin(self, connection):
        try:
            for room in sorted(self.rooms):
                ack = self.call("room:join", {"roomId": room, "since": self.offsets.get(room)}, connection=connection)
                assert ack.get("roomId") == room, ack
            with self.cond:
                self.rejoined = max(self.rejoined, connection)
                self.recovered = ack.get("recovered")
                self.cond.notify_all()
        except (AssertionError, socketio.exceptions.SocketIOError) as e:
            print(f"     {self.label}: join again failed ({e!r}); the next connection will try", flush=True)

    def _on_disconnect(self, *reason):
        with self.cond:
            self.disconnects += 1
            self.disconnect_reason = reason[0] if reason else None
            self.cond.notify_all()

    def _on_event(self, event, data=None):
        with self.cond:
            self.events.append((event, data))
            if isinstance(data, dict) and data.get("roomId") and data.get("offset") is not None:
                self.offsets[data["roomId"]] = data["offset"]
            self.cond.notify_all()

    def connect(self):
        self.sio.connect(self.base, auth={"token": self.token}, transports=self.transports,
                         socketio_path="socket.io", wait_timeout=WAIT)

    def settled(self, node_id):
        """Connected to that node and, if it reconnected, back in its rooms."""
        return self.sio.connected and self.sid.startswith(node_id) and self.rejoined == self.connects

    def try_connect(self):
        """One connection attempt; a failed one is said and cleaned up."""
        try:
            self.connect()
            return True
        except socketio.exceptions.ConnectionError as e:
            print(f"     {self.label}: connect failed ({e}), trying again", flush=True)
            try:
                self.sio.eio.disconnect(abort=True)  # an Engine.IO session left half open
            except Exception:  # noqa: BLE001 - whatever state the failed attempt left
                pass
            return False

    @property
    def sid(self):
        return self.sio.eio.sid or ""

    def call(self, event, data, timeout=WAIT, connection=None):
        """Emits with an ack. Until `timeout`, a send lost with a connection (the client
        reconnects by itself) is sent again; element:create and message:send carry a requestId,
        so the server answers a repeat with the first answer and changes nothing. With
        `connection` (a count of connects), only on that connection: the rejoin of a connection
        that python-socketio has replaced (it can report a connect and then, without a
        disconnect, another) is left to the newer one's, or both would replay the same events."""
        if event in ("element:create", "message:send"):
            data = {**data, "requestId": uuid.uuid4().hex}
        deadline = time.monotonic() + timeout
        while True:
            if connection is not None and connection != self.connects:
                raise AssertionError(f"{self.label} {event}: connection {connection} was replaced by {self.connects}")
            try:
                if not self.sio.connected:
                    raise socketio.exceptions.BadNamespaceError("not connected")
                ack = self.sio.call(event, data, timeout=min(10, max(1, deadline - time.monotonic())))
                break
            except socketio.exceptions.SocketIOError as e:
                if time.monotonic() > deadline:
                    raise AssertionError(f"{self.label} {event}: no answer within {timeout} s ({e!r})") from None
                time.sleep(0.2)
        assert isinstance(ack, dict) and "data" in ack, f"{self.label} {event}: {ack}"
        return ack["data"]

    def join(self, room):
        ack = self.call("room:join", {"roomId": room})
        assert ack.get("roomId") == room, ack
        with self.cond:
            self.rooms.add(room)
            self.rejoined = self.connects
        return ack

    def wait_event(self, event, predicate=lambda d: True, timeout=WAIT, after=0):
        """The first `event` at index >= after whose data satisfies predicate."""
        deadline = time.monotonic() + timeout
        with self.cond:
            while True:
                for e, d in self.events[after:]:
                    if e == event and predicate(d):
                        return d
                left = deadline - time.monotonic()
                if left <= 0:
                    got = [e for e, _ in self.events[after:]]
                    raise AssertionError(f"{self.label} got no {event} within {timeout} s; got {got}")
                self.cond.wait(left)

    def mark(self):
        with self.cond:
            return len(self.events)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--base", default="http://127.0.0.1:8080")
    parser.add_argument("--node", action="append", required=True,
                        help="a gateway node's container (twice: the two nodes)")
    parser.add_argument("--ca", help="the CA certificate nginx's certificate was made with (https:// bases)")
    parser.add_argument("--redirect-from", help="nginx's plain HTTP origin, which must redirect to --base")
    args = parser.parse_args()
    base = args.base
    http = https_session(args.ca)

    ok("GET /readyz through nginx", f"-> {wait_ready(base + '/readyz', WAIT, args.ca)}")
    if args.redirect_from:
        r = requests.get(f"{args.redirect_from}/readyz?x=1", allow_redirects=False, timeout=WAIT)
        assert r.status_code == 308 and r.headers.get("Location") == f"{base}/readyz?x=1", (r.status_code, r.headers)
        ok(f"GET {args.redirect_from}/readyz", f"-> 308 {r.headers['Location']}")
    r = http.get(f"{base}/metrics", timeout=WAIT)
    assert r.status_code == 404, f"/metrics through nginx: {r.status_code}"
    ok("GET /metrics through nginx is 404")

    # Each node's id: an Engine.IO session id starts with the id of the node holding it, so a
    # handshake made straight at a node (not through nginx) names it.
    node_ids = {container: node_id_at(f"http://{container_ip(container)}:8080") for container in args.node}
    assert len(set(node_ids.values())) == len(node_ids), node_ids
    ok("node ids", " ".join(f"{c}={i}" for c, i in node_ids.items()))

    users = {}
    for name in ("alice", "bob"):
        username = f"{name}_{uuid.uuid4().hex[:10]}"
        r = http.post(f"{base}/api/auth/register",
                      json={"username": username, "password": "correct horse battery"}, timeout=WAIT)
        assert r.status_code == 201, f"register {r.status_code} {r.text[:300]}"
        users[name] = r.json()["data"]
        ok(f"POST /api/auth/register {username}", f"-> 201, user {users[name]['user']['id']}")
    auth = {n: {"Authorization": f"Bearer {u['token']}"} for n, u in users.items()}
    r = http.get(f"{base}/api/users/me", headers=auth["alice"], timeout=WAIT)
    assert r.status_code == 200 and r.json()["data"]["id"] == users["alice"]["user"]["id"], r.text[:300]
    ok("GET /api/users/me", "-> 200")

    clients = {}
    for name in ("alice", "bob"):
        for mode, transports in (("ws", None), ("polling", ["polling"])):
            c = Client(f"{name}-{mode}", base, users[name]["token"], transports, args.ca)
            # Tried again on failure, as a client would: once, right after a stack came up, a
            # node's first Redis connections timed out for a second, and a CONNECT with them.
            wait_until(f"{c.label} to connect", c.try_connect, timeout=30, interval=0.5)
            clients[c.label] = c
    for c in clients.values():
        want = "polling" if c.transports else "websocket"
        wait_until(f"{c.label} on {want}", lambda: c.sio.transport() == want)
        ok(f"Socket.IO connect {c.label} through nginx", f"transport={c.sio.transport()} sid={c.sid}")
    alice_ws, alice_poll = clients["alice-ws"], clients["alice-polling"]
    bob_ws, bob_poll = clients["bob-ws"], clients["bob-polling"]
    everyone = list(clients.values())

    r = http.post(f"{base}/api/rooms", json={"otherUserId": users["bob"]["user"]["id"]},
                  headers=auth["alice"], timeout=WAIT)
    assert r.status_code == 201, f"POST /api/rooms {r.status_code} {r.text[:300]}"
    room = r.json()["data"]["id"]
    ok("POST /api/rooms (alice with bob)", f"-> 201, room {room}")
    for c in (bob_ws, bob_poll):
        c.wait_event("room:created", lambda d: d.get("room", {}).get("id") == room)
    ok("bob's sockets got room:created")

    for c in everyone:
        c.join(room)
        c.wait_event("elements:batch", lambda d: d.get("roomId") == room)
    ok("room:join acked + elements:batch on all four sockets")

    marks = {c.label: c.mark() for c in everyone}
    element = alice_ws.call("element:create", {"roomId": room, "element": {
        "type": "note", "positionX": 10, "positionY": 20, "width": 200, "height": 120, "content": "hello"}})
    element_id = element["element"]["id"] if "element" in element else element["id"]
    for c in (alice_poll, bob_ws, bob_poll):
        c.wait_event("element:created", lambda d: json.dumps(d).find(element_id) >= 0, after=marks[c.label])
    ok("element:create (alice-ws) -> element:created on the other three", element_id)

    marks = {c.label: c.mark() for c in everyone}
    toggled = bob_ws.call("element:reaction:toggle", {"roomId": room, "elementId": element_id})
    assert toggled.get("action") == "added", toggled
    for c in (alice_ws, alice_poll, bob_poll):
        c.wait_event("element:reaction:added", lambda d: d.get("elementId") == element_id, after=marks[c.label])
    ok("element:reaction:toggle (bob-ws) -> element:reaction:added on the other three",
       f"totalReactions={toggled.get('elementStats', {}).get('totalReactions')}")
    marks = {c.label: c.mark() for c in everyone}
    r = http.post(f"{base}/api/rooms/{room}/elements/{element_id}/reactions/toggle", headers=auth["alice"],
                  timeout=WAIT)
    assert r.status_code == 200 and r.json()["data"]["action"] == "added", (r.status_code, r.text[:300])
    for c in (bob_ws, bob_poll):
        c.wait_event("element:reaction:added",
                     lambda d: d.get("elementId") == element_id and d.get("stats", {}).get("totalReactions") == 2,
                     after=marks[c.label])
    ok("REST reaction toggle (alice) -> element:reaction:added on bob's sockets", "totalReactions=2")

    def chat(sender, receivers, label, timeout=WAIT):
        text = f"{label} {uuid.uuid4().hex[:8]}"
        marks = {c.label: c.mark() for c in receivers}
        ack = sender.call("message:send", {"roomId": room, "text": text}, timeout)
        assert ack.get("message", {}).get("text") == text, ack
        for c in receivers:
            c.wait_event("message:new", lambda d: d.get("message", {}).get("text") == text,
                         timeout=timeout, after=marks[c.label])
        ok(f"message:send ({sender.label}) -> message:new on {', '.join(c.label for c in receivers)}", repr(text))
        return text

    sent = [chat(alice_poll, [bob_ws, bob_poll, alice_ws], "hello bob"),
            chat(bob_ws, [alice_ws, alice_poll, bob_poll], "hello alice")]
    r = http.get(f"{base}/api/rooms/{room}/messages?limit=10", headers=auth["bob"], timeout=WAIT)
    assert r.status_code == 200, (r.status_code, r.text[:300])
    history = [m["text"] for m in r.json()["data"]]
    assert history == list(reversed(sent)), history
    ok("GET /api/rooms/:roomId/messages (newest first)", repr(history))

    # A node stops: the sockets it held reconnect through nginx to the other one.
    on_node = {container: [c for c in everyone if c.sid.startswith(node_id)]
               for container, node_id in node_ids.items()}
    victim = max(on_node, key=lambda k: len(on_node[k]))
    survivor = next(k for k in node_ids if k != victim)
    moved = on_node[victim]
    ok("sockets per node", "; ".join(f"{k}: {', '.join(c.label for c in v) or '-'}" for k, v in on_node.items()))
    before = {c.label: (c.connects, c.disconnects) for c in everyone}
    started = time.monotonic()
    podman("stop", "-t", "20", victim, timeout=60)
    ok(f"podman stop {victim}", f"({time.monotonic() - started:.1f} s)")
    for c in moved:
        wait_until(f"{c.label} to be disconnected", lambda: c.disconnects > before[c.label][1])
    for c in everyone:
        # Those on the stopped node come back by themselves; so may a socket of the other node
        # whose poll or WebSocket nginx had sent through the stopped one (which passes such
        # requests on to the owner). Each joins the room again from its last offset (Client._rejoin).
        wait_until(f"{c.label} back on {survivor} by itself", lambda: c.settled(node_ids[survivor]), timeout=120)
        if c.connects > before[c.label][0]:
            ok(f"{c.label} came back by itself through nginx to {survivor}",
               f"sid={c.sid} transport={c.sio.transport()} recovered={c.recovered} disconnect reason "
               f"{c.disconnect_reason!r}, after {time.monotonic() - started:.1f} s")
        else:
            ok(f"{c.label} still connected to {survivor}", f"sid={c.sid} transport={c.sio.transport()}")
    marks = {c.label: c.mark() for c in everyone}
    element2 = bob_poll.call("element:create", {"roomId": room, "element": {
        "type": "note", "positionX": 30, "positionY": 40, "width": 100, "height": 100, "content": "after"}}, 60)
    element2_id = element2["element"]["id"] if "element" in element2 else element2["id"]
    for c in everyone:
        if c is not bob_poll:
            c.wait_event("element:created", lambda d: json.dumps(d).find(element2_id) >= 0,
                         timeout=60, after=marks[c.label])
    ok("after the stop: element:create (bob-polling) -> element:created on the other three")
    chat(alice_ws, [c for c in everyone if c is not alice_ws], "still here", 60)

    podman("start", victim, timeout=60)
    ok(f"podman start {victim}", f"-> {wait_ready(f'http://{container_ip(victim)}:8080/readyz', 60)}")
    ok("GET /readyz through nginx", f"-> {wait_ready(base + '/readyz', WAIT, args.ca)}")
    for c in everyone:
        c.sio.disconnect()
    print("ALL OK", flush=True)


if __name__ == "__main__":
    try:
        main()
    except Exception as e:  # noqa: BLE001 - one line that says what failed, then the trace
        print(f"FAIL {type(e).__name__}: {e}", flush=True)
        raise
