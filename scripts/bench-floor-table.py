#!/usr/bin/env python3
"""The table of scripts/bench-floor.sh: reads its results directory (measures.txt and sioload's
JSON lines, one set per run) and prints each figure per system as the median of the runs, its
ratio to the floor and to the best peer, and the targets. Also writes figures.json beside them.

    scripts/bench-floor-table.py RESULTS CHAT_RATE "SLOPE_LO SLOPE_HI" IDLE_SOCKETS
"""
import json
import os
import statistics
import sys

results, chat_rate, slope_rates, idle_conns = sys.argv[1], sys.argv[2], sys.argv[3].split(), int(sys.argv[4])
m = {}
for line in open(os.path.join(results, "measures.txt")):
    k, _, v = line.rstrip("\n").partition("=")
    m[k] = v
runs = int(m.get("run.runs", "1"))
ran = m.get("run.systems", "floor roomcast node python").split()
SYSTEMS = [s for s in ("floor", "roomcast", "node", "python") if s in ran]
PEERS = [s for s in ("node", "python") if s in SYSTEMS]
NAMES = {"floor": "uWS floor", "roomcast": "Roomcast", "node": "Node socket.io + Redis adapter",
         "python": "python-socketio"}


def js(run, name):
    try:
        lines = open(os.path.join(results, "%s.r%d.json" % (name, run))).read().strip().splitlines()
        return json.loads(lines[-1]) if lines else None
    except (OSError, ValueError):
        return None


def f(run, key):
    try:
        return float(m["r%d.%s" % (run, key)])
    except (KeyError, ValueError):
        return None


def chat(run, s, rate=chat_rate):
    return js(run, "%s-chat-%s" % (s, rate))


def storm(run, s):
    d = js(run, s + "-storm")
    return None if d is None else d.get("storm")


# Each figure: (label, key, format, lower is better, getter(run, system)); None = not measured.
def g_chat(field):
    return lambda r, s: (chat(r, s) or {}).get(field)


def g_total(r, s):
    d = chat(r, s)
    return None if d is None else d.get("total_cpu_us_per_delivery", d.get("server_cpu_us_per_delivery"))


def g_p99(r, s):
    d = chat(r, s)
    return None if d is None else d["delivery"]["lat_ms"]["p99"]


def g_delivered(r, s):
    d = chat(r, s)
    return None if d is None else "%d/%d, lost %d" % (d["delivery"]["received"], d["delivery"]["expected"], d["delivery"]["lost"])


def slope(a, b, part, count, cpu="cpu_s"):
    """µs of CPU of the processes under PART ("server", "redis") per one more COUNT ("sent":
    messages, "received": deliveries), between runs A and B at two rates: the difference of
    their CPU per second over the difference of their counts per second (what is spent whatever
    the rate, timers and pings, drops out)."""
    if not a or not b or not a.get(part) or not b.get(part):
        return None

    def rates(d):
        wall = d["duration_s"] + d["delivery"]["drain_s"]
        n = d["publish"]["sent"] if count == "sent" else d["delivery"]["received"]
        return sum(x.get(cpu, x["cpu_s"]) for x in d[part]) / wall, n / wall
    (ca, ma), (cb, mb) = rates(a), rates(b)
    return (cb - ca) / (mb - ma) * 1e6 if mb > ma else None


def g_slope(r, s):
    return slope(chat(r, s, slope_rates[0]), chat(r, s, slope_rates[-1]), "redis", "sent")


def connect_ok(r, s):
    d = js(r, s + "-connect")
    return None if d is None or not d["connect"]["ok"] else d["connect"]["ok"]


def g_connect(kind):
    def g(r, s):
        ok = connect_ok(r, s)
        node, redis = f(r, s + ".connect.node_cpu_s"), f(r, s + ".connect.redis_cpu_s")
        if ok is None or node is None or (kind == "redis" and s == "floor"):
            return None
        cpu = {"node": node, "redis": redis or 0, "total": node + (redis or 0)}[kind]
        return cpu / ok * 1e6
    return g


def g_connect_switches(r, s):
    ok, switches = connect_ok(r, s), f(r, s + ".connect.node_switches")
    return None if ok is None or switches is None else switches / ok


def g_connect_rate(r, s):
    d = js(r, s + "-connect")
    return None if d is None else d["connect"]["rate_per_s"]


def g_idle(kind):
    def g(r, s):
        node, redis, window = f(r, s + ".idle.node_cpu_s"), f(r, s + ".idle.redis_cpu_s"), f(r, s + ".idle.window_s")
        if node is None or not window or (kind == "redis" and s == "floor"):
            return None
        cpu = {"node": node, "redis": redis or 0, "total": node + (redis or 0)}[kind]
        return 100 * cpu / window
    return g


def g_idle_alive(r, s):
    d = js(r, s + "-idle")
    return None if d is None else "%d/%d" % (d.get("alive_end", 0), d["conns"])


def g_idle_rss(r, s):
    return (js(r, s + "-idle") or {}).get("rss_per_conn_kb")


def g_storm(field):
    def g(r, s):
        d = storm(r, s)
        if d is None:
            return None
        if field in ("p50", "p99"):
            return d["rejoin_s"][field]
        if field == "last_rejoin_s" and (d["not_back"] or d.get("survivor_died")):
            return None  # the last socket never came back: the "sockets back" row says why
        return d.get(field)
    return g


def g_storm_back(r, s):
    d = storm(r, s)
    if d is None:
        return None
    text = "%d/%d back, %d attempts" % (d["back"], d["sockets"], d["reconnect_attempts"])
    if d["not_back"] and not d.get("survivor_died"):
        text += "; **%d not back %.0f s after the kill** (CPU: no baseline taken off)" % (d["not_back"], d["window_s"])
    if d.get("survivor_died"):
        text += "; **the survivor died %.1f s after the kill**" % d["survivor_died_after_s"]
    return text


def g_storm_events(r, s):
    d = storm(r, s)
    if d is None:
        return None
    e = d["events"]
    text = "lost %d, dup %d of %d" % (e["lost"], e["duplicates"], e["expected"])
    if "recovered" in d:
        text += "; %d replayed, %d snapshots" % (d["recovered"], d["not_recovered"])
    return text


def g_storm_lost(r, s):
    d = storm(r, s)
    return None if d is None else d["events"]["lost"] + d["events"]["duplicates"]


def g_noise(shape):
    def g(r, s):
        if shape == "idle":
            return f(r, s + ".idle.other_cpu_pct")
        d = chat(r, s) if shape == "chat" else storm(r, s)
        return None if d is None else d.get("other_cpu_pct")
    return g


FIGURES = [
    ("CPU per chat delivery, nodes (µs)", "nodes", "%.2f", True, g_chat("server_cpu_us_per_delivery")),
    ("CPU per chat delivery, nodes + Redis (µs)", "total", "%.2f", True, g_total),
    ("chat p99 (ms)", "p99", "%.1f", True, g_p99),
    ("chat delivered", "delivered", "%s", True, g_delivered),
    ("Redis CPU per chat message, slope %s→%s msg/s (µs)" % (slope_rates[0], slope_rates[-1]), "slope", "%.1f", True, g_slope),
    ("Redis CPU per chat message at %s msg/s, quotient (µs)" % chat_rate, "quotient", "%.1f", True, g_chat("redis_cpu_us_per_publish")),
    ("CPU per connect, node (µs)", "connect", "%.0f", True, g_connect("node")),
    ("CPU per connect, Redis (µs)", "connect_redis", "%.1f", True, g_connect("redis")),
    ("CPU per connect, node + Redis (µs)", "connect_total", "%.0f", True, g_connect("total")),
    ("context switches per connect, node", "connect_switches", "%.2f", True, g_connect_switches),
    ("connects/s, load generator on the same cores", "connect_rate", "%.0f", False, g_connect_rate),
    ("idle joined %d: nodes CPU (%% of a core)" % idle_conns, "idle_nodes", "%.2f", True, g_idle("node")),
    ("idle joined %d: Redis CPU (%% of a core)" % idle_conns, "idle_redis", "%.2f", True, g_idle("redis")),
    ("idle joined %d: nodes + Redis (%% of a core)" % idle_conns, "idle_total", "%.2f", True, g_idle("total")),
    ("idle joined: sockets alive at the end", "idle_alive", "%s", True, g_idle_alive),
    ("idle joined: RSS per connection (KiB)", "idle_rss", "%.2f", True, g_idle_rss),
    ("storm: time until the last socket rejoined (s)", "storm_last", "%.2f", True, g_storm("last_rejoin_s")),
    ("storm: rejoined, median socket (s)", "storm_p50", "%.2f", True, g_storm("p50")),
    ("storm: rejoined, p99 (s)", "storm_p99", "%.2f", True, g_storm("p99")),
    ("storm: survivor CPU per socket back (µs)", "storm_node", "%.0f", True, g_storm("survivor_cpu_us_per_reconnect")),
    ("storm: Redis CPU per socket back (µs)", "storm_redis", "%.0f", True, g_storm("redis_cpu_us_per_reconnect")),
    ("storm: survivor + Redis per socket back (µs)", "storm_total", "%.0f", True, g_storm("total_cpu_us_per_reconnect")),
    ("storm: sockets back", "storm_back", "%s", True, g_storm_back),
    ("storm: events lost, duplicated (peers: no recovery)", "storm_events", "%s", True, g_storm_events),
    ("noise: other processes, chat window (% of a core)", "noise_chat", "%.0f", True, g_noise("chat")),
    ("noise: other processes, idle window (% of a core)", "noise_idle", "%.0f", True, g_noise("idle")),
    ("noise: other processes, storm (% of a core)", "noise_storm", "%.0f", True, g_noise("storm")),
]
NO_RATIO = {"delivered", "idle_alive", "storm_back", "storm_events", "noise_chat", "noise_idle", "noise_storm"}

per_run, median, spread = {}, {}, {}
for label, key, fmt, lower, getter in FIGURES:
    per_run[key], median[key], spread[key] = {}, {}, {}
    for s in SYSTEMS:
        values = [getter(r, s) for r in range(1, runs + 1)]
        per_run[key][s] = values
        present = [v for v in values if v is not None]
        if not present:
            median[key][s] = None
        elif isinstance(present[0], str):
            median[key][s] = " / ".join(present)
        else:
            median[key][s] = statistics.median(present)
            if len(present) > 1:
                spread[key][s] = (min(present), max(present))


def cell(key, fmt, s):
    v = median[key][s]
    if v is None:
        return "—"
    if isinstance(v, str):
        return v
    text = fmt % v
    if s in spread[key]:
        lo, hi = spread[key][s]
        text += " (%s–%s)" % (fmt % lo, fmt % hi)
    return text


def best_peer(key, lower):
    values = [(median[key][p], p) for p in PEERS if isinstance(median[key][p], (int, float))]
    if not values:
        return None, None
    return (min if lower else max)(values)


def ratio(a, b):
    return None if a is None or b is None or not isinstance(a, (int, float)) or not b else a / b


print()
print("Roomcast beside the floor and the peers, %s to %s (%s min), %s; %d run%s, each figure the median%s; "
      "load average %s at the start, %s at the end" % (
          m.get("run.start"), m.get("run.end"), m.get("run.minutes", "?").split(".")[0], m.get("run.host"), runs,
          "" if runs == 1 else "s", "" if runs == 1 else " (lowest–highest)", m.get("run.load_start"), m.get("run.load_end")))
print()
header = ["figure"] + [NAMES[s] for s in SYSTEMS]
if "roomcast" in SYSTEMS:
    header += ["Roomcast ÷ floor" if "floor" in SYSTEMS else None, "Roomcast ÷ best peer" if PEERS else None]
header = [h for h in header if h]
print("| " + " | ".join(header) + " |")
print("|" + "---|" * len(header))
for label, key, fmt, lower, getter in FIGURES:
    row = [label] + [cell(key, fmt, s) for s in SYSTEMS]
    if "roomcast" in SYSTEMS:
        rc = median[key]["roomcast"]
        if "floor" in SYSTEMS:
            r = ratio(rc, median[key]["floor"]) if key not in NO_RATIO else None
            row.append("%.2f×" % r if r is not None else "")
        if PEERS:
            value, who = best_peer(key, lower)
            r = ratio(rc, value) if key not in NO_RATIO else None
            row.append("%.2f× (%s)" % (r, who) if r is not None else "")
    print("| " + " | ".join(row) + " |")
print()
print("Best peer: the lower of the Node and python figures (the higher for connects/s). Costs are utime + stime "
      "of the nodes' and Redis's processes; the storm's are taken from the kill until the last socket is back, less "
      "what the rooms' traffic alone costs the survivor and Redis meanwhile, divided by the sockets back.")
print()
print("load average per system at its start (1, 5, 15 min): " + "; ".join(
    "run %d: %s" % (r, ", ".join("%s %s" % (s, m.get("r%d.%s.load_start" % (r, s), "—")) for s in SYSTEMS))
    for r in range(1, runs + 1)))


def verdict(name, value, limit, fmt, lower=True):
    if value is None or limit is None:
        print("- %s: not measured" % name)
    else:
        ok = value <= limit if lower else value >= limit
        print("- %s: %s (target %s %s): %s" % (name, fmt % value, "≤" if lower else "≥", fmt % limit, "met" if ok else "NOT met"))


def roomcast(key):
    return median[key].get("roomcast")


def of(key, system):
    v = median[key].get(system)
    return v if isinstance(v, (int, float)) else None


if "roomcast" in SYSTEMS:
    print()
    print("Targets (nodes and Redis together):")
    verdict("delivery ÷ floor", ratio(roomcast("total"), of("total", "floor")), 2.0, "%.2f×")
    verdict("delivery ÷ Node peer", ratio(roomcast("total"), of("total", "node")), 0.5, "%.2f×")
    verdict("connect ÷ Node peer", ratio(roomcast("connect_total"), of("connect_total", "node")), 0.5, "%.2f×")
    verdict("chat p99 against the Node peer's", roomcast("p99"), of("p99", "node"), "%.1f ms")
    verdict("idle ÷ Node peer", ratio(roomcast("idle_total"), of("idle_total", "node")), 0.2, "%.2f×")
    peers_last = [of("storm_last", p) for p in PEERS if of("storm_last", p) is not None]
    stormed = [storm(r, "roomcast") for r in range(1, runs + 1) if storm(r, "roomcast") is not None]
    if any(d["not_back"] or d.get("survivor_died") for d in stormed):
        print("- storm, last socket back, against the sooner peer: NOT met (not every socket came back)")
    else:
        verdict("storm, last socket back, against the sooner peer", roomcast("storm_last"),
                min(peers_last) if peers_last else None, "%.2f s")
    events = [g_storm_lost(r, "roomcast") for r in range(1, runs + 1)]
    events = [e for e in events if e is not None]
    if events:
        print("- storm, events lost or duplicated by Roomcast over the runs: %d (target 0): %s" % (
            sum(events), "met" if sum(events) == 0 else "NOT met"))



# ---- the scaling shapes (Roomcast only): per point, the median over the runs of each slope.
# CPU here is the threads' exact run time (sched_cpu_s): the differences are small.
def scaling():
    def pairs(prefix, rates):
        """(run, low-rate JSON, high-rate JSON) for the points PREFIX-<low|high>."""
        for r in range(1, runs + 1):
            lo, hi = rates(r)
            yield r, js(r, "roomcast-%s-%s" % (prefix, lo)), js(r, "roomcast-%s-%s" % (prefix, hi))

    def point(prefix, rates):
        got = {"node_us_per_message": [], "node_us_per_delivery": [], "redis_us_per_message": [],
               "p99_ms": [], "lost": []}
        for _, a, b in pairs(prefix, rates):
            if not a or not b:
                continue
            got["node_us_per_message"].append(slope(a, b, "server", "sent", "sched_cpu_s"))
            got["node_us_per_delivery"].append(slope(a, b, "server", "received", "sched_cpu_s"))
            got["redis_us_per_message"].append(slope(a, b, "redis", "sent", "sched_cpu_s"))
            got["p99_ms"].append(b["delivery"]["lat_ms"]["p99"])
            got["lost"].append(a["delivery"]["lost"] + b["delivery"]["lost"])
        if not got["lost"]:
            return None
        present = {k: [x for x in v if x is not None] for k, v in got.items()}
        out = {k: statistics.median(v) for k, v in present.items() if v}
        out["lost"] = sum(got["lost"])
        out["range"] = {k: [min(v), max(v)] for k, v in present.items() if len(v) > 1 and k != "lost"}
        return out

    def fixed(r):
        return slope_rates[0], slope_rates[-1]

    out = {"room_size": {}, "nodes": {}, "idle": {}}
    for key, value in m.items():
        parts = key.split(".")
        if len(parts) == 4 and parts[1] == "roomcast" and parts[3] == "rates" and parts[2].startswith("scale-room-"):
            size = parts[2][len("scale-room-"):]
            if size not in out["room_size"]:
                p = point("scale-room-" + size, lambda r, size=size: m.get("r%d.roomcast.scale-room-%s.rates" % (r, size), "0 0").split())
                if p:
                    out["room_size"][size] = dict(p, rates_msg_s=value.split())
        elif len(parts) == 4 and parts[1] == "roomcast" and parts[2].startswith("scale-nodes-") and parts[3] == "load":
            count = parts[2].split("-")[2]
            if count not in out["nodes"]:
                p = point("scale-nodes-" + count, fixed)
                if p:
                    out["nodes"][count] = dict(p, members=100, rates_msg_s=slope_rates)
        elif len(parts) == 4 and parts[1] == "roomcast" and parts[2].startswith("scale-idle-") and parts[3] == "window_s":
            count = parts[2][len("scale-idle-"):]
            rss, cpu, redis, alive = [], [], [], []
            for r in range(1, runs + 1):
                d = js(r, "roomcast-scale-idle-" + count)
                node, rcpu, window = (f(r, "roomcast.scale-idle-%s.%s" % (count, k)) for k in ("node_cpu_s", "redis_cpu_s", "window_s"))
                if d is None or node is None or not window:
                    continue
                rss.append(d.get("rss_per_conn_kb"))
                cpu.append(100 * node / window)
                redis.append(100 * (rcpu or 0) / window)
                alive.append(d.get("alive_end", 0))
            if alive:
                out["idle"][count] = {"sockets": int(count), "alive": min(alive),
                                      "rss_kib_per_socket": statistics.median([x for x in rss if x is not None] or [0]),
                                      "node_cpu_pct": statistics.median(cpu), "redis_cpu_pct": statistics.median(redis)}
    nofile = [m[k] for k in m if k.endswith("roomcast.scale-idle.nofile")]
    if nofile:
        out["node_open_files_limit"] = int(nofile[0])
    return out if any(out[k] for k in ("room_size", "nodes", "idle")) else None


scaled = scaling() if "roomcast" in SYSTEMS else None
if scaled:
    print()
    print("Scaling, Roomcast (µs of CPU per message or delivery: the slope between two rates; nodes, Redis%s):" % (
        "; the median of the runs (lowest–highest)" if runs > 1 else ""))
    print()
    print("| shape | point | nodes per message | nodes per delivery | Redis per message | p99 at the higher rate (ms) | lost |")
    print("|---|---|---|---|---|---|---|")
    for kind, name, unit in (("room_size", "room size", "members"), ("nodes", "nodes holding the room", "nodes")):
        for k in sorted(scaled[kind], key=int):
            p = scaled[kind][k]
            print("| %s | %s %s | %s | %s | %s | %s | %d |" % (name, k, unit, *(
                ("%.2f" % p[x] + (" (%.2f–%.2f)" % tuple(p["range"][x]) if x in p["range"] else ""))
                if p.get(x) is not None else "—"
                for x in ("node_us_per_message", "node_us_per_delivery", "redis_us_per_message", "p99_ms")), p["lost"]))
    if scaled["idle"]:
        print()
        print("| idle sockets on one node | alive | RSS per socket (KiB) | node CPU (% of a core) | Redis CPU (% of a core) |")
        print("|---|---|---|---|---|")
        for k in sorted(scaled["idle"], key=int):
            p = scaled["idle"][k]
            print("| %d | %d | %.2f | %.2f | %.2f |" % (p["sockets"], p["alive"], p["rss_kib_per_socket"], p["node_cpu_pct"], p["redis_cpu_pct"]))

with open(os.path.join(results, "figures.json"), "w") as out:
    json.dump({"runs": runs, "systems": SYSTEMS, "median": median, "per_run": per_run, "scaling": scaled,
               "host": m.get("run.host"), "start": m.get("run.start"),
               "labels": {key: label for label, key, _, _, _ in FIGURES}}, out, indent=1, default=str)
