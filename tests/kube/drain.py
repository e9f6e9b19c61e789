"""A node drained the way Kubernetes drains a pod, under the pods of
docs/operations/kubernetes/roomcast.yaml played by podman (scripts/kube-test.sh starts them, a
Redis and the Service's stand-in, then runs this):

    python tests/kube/drain.py --manifest docs/operations/kubernetes/roomcast.yaml \
        --base http://<service>:80 --pod roomcast-kube-test-0=10.89.3.253 --pod ...

1. As the kubelet: each pod's readiness and liveness probes (httpGet, the path and the named port
   of the manifest) answer 200 on the pod's address; podman does not run them.
2. Users register and open a room through the Service; python-socketio clients (threaded, the
   library's own reconnection on; over WebSocket after the polling handshake, and polling only)
   connect through it until both pods hold some, and join the room. Another socket, straight on
   the pod that stays, announces numbered messages to the room.
3. The pod holding the most clients is terminated as Kubernetes terminates a pod: it leaves the
   Service's endpoints (the nginx upstream file rewritten and nginx reloaded; new handshakes
   through the Service then land on the other pod only) while the kubelet runs its preStop
   hook (the manifest's command, in the container), then SIGTERM and SIGKILL after what is left of
   terminationGracePeriodSeconds (counted from the hook's start): `podman stop -t <left>` of the
   container, then `podman pod stop` of what is left of the pod (its network).
   One message is announced while the hook runs, one once the pod's clients have lost their
   connection, one after every client is back.
4. Every client comes back by itself through the Service to the other pod (its Engine.IO session
   id names that node), joins the room again from the last offset it saw (as an application does,
   tests/compose/smoke.py's Client) and has then every announced message once, in order; the
   drained container exited 0 within the grace period (it was not killed).

Prints one line per check and `ALL OK`; exits non-zero on the first failure. Waits are on
conditions, with bounds only as failure guards.
"""
import argparse
import math
import os
import subprocess
import sys
import threading
import time
import uuid

import requests
import yaml

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "compose"))
from smoke import WAIT, Client, node_id_at, ok, podman, wait_ready, wait_until  # noqa: E402

CLIENTS = 6        # at first; more (up to MAX_CLIENTS) while one pod holds none
MAX_CLIENTS = 16
clients = []       # said on a failure


def pod_template(manifest):
    with open(manifest, encoding="utf-8") as handle:
        deployment = next(d for d in yaml.safe_load_all(handle) if d and d["kind"] == "Deployment")
    return deployment["spec"]["template"]["spec"]


def probe_url(ip, probe, container):
    get = probe["httpGet"]
    port = get["port"]
    if not isinstance(port, int):
        port = next(p["containerPort"] for p in container["ports"] if p.get("name") == port)
    return f"{get.get('scheme', 'HTTP').lower()}://{ip}:{port}{get.get('path', '/')}"


class Drain(threading.Thread):
    """The kubelet's termination of one pod: preStop, then SIGTERM, SIGKILL at the grace's end."""

    def __init__(self, pod, container, pre_stop, grace):
        super().__init__(daemon=True)
        self.pod, self.container, self.pre_stop, self.grace = pod, container, pre_stop, grace
        self.hook_started, self.sigterm = threading.Event(), threading.Event()
        self.error = None

    def run(self):
        try:
            self.started = time.monotonic()
            self.hook_started.set()
            if self.pre_stop:
                hook = subprocess.run(["podman", "exec", self.container, *self.pre_stop], capture_output=True,
                                      text=True, timeout=self.grace)
                if hook.returncode != 0:
                    raise AssertionError(f"preStop {self.pre_stop} exited {hook.returncode}: "
                                         f"{(hook.stdout + hook.stderr).strip()[:300]}")
            self.hook_seconds = time.monotonic() - self.started
            # What the grace period leaves after the hook (the kubelet gives at least 2 s more).
            self.left = max(2, math.ceil(self.grace - self.hook_seconds))
            self.sigterm_at = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(time.time() - 1))
            self.sigterm.set()
            stopping = time.monotonic()
            # The container first, then the pod's sandbox (its infra container: the network), as
            # the kubelet does. `podman pod stop` would stop both at once: the draining node would
            # lose its network, its Redis connections and the sockets it forwards.
            podman("stop", "-t", str(self.left), self.container, timeout=self.left + 60)
            self.stop_seconds = time.monotonic() - stopping
            self.exit_code = int(podman("inspect", "-f", "{{.State.ExitCode}}", self.container))
            podman("pod", "stop", self.pod)
        except Exception as e:  # noqa: BLE001 - said by the main thread
            self.error = e
            self.hook_started.set()
            self.sigterm.set()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--manifest", required=True)
    parser.add_argument("--base", required=True, help="the Service's stand-in")
    parser.add_argument("--pod", action="append", required=True, metavar="NAME=IP")
    parser.add_argument("--service-container", required=True, help="the nginx container in front")
    parser.add_argument("--endpoints", required=True, help="its upstream file, named as the Service")
    args = parser.parse_args()
    spec = pod_template(args.manifest)
    container = spec["containers"][0]
    grace = spec.get("terminationGracePeriodSeconds", 30)
    pre_stop = container.get("lifecycle", {}).get("preStop", {}).get("exec", {}).get("command")
    pods = dict(p.split("=", 1) for p in args.pod)
    containers = {pod: f"{pod}-{container['name']}" for pod in pods}
    base = args.base

    # 1. The kubelet's probes.
    for pod, ip in pods.items():
        for kind in ("readinessProbe", "livenessProbe"):
            if kind in container:
                url = probe_url(ip, container[kind], container)
                ok(f"{pod}: {kind} GET {url}", f"-> {wait_ready(url, 60)}")
    node_ids = {pod: node_id_at(f"http://{ip}:{container_port(container)}") for pod, ip in pods.items()}
    assert len(set(node_ids.values())) == len(node_ids), node_ids
    ok("node ids", " ".join(f"{p}={i}" for p, i in node_ids.items()))
    ok(f"GET {base}/readyz (the Service)", f"-> {wait_ready(base + '/readyz', 60)}")

    # 2. Users, a room, clients through the Service.
    http = requests.Session()
    users = {}
    for name in ("alice", "bob"):
        r = http.post(f"{base}/api/auth/register", timeout=WAIT,
                      json={"username": f"{name}_{uuid.uuid4().hex[:10]}", "password": "correct horse battery"})
        assert r.status_code == 201, f"register {r.status_code} {r.text[:300]}"
        users[name] = r.json()["data"]
    r = http.post(f"{base}/api/rooms", json={"otherUserId": users["bob"]["user"]["id"]},
                  headers={"Authorization": f"Bearer {users['alice']['token']}"}, timeout=WAIT)
    assert r.status_code == 201, f"POST /api/rooms {r.status_code} {r.text[:300]}"
    room = r.json()["data"]["id"]
    ok("two users and a room through the Service", f"room {room}")

    def on_pod(pod):
        return [c for c in clients if c.sid.startswith(node_ids[pod])]

    while len(clients) < CLIENTS or (len(clients) < MAX_CLIENTS and not all(on_pod(p) for p in pods)):
        n = len(clients)
        user = ("alice", "bob")[n % 2]
        mode, transports = (("ws", None), ("polling", ["polling"]))[(n // 2) % 2]
        c = Client(f"{user}-{mode}-{n}", base, users[user]["token"], transports)
        wait_until(f"{c.label} to connect", c.try_connect, timeout=30, interval=0.5)
        clients.append(c)
    for c in clients:
        want = "polling" if c.transports else "websocket"
        wait_until(f"{c.label} on {want}", lambda: c.sio.transport() == want)
        c.join(room)
    ok(f"{len(clients)} clients connected through the Service and in the room",
       "; ".join(f"{p}: {len(on_pod(p))}" for p in pods))

    victim = max(pods, key=lambda p: len(on_pod(p)))
    survivors = [p for p in pods if p != victim]
    assert on_pod(victim), "no client on either pod"
    moved = on_pod(victim)
    survivor_ids = {node_ids[p] for p in survivors}
    # The announcer: a socket straight on a pod that stays (not one of the clients checked).
    announcer = Client("announcer", f"http://{pods[survivors[0]]}:{container_port(container)}",
                       users["alice"]["token"], None)
    wait_until("the announcer to connect", announcer.try_connect, timeout=30, interval=0.5)
    announcer.join(room)
    sent = []

    def announce(label, timeout=WAIT):
        text = f"{label} {uuid.uuid4().hex[:8]}"
        ack = announcer.call("message:send", {"roomId": room, "text": text}, timeout)
        assert ack.get("message", {}).get("text") == text, ack
        sent.append(text)
        return text

    def received(c):
        with c.cond:
            return [d["message"]["text"] for e, d in c.events
                    if e == "message:new" and d.get("roomId") == room and d.get("message", {}).get("text") in sent]

    def everyone_has(text, who, timeout):
        for c in who:
            wait_until(f"{c.label} to get {text!r}", lambda: text in received(c), timeout)

    text = announce("before the drain")
    everyone_has(text, clients, WAIT)
    ok("a message before the drain reached every client", repr(text))

    # 3. The pod terminated as the kubelet does.
    before = {c.label: (c.connects, c.disconnects) for c in clients}
    drain = Drain(victim, containers[victim], pre_stop, grace)
    drain.start()
    drain.hook_started.wait()
    with open(args.endpoints, encoding="utf-8") as handle:
        upstream = handle.read()
    victim_line = f"    server {pods[victim]}:{container_port(container)};\n"
    assert victim_line in upstream, (victim_line, upstream)
    with open(args.endpoints, "w", encoding="utf-8") as handle:   # the same file (nginx's mount)
        handle.write(upstream.replace(victim_line, ""))
    podman("exec", args.service_container, "nginx", "-s", "reload")
    landed = []

    def only_survivors():
        landed.append(node_id_at(base))
        return len(landed) >= 4 and all(n in survivor_ids for n in landed[-4:])
    wait_until("handshakes through the Service to land on the other pod only", only_survivors, WAIT, 0.1)
    ok(f"terminating {victim}: out of the Service's endpoints (nginx reloaded); new handshakes land on "
       f"{', '.join(survivors)} only", f"(after {len(landed)} handshakes)")
    text = announce("during preStop")
    everyone_has(text, clients, WAIT)
    ok(f"during {victim}'s preStop {pre_stop} ({len(moved)} clients on it), a message reached every client",
       f"{repr(text)}{'' if not drain.sigterm.is_set() else ' (the hook had ended by then)'}")
    assert drain.sigterm.wait(grace + 5), "the preStop hook did not end"
    if drain.error:
        raise drain.error
    ok(f"preStop ended after {drain.hook_seconds:.1f} s; SIGTERM, SIGKILL after {drain.left} s more "
       f"(terminationGracePeriodSeconds {grace})")
    for c in moved:
        wait_until(f"{c.label} to lose its connection", lambda: c.disconnects > before[c.label][1], drain.left + 10)
    ok(f"the {len(moved)} clients on {victim} lost their connection")
    during = announce("during the drain", grace)
    drain.join(drain.left + 70)
    assert not drain.is_alive(), f"podman stop {containers[victim]} did not return"
    if drain.error:
        raise drain.error
    assert drain.exit_code == 0, f"{containers[victim]} exited {drain.exit_code} (137: killed at the grace's end)"
    ok(f"{victim} drained and exited 0 in {drain.stop_seconds:.1f} s after SIGTERM (of {drain.left} s left); its log from then:")
    log = subprocess.run(["podman", "logs", "--since", drain.sigterm_at, containers[victim]], check=True,
                         stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=60).stdout
    for line in log.splitlines()[-15:]:
        print(f"     {line[:300]}", flush=True)

    # 4. Every client back on the pod that stays, nothing lost.
    started = time.monotonic()
    for c in clients:
        wait_until(f"{c.label} back on {', '.join(survivors)} by itself",
                   lambda: c.sio.connected and c.sid[:8] in survivor_ids and c.rejoined == c.connects, 120)
    for c in clients:
        if c.connects > before[c.label][0]:
            assert c.recovered is True, f"{c.label}: rejoined with recovered={c.recovered}"
    # Those the pod held came back by themselves; so may a socket of the other pod whose poll or
    # WebSocket nginx had sent through the stopped one (which passes such requests on to the owner).
    ok(f"every client is connected to {', '.join(survivors)} and back in the room",
       f"{sum(c.connects > before[c.label][0] for c in clients)} reconnected by themselves, {len(moved)} of them "
       f"held by {victim} (recovered=True, disconnect reasons {sorted({str(c.disconnect_reason) for c in moved})}), "
       f"{time.monotonic() - started:.1f} s after the pod stopped")
    everyone_has(during, clients, WAIT)
    text = announce("after the drain")
    everyone_has(text, clients, WAIT)
    for c in clients:
        assert received(c) == sent, f"{c.label} got {received(c)}, sent were {sent}"
    ok(f"every client has the {len(sent)} messages once and in order, the one sent during the drain included")
    ok(f"GET {base}/readyz (the Service)", f"-> {wait_ready(base + '/readyz', WAIT)}")
    for c in clients + [announcer]:
        c.sio.disconnect()
    print("ALL OK", flush=True)


def container_port(container):
    return container["ports"][0]["containerPort"]


if __name__ == "__main__":
    try:
        main()
    except Exception as e:  # noqa: BLE001 - one line that says what failed, the clients, then the trace
        print(f"FAIL {type(e).__name__}: {e}", flush=True)
        for c in clients:
            with c.cond:
                messages = [(d.get("message", {}).get("text"), d.get("offset")) for e, d in c.events if e == "message:new"]
            print(f"     {c.label}: sid={c.sid} connected={c.sio.connected} connects={c.connects} "
                  f"disconnects={c.disconnects} ({c.disconnect_reason}) rejoined={c.rejoined} recovered={c.recovered} "
                  f"offsets={c.offsets} message:new={messages}", flush=True)
        raise
