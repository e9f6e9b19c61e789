#!/usr/bin/env python3
"""Functional check of a benchmark peer (peer_node or peer_python): two nodes
sharing one Redis.

    python check.py HOST:PORT_A HOST:PORT_B

Needs python-socketio and websocket-client (e.g. a venv at
/tmp/bench/venv-check: pip install python-socketio websocket-client requests).

Checks, on the wire (raw WebSocket, Engine.IO v4 / Socket.IO v5 packets) and
with the python-socketio client:
  * open packet over a direct WebSocket; 40{"token":..} -> 40{"sid":..}
  * bare 40, 40{}, 40{"token":""} -> 44{"message":"Connection rejected by server"}
  * 421["room:join",{"roomId":R}] -> 431[true]; without roomId -> 43N[false]
  * a publish on node A reaches the room member on node B (through Redis)
    and the sender itself, byte-identical payload, compact JSON
  * B -> A as well; a member of another room gets nothing
  * fan-out: 2 rooms x 6 members spread over both nodes, 5 events per room
  * bench:publish with an ack id -> 43N[]
  * an integer above 2**53 (unix ns "ts"): python relays it exactly, Node
    parses JSON numbers as doubles and prints the shortest round-trip form
    (1795886212476286000 for 1795886212476286123): within 256 ns, accepted
  * the server pings ("2") at the configured interval (with --ping)
Exits 1 on the first failure; prints one line per check.
"""
import json
import sys
import time

import socketio
import websocket

TIMEOUT = 5.0
failures = 0


def ok(cond, what, detail=""):
    global failures
    print(("PASS " if cond else "FAIL ") + what + (f"  [{detail}]" if detail else ""), flush=True)
    if not cond:
        failures += 1
        sys.exit(1)


class Raw:
    """One raw Engine.IO v4 WebSocket connection."""

    def __init__(self, hostport):
        self.ws = websocket.create_connection(
            f"ws://{hostport}/socket.io/?EIO=4&transport=websocket", timeout=TIMEOUT)
        self.open = self.ws.recv()

    def send(self, s):
        self.ws.send(s)

    def recv(self, timeout=TIMEOUT, skip_pings=True):
        """Next non-ping text frame; pings are answered. None on timeout."""
        deadline = time.time() + timeout
        while True:
            left = deadline - time.time()
            if left <= 0:
                return None
            self.ws.settimeout(left)
            try:
                m = self.ws.recv()
            except websocket.WebSocketTimeoutException:
                return None
            if m == "2" and skip_pings:
                self.ws.send("3")
                continue
            return m

    def close(self):
        try:
            self.ws.close()
        except Exception:
            pass


def same_event(frame, payload):
    """frame is 42["bench:message",<payload>] with the same JSON value; an
    integer "ts" above 2**53 may come back rounded to a double (Node)."""
    pre = '42["bench:message",'
    if not frame or not frame.startswith(pre) or not frame.endswith("]"):
        return False, "not a bench:message frame"
    got, want = json.loads(frame[len(pre):-1]), json.loads(payload)
    exact = frame == pre + payload + "]"
    if got.keys() != want.keys():
        return False, "keys differ"
    for k in want:
        if k == "ts" and isinstance(want[k], int) and isinstance(got[k], int):
            if abs(got[k] - want[k]) > 256:
                return False, f"ts {got[k]} vs {want[k]}"
        elif got[k] != want[k]:
            return False, f"{k} differs"
    return True, "byte-identical" if exact else f"equal; ts {want['ts']} came back as {got['ts']}"


def raw_checks(a, b):
    c = Raw(a)
    ok(c.open.startswith("0{") and json.loads(c.open[1:]).get("upgrades") == [],
       "open packet over WebSocket, no upgrades", c.open)
    op = json.loads(c.open[1:])
    print(f"     open: pingInterval={op.get('pingInterval')} pingTimeout={op.get('pingTimeout')} "
          f"maxPayload={op.get('maxPayload')}")
    c.close()

    for auth in ["", "{}", '{"token":""}', '{"user":"x"}']:
        c = Raw(a)
        c.send("40" + auth)
        m = c.recv()
        ok(m == '44{"message":"Connection rejected by server"}',
           f"connect 40{auth} refused", m)
        c.close()

    ca, cb, cx = Raw(a), Raw(b), Raw(b)
    for c, tok in ((ca, "user-a"), (cb, "user-b"), (cx, "user-x")):
        c.send('40{"token":"%s"}' % tok)
        m = c.recv()
        ok(m is not None and m.startswith('40{"sid":'), f"connect with token {tok}", m)
    ca.send('421["room:join",{"roomId":"r-check"}]')
    ok(ca.recv() == "431[true]", "room:join ack on A")
    cb.send('427["room:join",{"roomId":"r-check"}]')
    ok(cb.recv() == "437[true]", "room:join ack on B (ack id 7)")
    cx.send('422["room:join",{"roomId":"r-other"}]')
    ok(cx.recv() == "432[true]", "room:join other room on B")
    cx.send('423["room:join",{"room":"nope"}]')
    m = cx.recv()
    ok(m == "433[false]", "room:join without roomId acks false", m)

    ts = time.time_ns()
    payload = '{"roomId":"r-check","ts":%d,"seq":1,"pad":"%s"}' % (ts, "x" * 64)
    ca.send('42["bench:publish",%s]' % payload)
    good, how = same_event(cb.recv(), payload)
    ok(good, "A publish -> B (other node, via Redis)", how)
    good, how = same_event(ca.recv(), payload)
    ok(good, "A publish -> A (sender included)", how)
    ok(cx.recv(timeout=1.0) is None, "member of another room on B gets nothing")

    # a ts that a double holds exactly and that prints back the same: byte-identical
    payload2 = '{"roomId":"r-check","ts":%d,"seq":2,"pad":""}' % (time.time_ns() // 10**6 * 10**6)
    cb.send('429["bench:publish",%s]' % payload2)
    got = {cb.recv(), cb.recv()}
    ok(got == {"439[]", '42["bench:message",%s]' % payload2},
       "B publish with ack id: ack 439[] + own copy, byte-identical", repr(got))
    ma = ca.recv()
    ok(ma == '42["bench:message",%s]' % payload2, "B publish -> A (via Redis), byte-identical", ma)

    # informational: more JSON types through the Redis hop
    payload3 = ('{"roomId":"r-check","ts":1764350000123456789,"seq":3.5,"n":-7,"u":null,'
                '"b":true,"s":"\u00e9\u2603","a":[1,{"k":"v"}]}')
    ca.send('42["bench:publish",%s]' % payload3)
    mb = cb.recv()
    print(f"     sent   : {payload3}\n     on B   : {mb}")
    ok(mb is not None and json.loads(mb[len('42["bench:message",'):-1])["a"] == [1, {"k": "v"}],
       "mixed-type payload relayed")
    for c in (ca, cb, cx):
        c.close()


def fanout_check(a, b, rooms=2, members=6, msgs=5):
    """rooms x members connections, member k on node k % 2; member 0 of every
    room publishes msgs events: each member gets each one once, nothing else."""
    conns = {}
    for r in range(rooms):
        for k in range(members):
            c = Raw((a, b)[k % 2])
            c.send('40{"token":"f%d-%d"}' % (r, k))
            c.recv()
            c.send('421["room:join",{"roomId":"fan%d"}]' % r)
            if c.recv() != "431[true]":
                ok(False, "fan-out: join")
            conns[(r, k)] = c
    for n in range(msgs):
        for r in range(rooms):
            conns[(r, 0)].send('42["bench:publish",{"roomId":"fan%d","seq":%d}]' % (r, n))
    bad = 0
    for (r, k), c in conns.items():
        want = ['42["bench:message",{"roomId":"fan%d","seq":%d}]' % (r, n) for n in range(msgs)]
        got = [c.recv() for _ in range(msgs)]
        if got != want or c.recv(timeout=0.2) is not None:
            bad += 1
    ok(bad == 0, f"fan-out: {rooms} rooms x {members} members on 2 nodes, {msgs} msgs per room: "
       f"every member got each event once, in order, nothing from the other room",
       f"{bad} members wrong" if bad else f"{rooms * members * msgs} deliveries")
    for c in conns.values():
        c.close()


def client_checks(a, b):
    got_b, got_a = [], []
    sa = socketio.Client(reconnection=False)
    sb = socketio.Client(reconnection=False)
    sb.on("bench:message", lambda d: got_b.append(d))
    sa.on("bench:message", lambda d: got_a.append(d))
    sa.connect(f"http://{a}", transports=["websocket"], auth={"token": "py-a"}, wait_timeout=TIMEOUT)
    sb.connect(f"http://{b}", transports=["websocket"], auth={"token": "py-b"}, wait_timeout=TIMEOUT)
    ok(sa.call("room:join", {"roomId": "r-py"}, timeout=TIMEOUT) is True, "client: join on A -> True")
    ok(sb.call("room:join", {"roomId": "r-py"}, timeout=TIMEOUT) is True, "client: join on B -> True")
    msg = {"roomId": "r-py", "ts": time.time_ns() // 10**6 * 10**6, "seq": 1, "pad": "y" * 10}
    sa.emit("bench:publish", msg)
    deadline = time.time() + TIMEOUT
    while (not got_b or not got_a) and time.time() < deadline:
        time.sleep(0.02)
    ok(got_b == [msg], "client: publish on A received on B", repr(got_b))
    ok(got_a == [msg], "client: sender on A receives its own publish", repr(got_a))
    sa.disconnect()
    sb.disconnect()

    s = socketio.Client(reconnection=False)
    errs = []
    s.on("connect_error", lambda data: errs.append(data))
    try:
        s.connect(f"http://{a}", transports=["websocket"], wait_timeout=TIMEOUT)
        ok(False, "client: connect without token refused", "connected")
    except socketio.exceptions.ConnectionError as e:
        ok(errs == [{"message": "Connection rejected by server"}],
           "client: connect without token refused", f"{e}; connect_error {errs}")
    finally:
        try:
            s.disconnect()
        except Exception:
            pass


def ping_check(a, interval_s):
    c = Raw(a)
    c.send('40{"token":"ping"}')
    c.recv()
    t0 = time.time()
    m = c.recv(timeout=interval_s + 3, skip_pings=False)
    dt = time.time() - t0
    ok(m == "2", f"server ping after ~{interval_s}s", f"{m!r} after {dt:.1f}s")
    c.send("3")
    c.close()


if __name__ == "__main__":
    args = [x for x in sys.argv[1:] if not x.startswith("--ping=")]
    ping = [float(x.split("=", 1)[1]) for x in sys.argv[1:] if x.startswith("--ping=")]
    if len(args) != 2:
        print(__doc__, file=sys.stderr)
        sys.exit(2)
    raw_checks(*args)
    fanout_check(*args)
    client_checks(*args)
    if ping:
        ping_check(args[0], ping[0])
    print("ALL PASS")
