#!/usr/bin/env bash
# Roomcast against the floor and a peer, in one run (issue #30): the uWebSockets floor
# (shared/bench/uws_floor: one process, no Redis), Roomcast (release, 2 nodes + a private Redis,
# started by scripts/bench-lib.sh as scripts/bench.sh does) and the python-socketio peer
# (shared/bench/peer_pysio: 2 nodes + a private Redis), all driven by sioload with the same shapes:
#
#   idle     10,000 sockets joined to 1,000 rooms of 10 over the nodes (the floor: its one process),
#            nothing sent: CPU of the nodes and of Redis over FLOOR_IDLE_WINDOW s (30), RSS per socket
#   connect  one node, 10,000 sockets, 100 in flight, each closed after its CONNECT: node CPU
#            (open + CONNECT + close) per socket, read around the whole sioload run
#   chat     1,000 sockets in 10 rooms of 100, 10 publishers, 80 messages/s = 8,000 deliveries/s,
#            FLOOR_CHAT_SECONDS s (15): CPU per delivery, nodes and Redis apart (sioload's figures);
#            then 40 and 200 messages/s for Redis's CPU per message as the slope between the two
#
# CPU is utime+stime of the exact PIDs from /proc/PID/stat, over the measured window. Prints one
# table on stdout; sioload's JSON lines and logs stay in $BENCH/floor-run/<time>/.
#
#   scripts/bench.sh floor                  (the same as scripts/bench-floor.sh)
#   FLOOR_SYSTEMS="floor roomcast" scripts/bench.sh floor     # a subset
#   FLOOR_PERF=20 scripts/bench.sh floor    # also perf record an idle Roomcast node for 20 s,
#                                           # after its measured window (needs linux-perf)
#   FLOOR_PERF_CHAT=10 scripts/bench.sh floor   # also perf record Redis and one Roomcast node
#                                           # for 10 s in the middle of the fastest chat (the
#                                           # profile changes that run's CPU figures a little)
#   FLOOR_PERF_CONNECT=2 scripts/bench.sh floor # the same for 2 s of Roomcast's connect shape
#   FLOOR_ROOMCAST_BIN=/tmp/before scripts/bench.sh floor # a directory with another build's
#                                           # roomcast and its resource bundles (before/after)
#   FLOOR_SHAPES="idle connect" scripts/bench.sh floor   # some shapes (connect and chat use the
#                                           # users that idle registers: keep idle)
#
# Builds once and caches under $BENCH (/tmp/bench): sioload (Debian's Go + gorilla/websocket,
# GOPATH mode), uws_floor (from git mirrors of uNetworking/uWebSockets and uSockets under
# MIRROR_ROOT, by uws_floor/build.sh), the peer's venv ($BENCH/venv). Tools: BENCH_TOOLS
# (default ../shared/bench beside the repository). Not run by CI: it times nothing it asserts.
set -euo pipefail
cd "$(dirname "$0")/.."
root="$(pwd)"

BENCH="${BENCH:-/tmp/bench}"
export BENCH
tools="${BENCH_TOOLS:-}"
if [ -z "$tools" ]; then
    for candidate in "$root/../shared/bench" /work/shared/bench; do
        if [ -f "$candidate/sioload/main.go" ]; then tools="$(cd "$candidate" && pwd)"; break; fi
    done
fi
[ -n "$tools" ] && [ -f "$tools/sioload/main.go" ] || { echo "bench-floor: no shared/bench tools (set BENCH_TOOLS)" >&2; exit 1; }
export MIRROR_ROOT="${MIRROR_ROOT:-/work/.mirror}"
# Ports apart from scripts/bench.sh's defaults, so that both can run on one machine.
export BENCH_REDIS=standalone BENCH_REDIS_PORT="${BENCH_REDIS_PORT:-6498}" BENCH_NODE_PORT="${BENCH_NODE_PORT:-8280}"
peer_base="${FLOOR_PEER_PORT:-7280}"
floor_port="${FLOOR_UWS_PORT:-7290}"
systems="${FLOOR_SYSTEMS:-floor roomcast peer}"
idle_window="${FLOOR_IDLE_WINDOW:-30}"
chat_seconds="${FLOOR_CHAT_SECONDS:-15}"
chat_rate="${FLOOR_CHAT_RATE:-80}"          # messages/s over 10 publishers; x100 members = deliveries/s
slope_rates="${FLOOR_SLOPE_RATES:-40 200}"  # messages/s: Redis CPU per message = slope between these
perf_seconds="${FLOOR_PERF:-0}"
perf_chat_seconds="${FLOOR_PERF_CHAT:-0}"
perf_connect_seconds="${FLOOR_PERF_CONNECT:-0}"
shapes="${FLOOR_SHAPES:-idle connect chat}"
idle_conns=10000 idle_rooms=1000 idle_members=10
connect_conns=10000 connect_inflight=100
chat_conns=1000 chat_rooms=10 chat_members=100 chat_publishers=10

say() { echo "[floor] $*" >&2; }

scripts/setup.sh >/dev/null
missing=()
command -v go >/dev/null 2>&1 || missing+=(golang-go)
[ -d /usr/share/gocode/src/github.com/gorilla/websocket ] || missing+=(golang-github-gorilla-websocket-dev)
command -v g++ >/dev/null 2>&1 || missing+=(g++)
python3 -c 'import ensurepip' >/dev/null 2>&1 || missing+=(python3-venv)
if [ "$perf_seconds$perf_chat_seconds$perf_connect_seconds" != 000 ] && ! command -v perf >/dev/null 2>&1; then missing+=(linux-perf); fi
scripts/apt-install.sh bench-floor ${missing[@]+"${missing[@]}"}

. scripts/bench-lib.sh
bench_init
results="$BENCH/floor-run/$(date -u +%Y%m%dT%H%M%SZ)"
mkdir -p "$results" "$BENCH/bin"
measures="$results/measures.txt"
: > "$measures"
put() { echo "$1=$2" >> "$measures"; }

# ---- builds (each once; later runs reuse them)
sioload="$BENCH/bin/sioload"
if [ ! -x "$sioload" ] || [ "$tools/sioload/main.go" -nt "$sioload" ]; then
    say "building sioload -> $sioload"
    mkdir -p /tmp/gopath
    GO111MODULE=off GOPATH=/usr/share/gocode:/tmp/gopath GOCACHE="$BENCH/gocache" \
        nice -n 10 go build -o "$sioload.tmp.$$" "$tools/sioload/main.go"
    mv -f "$sioload.tmp.$$" "$sioload"
fi
uws="$(nice -n 10 "$tools/uws_floor/build.sh" 2>"$results/uws-build.log" | tail -n 1)" \
    || { cat "$results/uws-build.log" >&2; exit 1; }
python="$BENCH/venv/bin/python"
if ! "$python" -c 'import socketio, aiohttp, uvloop, redis' >/dev/null 2>&1; then
    say "making the peer's venv in $BENCH/venv"
    python3 -m venv "$BENCH/venv"
    nice -n 10 "$BENCH/venv/bin/pip" install -q python-socketio aiohttp uvloop redis
fi
bin="${FLOOR_ROOMCAST_BIN:-}"
if [[ " $systems " == *" roomcast "* ]] && [ -z "$bin" ]; then
    say "building roomcast (release)"
    nice -n 10 swift build -c release --product roomcast >/dev/null
    bin="$(swift build -c release --show-bin-path)"
fi

# ---- measuring
hz="$(getconf CLK_TCK)"
ticks() {  # utime+stime of the PIDs given, in clock ticks
    local total=0 pid
    for pid in "$@"; do
        total=$((total + $(sed 's/^.*) //' "/proc/$pid/stat" | awk '{print $12 + $13}')))
    done
    echo "$total"
}
now() { date +%s.%N; }
calc() { awk "BEGIN { printf \"%.6f\", $1 }"; }
load() { cut -d' ' -f1-3 /proc/loadavg; }

# sioload LABEL ARGS...: JSON line -> $results/LABEL.json, stderr -> $results/LABEL.log
run_sioload() {
    local label="$1"
    shift
    timeout -k 5 600 "$sioload" -label "$label" -report 5s "$@" >"$results/$label.json" 2>"$results/$label.log" || {
        say "sioload $label failed:"; tail -n 15 "$results/$label.log" >&2; return 1; }
}

# System: setup=(sioload setup flags), room_flag (-rooms|-members), urls, node_pids, redis_pid
start_system() {
    local system="$1" port
    setup=(-setup peer)
    room_flag=-rooms
    redis_pid=""
    case "$system" in
    floor)
        "$uws" --port "$floor_port" >"$dir/uws.log" 2>&1 &
        pids+=("$!")
        for _ in $(seq 50); do curl -sf "http://127.0.0.1:$floor_port/readyz" >/dev/null && break; sleep 0.1; done
        urls="ws://127.0.0.1:$floor_port"
        node_pids=("${pids[@]}")
        ;;
    roomcast)
        bench_start_redis
        bench_start_nodes "$bin" 2
        redis_pid="${redis_pids[0]}"
        urls="ws://127.0.0.1:${node_ports[0]},ws://127.0.0.1:${node_ports[1]}"
        node_pids=("${pids[@]}")
        setup=(-setup roomcast -scenario chat -api-concurrency 16)
        room_flag=-members
        ;;
    peer)
        bench_start_redis
        redis_pid="${redis_pids[0]}"
        for port in $((peer_base + 1)) $((peer_base + 2)); do
            "$python" "$tools/peer_pysio/server.py" "$port" --redis "$redis_url/0" >"$dir/peer-$port.log" 2>&1 &
            pids+=("$!")
            node_ports+=("$port")
        done
        for port in "${node_ports[@]}"; do
            for _ in $(seq 100); do (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null && break; sleep 0.1; done
        done
        urls="ws://127.0.0.1:${node_ports[0]},ws://127.0.0.1:${node_ports[1]}"
        node_pids=("${pids[@]}")
        ;;
    esac
    for pid in "${node_pids[@]}"; do kill -0 "$pid" || { say "$system did not start (logs in $dir)"; exit 1; }; done
    sleep 2
}

measure_idle() {
    local system="$1" rooms=$idle_rooms users=() hold sl n0 n1 r0=0 r1=0 t0 t1
    [ "$room_flag" = -members ] && rooms=$idle_members
    [ "$system" = roomcast ] && users=(-save-users "$results/users.json")
    hold=$((5 + idle_window + 2))
    [ "$system" = roomcast ] && [ "$perf_seconds" != 0 ] && hold=$((hold + perf_seconds + 2))
    say "$system idle: $idle_conns sockets in rooms of $idle_members, window ${idle_window}s"
    run_sioload "$system-idle" "${setup[@]}" ${users[@]+"${users[@]}"} -urls "$urls" -conns "$idle_conns" \
        "$room_flag" "$rooms" -idle -idle-join -duration "${hold}s" -connect-concurrency 100 \
        -server-pid "$(IFS=,; echo "${node_pids[*]}")" ${redis_pid:+-redis-pid "$redis_pid"} &
    sl=$!
    for _ in $(seq 3000); do
        grep -q '^sioload: connected' "$results/$system-idle.log" 2>/dev/null && break
        kill -0 "$sl" 2>/dev/null || break
        sleep 0.2
    done
    sleep 5
    [ -n "$redis_pid" ] && redis-cli -p "$BENCH_REDIS_PORT" config resetstat >/dev/null
    n0=$(ticks "${node_pids[@]}"); [ -n "$redis_pid" ] && r0=$(ticks "$redis_pid"); t0=$(now)
    sleep "$idle_window"
    n1=$(ticks "${node_pids[@]}"); [ -n "$redis_pid" ] && r1=$(ticks "$redis_pid"); t1=$(now)
    if [ -n "$redis_pid" ]; then
        redis-cli -p "$BENCH_REDIS_PORT" info commandstats > "$results/$system-idle-commandstats.txt"
        redis-cli -p "$BENCH_REDIS_PORT" dbsize >> "$results/$system-idle-commandstats.txt"
    fi
    if [ "$system" = roomcast ] && [ "$perf_seconds" != 0 ]; then
        say "perf record -g on roomcast node ${node_pids[0]} for ${perf_seconds}s (idle, after the window)"
        perf record -F 999 -g -p "${node_pids[0]}" -o "$results/roomcast-idle.perf.data" -- sleep "$perf_seconds" \
            >"$results/perf-record.log" 2>&1 || say "perf record failed: $(tail -n 3 "$results/perf-record.log")"
    fi
    wait "$sl" || return 1
    put "$system.idle.window_s" "$(calc "$t1 - $t0")"
    put "$system.idle.node_cpu_s" "$(calc "($n1 - $n0) / $hz")"
    put "$system.idle.redis_cpu_s" "$(calc "($r1 - $r0) / $hz")"
    put "$system.idle.load" "$(load)"
}

# Lets the previous shape's closes finish: waits (at most 60 s) until the nodes are quiet.
quiet() {
    local b0 b1
    for _ in $(seq 60); do
        b0=$(ticks "${node_pids[@]}"); sleep 1; b1=$(ticks "${node_pids[@]}")
        [ $((b1 - b0)) -le 1 ] && break
    done
    put "$1.nodes_cpu_per_s_before" "$(calc "($b1 - $b0) / $hz")"
}

measure_connect() {
    local system="$1" users=() sl n0 n1 r0=0 r1=0 t0 t1
    [ "$system" = roomcast ] && users=(-load-users "$results/users.json")
    say "$system connect: $connect_conns sockets on one node, $connect_inflight in flight"
    quiet "$system.connect"
    if [ "$system" = roomcast ] && [ "$perf_connect_seconds" != 0 ]; then
        # Past the load generator's start (it registers nothing here: the users exist).
        (sleep 1; perf_during connect "$perf_connect_seconds") &
    fi
    n0=$(ticks "${node_pids[0]}"); [ -n "$redis_pid" ] && r0=$(ticks "$redis_pid"); t0=$(now)
    run_sioload "$system-connect" "${setup[@]}" ${users[@]+"${users[@]}"} -urls "${urls%%,*}" -conns "$connect_conns" \
        -idle -duration 0s -connect-concurrency "$connect_inflight" -server-pid "${node_pids[0]}"
    sleep 2  # the closes
    n1=$(ticks "${node_pids[0]}"); [ -n "$redis_pid" ] && r1=$(ticks "$redis_pid"); t1=$(now)
    put "$system.connect.window_s" "$(calc "$t1 - $t0")"
    put "$system.connect.node_cpu_s" "$(calc "($n1 - $n0) / $hz")"
    put "$system.connect.redis_cpu_s" "$(calc "($r1 - $r0) / $hz")"
    put "$system.connect.load" "$(load)"
}

# perf record -g of Redis and of node 0 at once for SECONDS; reports beside the JSON as
# roomcast-LABEL-redis.perf.txt and roomcast-LABEL-node.perf.txt.
perf_during() {
    local label="$1" seconds="$2" who pid
    for who in redis node; do
        pid="$redis_pid"; [ "$who" = node ] && pid="${node_pids[0]}"
        perf record -F 999 -g -p "$pid" -o "$results/roomcast-$label-$who.perf.data" -- sleep "$seconds" \
            >"$results/perf-$label-$who.log" 2>&1 &
    done
    wait
    for who in redis node; do
        perf report -i "$results/roomcast-$label-$who.perf.data" --no-children --percent-limit 1 --stdio -g none \
            > "$results/roomcast-$label-$who.perf.txt" 2>/dev/null || true
    done
}

measure_chat() {
    local system="$1" rate="$2" rooms=$chat_rooms users=()
    [ "$room_flag" = -members ] && rooms=$chat_members
    [ "$system" = roomcast ] && users=(-load-users "$results/users.json" -users "$chat_conns")
    say "$system chat: $rate messages/s into rooms of $chat_members, ${chat_seconds}s"
    quiet "$system.chat-$rate"
    [ -n "$redis_pid" ] && redis-cli -p "$BENCH_REDIS_PORT" config resetstat >/dev/null
    if [ "$system" = roomcast ] && [ "$perf_chat_seconds" != 0 ] && [ "$rate" = "${slope_rates##* }" ]; then
        # After the joins and a few seconds of load: the steady state of the fastest rate.
        (sleep $((chat_seconds / 2)); perf_during "chat-$rate" "$perf_chat_seconds") &
    fi
    run_sioload "$system-chat-$rate" "${setup[@]}" ${users[@]+"${users[@]}"} -urls "$urls" -conns "$chat_conns" \
        "$room_flag" "$rooms" -publishers "$chat_publishers" \
        -rate "$(calc "$rate / $chat_publishers")" -duration "${chat_seconds}s" -drain 30s -settle 2s \
        -size 64 -connect-concurrency 100 -server-pid "$(IFS=,; echo "${node_pids[*]}")" ${redis_pid:+-redis-pid "$redis_pid"}
    put "$system.chat-$rate.load" "$(load)"
    # Setup (users, rooms, joins) included: the difference between two rates is per message.
    [ -n "$redis_pid" ] && redis-cli -p "$BENCH_REDIS_PORT" info commandstats > "$results/$system-chat-$rate-commandstats.txt"
    return 0
}

put run.start "$(date -u +%Y-%m-%dT%H:%M:%SZ)"
put run.load_start "$(load)"
put run.host "$(nproc) cores, $(uname -r)"
for system in $systems; do
    say "== $system (load average $(load))"
    start_system "$system"
    put "$system.load_start" "$(load)"
    [[ " $shapes " == *" idle "* ]] && measure_idle "$system"
    [[ " $shapes " == *" connect "* ]] && measure_connect "$system"
    if [[ " $shapes " == *" chat "* ]]; then
        measure_chat "$system" "$chat_rate"
        if [ "$system" != floor ]; then
            for rate in $slope_rates; do measure_chat "$system" "$rate"; done
        fi
    fi
    bench_stop_all
done
put run.end "$(date -u +%Y-%m-%dT%H:%M:%SZ)"
put run.load_end "$(load)"
if [ -f "$results/roomcast-idle.perf.data" ]; then
    perf report -i "$results/roomcast-idle.perf.data" --no-children --percent-limit 2 --stdio \
        > "$results/roomcast-idle.perf.txt" 2>/dev/null || true
    say "perf report: $results/roomcast-idle.perf.txt"
fi

python3 - "$results" "$chat_rate" "$slope_rates" "$idle_conns" <<'EOF'
import json, os, sys
results, chat_rate, slope_rates, idle_conns = sys.argv[1], sys.argv[2], sys.argv[3].split(), int(sys.argv[4])
m = {}
for line in open(os.path.join(results, "measures.txt")):
    k, _, v = line.rstrip("\n").partition("=")
    m[k] = v
systems = ["floor", "roomcast", "peer"]

def js(name):
    try:
        lines = open(os.path.join(results, name + ".json")).read().strip().splitlines()
        return json.loads(lines[-1]) if lines else None
    except (OSError, ValueError):
        return None

def f(key):
    try:
        return float(m[key])
    except (KeyError, ValueError):
        return None

def chat(system, rate):
    return js("%s-chat-%s" % (system, rate))

def fig(v, fmt):
    return "—" if v is None else fmt % v

rows, figures = [], {}
def row(name, key, unit_fmt, getter):
    vals = {s: getter(s) for s in systems}
    figures[key] = vals
    rows.append((name, [fig(vals[s], unit_fmt) for s in systems], vals))

def chat_get(field):
    def g(s):
        d = chat(s, chat_rate)
        return None if d is None else d.get(field)
    return g

def nodes_redis(s):
    d = chat(s, chat_rate)
    if d is None:
        return None
    return d.get("total_cpu_us_per_delivery", d.get("server_cpu_us_per_delivery"))

def p99(s):
    d = chat(s, chat_rate)
    return None if d is None else d["delivery"]["lat_ms"]["p99"]

def delivered(s):
    d = chat(s, chat_rate)
    return None if d is None else "%d/%d, lost %d" % (d["delivery"]["received"], d["delivery"]["expected"], d["delivery"]["lost"])

def redis_slope(s):
    lo, hi = slope_rates[0], slope_rates[-1]
    a, b = chat(s, lo), chat(s, hi)
    if not a or not b or not a.get("redis") or not b.get("redis"):
        return None
    def rates(d):
        wall = d["duration_s"] + d["delivery"]["drain_s"]
        return sum(r["cpu_s"] for r in d["redis"]) / wall, d["publish"]["sent"] / wall
    (ca, ma), (cb, mb) = rates(a), rates(b)
    return (cb - ca) / (mb - ma) * 1e6 if mb > ma else None

def redis_quotient(s):
    d = chat(s, chat_rate)
    return None if d is None else d.get("redis_cpu_us_per_publish")

def connect_us(s):
    d, cpu = js(s + "-connect"), f(s + ".connect.node_cpu_s")
    if d is None or cpu is None or not d["connect"]["ok"]:
        return None
    return cpu / d["connect"]["ok"] * 1e6

def connect_redis_us(s):
    d, cpu = js(s + "-connect"), f(s + ".connect.redis_cpu_s")
    if d is None or not d["connect"]["ok"] or s == "floor":
        return None
    return cpu / d["connect"]["ok"] * 1e6

def connect_rate(s):
    d = js(s + "-connect")
    return None if d is None else d["connect"]["rate_per_s"]

def idle_pct(kind):
    def g(s):
        cpu, window = f("%s.idle.%s_cpu_s" % (s, kind)), f(s + ".idle.window_s")
        if cpu is None or not window or (kind == "redis" and s == "floor"):
            return None
        return 100 * cpu / window
    return g

def idle_alive(s):
    d = js(s + "-idle")
    return None if d is None else "%d/%d" % (d.get("alive_end", 0), d["conns"])

def idle_rss(s):
    d = js(s + "-idle")
    return None if d is None else d.get("rss_per_conn_kb")

def noise(s):
    d = chat(s, chat_rate)
    return None if d is None else d.get("other_cpu_pct")

row("CPU per chat delivery, nodes (µs)", "nodes", "%.2f", chat_get("server_cpu_us_per_delivery"))
row("CPU per chat delivery, nodes + Redis (µs)", "total", "%.2f", nodes_redis)
row("chat p99 (ms)", "p99", "%.1f", p99)
row("chat delivered", "delivered", "%s", delivered)
row("Redis CPU per chat message, slope %s→%s msg/s (µs)" % (slope_rates[0], slope_rates[-1]), "slope", "%.1f", redis_slope)
row("Redis CPU per chat message at %s msg/s, quotient (µs)" % chat_rate, "quotient", "%.1f", redis_quotient)
row("CPU per connect, node (µs)", "connect", "%.0f", connect_us)
row("Redis CPU per connect (µs)", "connect_redis", "%.1f", connect_redis_us)
row("connects/s, load generator on the same cores", "connect_rate", "%.0f", connect_rate)
row("idle joined %d: nodes CPU (%% of a core)" % idle_conns, "idle_nodes", "%.2f", idle_pct("node"))
row("idle joined %d: Redis CPU (%% of a core)" % idle_conns, "idle_redis", "%.2f", idle_pct("redis"))
row("idle joined: sockets alive at the end", "idle_alive", "%s", idle_alive)
row("idle joined: RSS per connection (KiB)", "idle_rss", "%.2f", idle_rss)
row("chat: other processes' CPU during the window (% of a core)", "noise", "%.0f", noise)

def ratio(key):
    a, b = figures[key]["roomcast"], figures[key]["floor"]
    return None if a is None or not b else a / b

print()
print("Roomcast against the floor, %s to %s, %s; load average %s at the start, %s at the end" % (
    m.get("run.start"), m.get("run.end"), m.get("run.host"), m.get("run.load_start"), m.get("run.load_end")))
print()
print("| figure | uWS floor | Roomcast | python-socketio | Roomcast ÷ floor |")
print("|---|---|---|---|---|")
for name, cells, vals in rows:
    key = [k for k, v in figures.items() if v is vals][0]
    r = ratio(key) if key in ("nodes", "total", "connect") else None
    print("| %s | %s | %s |" % (name, " | ".join(cells), "**%.2f×**" % r if r is not None else ""))
print()
print("load average per system (1, 5, 15 min) at its start: " + ", ".join(
    "%s %s" % (s, m.get(s + ".load_start", "—")) for s in systems))

def verdict(name, value, limit, fmt):
    if value is None:
        print("- %s: not measured" % name)
    else:
        print("- %s: %s (target ≤ %s): %s" % (name, fmt % value, fmt % limit, "met" if value <= limit else "NOT met"))
print()
print("Targets of #30:")
verdict("delivery, nodes + Redis ÷ floor", ratio("total"), 1.5, "%.2f×")
verdict("delivery, nodes ÷ floor", ratio("nodes"), 1.3, "%.2f×")
verdict("connect ÷ floor", ratio("connect"), 2.5, "%.2f×")
verdict("Redis CPU per chat message (slope)", figures["slope"]["roomcast"], 30, "%.1f µs")
verdict("idle joined, nodes (% of a core)", figures["idle_nodes"]["roomcast"], 1.0, "%.2f")
verdict("idle joined, Redis (% of a core)", figures["idle_redis"]["roomcast"], 0.5, "%.2f")
verdict("idle RSS per connection", figures["idle_rss"]["roomcast"], 5.0, "%.2f KiB")
n, r = figures["idle_nodes"]["roomcast"], figures["idle_redis"]["roomcast"]
if n is not None:
    print("- one joined idle socket costs %.2f ms of node CPU and %.2f ms of Redis CPU per hour" % (
        n / 100 / idle_conns * 3600 * 1e3, (r or 0) / 100 / idle_conns * 3600 * 1e3))
EOF
say "JSON lines and logs: $results"
