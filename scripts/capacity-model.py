#!/usr/bin/env python3
"""Sizes a Roomcast deployment from a floor run's measured slopes (docs/operations/capacity.md).

Reads the figures.json that scripts/bench-floor.sh writes (the scaling shapes, and the connect
shape's cost when it ran), fits the unit costs, and prints a markdown table: how many nodes and
Redis masters a deployment of N concurrent users, R active rooms and M messages a second needs,
which resource runs out first, and the largest rate one hot room can take.

    scripts/capacity-model.py RESULTS/figures.json                    # the 1M-user example
    scripts/capacity-model.py RESULTS/figures.json --users 200000 --rooms 20000 --messages 5000
    scripts/capacity-model.py RESULTS/figures.json --json             # the numbers as JSON

Every option is an input of the model; --help lists them with their defaults.
"""
import argparse
import json
import math
import statistics
import sys


def fit(points):
    """Least-squares line through (x, y) points: (intercept, slope); one point: (y, 0)."""
    points = [(x, y) for x, y in points if y is not None]
    if not points:
        return None
    if len(points) == 1 or len({x for x, _ in points}) == 1:
        return statistics.mean(y for _, y in points), 0.0
    slope, intercept = statistics.linear_regression([x for x, _ in points], [y for _, y in points])
    return intercept, slope


def unit_costs(figures):
    """The model's unit costs (µs of CPU, KiB), each with where it came from."""
    s = figures.get("scaling") or {}
    median = figures.get("median", {})
    room = {int(k): v for k, v in (s.get("room_size") or {}).items()}
    nodes = {int(k): v for k, v in (s.get("nodes") or {}).items()}
    idle = {int(k): v for k, v in (s.get("idle") or {}).items()}
    base_nodes = 2  # scale-room runs on two nodes: its per-message costs include two holders
    c = {}
    # Nodes: CPU per message = per message + per delivery x members (rooms of 10..1000, 2 nodes).
    line = fit([(k, v.get("node_us_per_message")) for k, v in room.items()])
    if line:
        c["node_per_message"], c["node_per_delivery"] = max(line[0], 0.0), line[1]
    # Redis: per message, and what each member adds (zero if a message's work is per room).
    line = fit([(k, v.get("redis_us_per_message")) for k, v in room.items()])
    if line:
        c["redis_per_message"], c["redis_per_member"] = max(line[0], 0.0), max(line[1], 0.0)
    # One more node holding the room: what it costs Redis per message (one more subscriber to
    # write to) and the nodes (one more node decoding and fanning out the event).
    line = fit([(k, v.get("redis_us_per_message")) for k, v in nodes.items()])
    if line:
        c["redis_per_holder"] = max(line[1], 0.0)
    line = fit([(k, v.get("node_us_per_message")) for k, v in nodes.items()])
    if line:
        c["node_per_holder"] = max(line[1], 0.0)
    # Idle sockets on one node: RSS per socket (the largest count: allocator warm-up drops out),
    # CPU per socket a second (pings), as the slope over the counts.
    if idle:
        most = max(idle)
        c["rss_kib_per_socket"] = idle[most]["rss_kib_per_socket"]
        line = fit([(k, v["node_cpu_pct"] * 1e4) for k, v in idle.items()])  # µs/s
        c["node_idle_per_socket_s"] = max(line[1], 0.0)
        line = fit([(k, v["redis_cpu_pct"] * 1e4) for k, v in idle.items()])
        c["redis_idle_per_socket_s"] = max(line[1], 0.0)
        c["idle_sockets_held"] = idle[most]["alive"]
    if s.get("node_open_files_limit"):
        c["open_files"] = s["node_open_files_limit"]
    connect = median.get("connect", {}).get("roomcast")
    if isinstance(connect, (int, float)):
        c["node_per_connect"] = connect
        c["redis_per_connect"] = median.get("connect_redis", {}).get("roomcast") or 0.0
    c["base_nodes"] = base_nodes
    return c


def holders(members, nodes):
    """Nodes holding at least one of a room's members, members placed on nodes at random."""
    if nodes <= 1:
        return 1.0
    return nodes * (1 - (1 - 1 / nodes) ** members)


def size(c, a):
    """Nodes and masters for inputs A (argparse namespace) with unit costs C."""
    n, rooms, rate = a.users * a.sockets_per_user, a.rooms, a.messages
    members = a.room_size or max(1.0, a.users / rooms)
    util = a.utilization
    churn = a.connects if a.connects is not None else n / a.session_s
    open_files = a.open_files or c.get("open_files", 20000)
    per_node_sockets = {
        "open files": int((open_files - a.reserved_files) * a.fill),
        "memory": int(a.node_memory_gib * 2**20 * a.fill / c["rss_kib_per_socket"]),
    }

    def node_cpu(k):  # µs of node CPU a second over the deployment, with K nodes
        extra = max(holders(members, k) - c["base_nodes"], 0.0)
        return (rate * (c["node_per_message"] + c["node_per_delivery"] * members + c.get("node_per_holder", 0) * extra)
                + n * c["node_idle_per_socket_s"] + churn * c.get("node_per_connect", 0))

    def redis_cost(k, members=members):  # µs of Redis CPU per message in a room of MEMBERS
        extra = max(holders(members, k) - c["base_nodes"], 0.0)
        return c["redis_per_message"] + c["redis_per_member"] * members + c.get("redis_per_holder", 0) * extra

    need = {}
    for what, per in per_node_sockets.items():
        need[what] = math.ceil(n / per)
    # CPU: the node count feeds back into how many nodes hold each room: iterate to a fixed point.
    k = max(need.values())
    for _ in range(50):
        cpu_nodes = math.ceil(node_cpu(k) / (a.node_cores * 1e6 * util))
        if cpu_nodes <= k:
            break
        k = cpu_nodes
    need["CPU"] = cpu_nodes
    per_node_sockets["CPU"] = int(n / (node_cpu(k) / (a.node_cores * 1e6 * util)))
    # One node down: the others take its sockets (the storm), so one more than the largest need.
    nodes = max(need.values()) + 1
    first = max(need, key=lambda w: need[w])
    redis_cpu = rate * redis_cost(nodes) + n * c["redis_idle_per_socket_s"] + churn * c.get("redis_per_connect", 0)
    masters = max(1, math.ceil(redis_cpu / (1e6 * util)))
    hot_cost = redis_cost(nodes, a.hot_room_size)
    hot_max = 1e6 * util / hot_cost
    return {
        "inputs": {"users": a.users, "sockets": n, "rooms": rooms, "messages_s": rate, "room_size": members,
                   "deliveries_s": rate * members, "connects_s": churn, "node_cores": a.node_cores,
                   "node_memory_gib": a.node_memory_gib, "open_files": open_files, "utilization": util, "fill": a.fill,
                   "hot_room_size": a.hot_room_size, "hot_room_rate": a.hot_room_rate},
        "sockets_per_node": per_node_sockets, "nodes_needed_by": need, "nodes": nodes, "first_out": first,
        "holders_per_room": holders(members, nodes), "node_cpu_cores": node_cpu(nodes) / 1e6,
        "redis_us_per_message": redis_cost(nodes), "redis_cpu_cores": redis_cpu / 1e6, "masters": masters,
        "users_per_master": a.users / (redis_cpu / (1e6 * util)),
        "hot_room_redis_us_per_message": hot_cost, "hot_room_max_rate": hot_max,
        "hot_room_fits": a.hot_room_rate <= hot_max,
    }


def grouped(x, fmt="%.0f"):
    return "{:,}".format(int(round(x))) if fmt == "%.0f" else fmt % x


def report(figures, c, sized, a):
    host = figures.get("host") or "?"
    out = []
    out.append("Capacity model from a floor run on %s: CPU planned at %.0f %% of each core at most, "
               "open files and memory at %.0f %%, one node more than the largest need (a node may fail)." % (
                   host, 100 * a.utilization, 100 * a.fill))
    out.append("")
    out.append("| unit cost (measured) | value |")
    out.append("|---|---|")
    rows = [
        ("node CPU per message, across the nodes (µs)", "node_per_message", "%.1f"),
        ("node CPU per delivery (µs)", "node_per_delivery", "%.2f"),
        ("node CPU per message for each node holding the room past two (µs)", "node_per_holder", "%.1f"),
        ("node CPU per idle socket a second (µs)", "node_idle_per_socket_s", "%.3f"),
        ("node RSS per idle socket (KiB)", "rss_kib_per_socket", "%.2f"),
        ("node CPU per connect (µs)", "node_per_connect", "%.0f"),
        ("Redis CPU per message (µs)", "redis_per_message", "%.1f"),
        ("Redis CPU per message for each member (µs)", "redis_per_member", "%.3f"),
        ("Redis CPU per message for each node holding the room past two (µs)", "redis_per_holder", "%.2f"),
        ("Redis CPU per idle socket a second (µs)", "redis_idle_per_socket_s", "%.4f"),
        ("Redis CPU per connect (µs)", "redis_per_connect", "%.0f"),
        ("open files a node may hold (measured limit)", "open_files", "%.0f"),
    ]
    for label, key, fmt in rows:
        out.append("| %s | %s |" % (label, grouped(c[key], fmt) if key in c else "not measured (0 taken)"))
    out.append("")
    header = "| | " + " | ".join(col for col, _ in sized) + " |"
    out.append(header)
    out.append("|---|" + "---|" * len(sized))

    def row(label, get):
        out.append("| %s | %s |" % (label, " | ".join(get(x) for _, x in sized)))
    row("concurrent users (sockets)", lambda x: "%s (%s)" % (grouped(x["inputs"]["users"]), grouped(x["inputs"]["sockets"])))
    row("active rooms, members each", lambda x: "%s × %s" % (grouped(x["inputs"]["rooms"]), grouped(x["inputs"]["room_size"], "%.1f")))
    row("messages/s → deliveries/s", lambda x: "%s → %s" % (grouped(x["inputs"]["messages_s"]), grouped(x["inputs"]["deliveries_s"])))
    row("connects/s (sessions ending and starting)", lambda x: grouped(x["inputs"]["connects_s"]))
    row("a node: cores, memory, open files", lambda x: "%d, %s GiB, %s" % (
        x["inputs"]["node_cores"], grouped(x["inputs"]["node_memory_gib"]), grouped(x["inputs"]["open_files"])))
    row("sockets a node holds, by open files / memory / CPU at this traffic", lambda x: " / ".join(
        grouped(x["sockets_per_node"][w]) for w in ("open files", "memory", "CPU")))
    row("nodes needed by open files / memory / CPU", lambda x: " / ".join(
        grouped(x["nodes_needed_by"][w]) for w in ("open files", "memory", "CPU")))
    row("**nodes** (the largest need + 1)", lambda x: "**%s**" % grouped(x["nodes"]))
    row("runs out first on a node", lambda x: x["first_out"])
    row("nodes' CPU (cores busy)", lambda x: grouped(x["node_cpu_cores"], "%.1f"))
    row("nodes holding an average room", lambda x: grouped(x["holders_per_room"], "%.1f"))
    row("Redis CPU per message (µs)", lambda x: grouped(x["redis_us_per_message"], "%.1f"))
    row("Redis CPU (cores busy)", lambda x: grouped(x["redis_cpu_cores"], "%.2f"))
    row("users one master serves at this traffic", lambda x: grouped(x["users_per_master"]))
    row("**Redis masters** (one core each)", lambda x: "**%s**" % grouped(x["masters"]))
    row("hot room: members, msg/s asked → most its shard takes", lambda x: "%s, %s → %s%s" % (
        grouped(x["inputs"]["hot_room_size"]), grouped(x["inputs"]["hot_room_rate"]), grouped(x["hot_room_max_rate"]),
        "" if x["hot_room_fits"] else " (**does not fit**)"))
    return "\n".join(out)


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("figures", help="figures.json of a floor run that had the scaling shapes")
    p.add_argument("--users", type=float, default=1_000_000, help="concurrent users (1,000,000)")
    p.add_argument("--sockets-per-user", type=float, default=1.0, help="sockets each holds (1)")
    p.add_argument("--rooms", type=float, default=100_000, help="active rooms: rooms that get messages (100,000)")
    p.add_argument("--room-size", type=float, default=0, help="members of an active room (users / rooms)")
    p.add_argument("--messages", type=float, default=10_000, help="messages a second over all rooms (10,000)")
    p.add_argument("--connects", type=float, default=None, help="connects a second (sockets / --session-s)")
    p.add_argument("--session-s", type=float, default=1800, help="how long a socket stays, in s (1,800)")
    p.add_argument("--node-cores", type=int, default=2, help="cores of a node's machine (2)")
    p.add_argument("--node-memory-gib", type=float, default=24, help="memory of a node's machine (24)")
    p.add_argument("--open-files", type=int, default=0, help="a node's open-files limit (the measured one)")
    p.add_argument("--raised-open-files", type=int, default=1_048_576,
                   help="a second column with this open-files limit (1,048,576; 0: none)")
    p.add_argument("--reserved-files", type=int, default=100, help="files a node keeps for Redis and itself (100)")
    p.add_argument("--utilization", type=float, default=0.5,
                   help="the most of a core to plan on, a node's or a Redis master's (0.5)")
    p.add_argument("--fill", type=float, default=0.9,
                   help="the most of a node's open files and memory to plan on (0.9)")
    p.add_argument("--hot-room-size", type=float, default=1000, help="members of the busiest room (1,000)")
    p.add_argument("--hot-room-rate", type=float, default=50, help="messages a second in it (50)")
    p.add_argument("--json", action="store_true", help="print the numbers as JSON")
    a = p.parse_args()
    figures = json.load(open(a.figures))
    c = unit_costs(figures)
    needed = ("node_per_message", "node_per_delivery", "redis_per_message", "redis_per_member", "rss_kib_per_socket",
              "node_idle_per_socket_s", "redis_idle_per_socket_s")
    missing = [k for k in needed if k not in c]
    if missing:
        print("capacity-model: %s has no scaling figures for %s: run the scale-room and scale-idle shapes "
              "(FLOOR_SHAPES=scaling)" % (a.figures, ", ".join(missing)), file=sys.stderr)
        return 1
    measured = a.open_files or c.get("open_files", 20000)
    sized = [("open files %s" % grouped(measured), size(c, a))]
    if a.raised_open_files and a.raised_open_files != measured:
        a.open_files = a.raised_open_files
        sized.append(("open files raised to %s" % grouped(a.raised_open_files), size(c, a)))
    if a.json:
        print(json.dumps({"unit_costs": c, "deployments": {k: v for k, v in sized}}, indent=1))
    else:
        print(report(figures, c, sized, a))
    return 0


if __name__ == "__main__":
    sys.exit(main())
