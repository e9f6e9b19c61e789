#!/usr/bin/env bash
# Roomcast beside a floor and two peers, in one sitting, with the same load generator and shapes.
# The systems (FLOOR_SYSTEMS, default all four, in this order):
#
#   floor     the uWebSockets floor: one process, no Redis (Benchmarks/LoadTools/uws_floor)
#   roomcast  a release build, 2 nodes + a private Redis, started as scripts/bench.sh starts it
#   node      the reference Node.js server: socket.io 4.8.3 + @socket.io/redis-adapter 8.3.0,
#             2 nodes + a private Redis (Benchmarks/LoadTools/peer_node)
#   python    python-socketio with AsyncRedisManager, 2 nodes + a private Redis
#             (Benchmarks/LoadTools/peer_python)
#
# The peers check an HS256 JWT on CONNECT, as Roomcast does; the floor only wants a token. All of
# them are driven by sioload (Benchmarks/LoadTools/sioload). The shapes (FLOOR_SHAPES, default all):
#
#   idle     10,000 sockets joined to 1,000 rooms of 10 over the nodes (the floor: its one process),
#            nothing sent: CPU of the nodes and of Redis over FLOOR_IDLE_WINDOW s (30), RSS per socket
#   connect  one node, 10,000 sockets, 100 in flight, each closed after its CONNECT: node and Redis
#            CPU (open + CONNECT + close) per socket, read around the whole sioload run
#   chat     1,000 sockets in 10 rooms of 100, 10 publishers, 80 messages/s = 8,000 deliveries/s,
#            FLOOR_CHAT_SECONDS s (15): CPU per delivery, nodes and Redis apart (sioload's figures);
#            then 40 and 200 messages/s for Redis's CPU per message as the slope between the two
#   storm    10,000 sockets in rooms of 10, all on one node, 100 of the rooms with a message a second
#            from a publisher on the other node; the node is killed (SIGKILL) and every socket
#            reconnects to the survivor with its token and joins its room again (Roomcast: with
#            `since`, the last offset it saw; the peers: a plain join); sockets wait before each
#            attempt as socket.io-client does (1 s ± 50 %, doubling up to 5 s). Time from the kill
#            until the last socket is back in its room, the survivor's and Redis's CPU per socket
#            back (less the traffic's own cost), events lost or duplicated. Not for the floor (one
#            process: no node to fail over to).
#
# The scaling shapes, Roomcast only, each varying one thing (not in the default list: name them,
# or `scaling` for all three; scripts/capacity-model.py then sizes a deployment from them):
#
#   scale-room   the chat shape's 1,000 sockets on 2 nodes in rooms of 10, 100 and 1,000 members
#                (FLOOR_SCALE_ROOM_SIZES), each at two rates (200 and 40 messages/s, fewer for big
#                rooms so that a run stays under FLOOR_SCALE_MAX_DELIVERIES, 20,000 deliveries/s):
#                node and Redis CPU per message and per delivery as the slope between the rates
#   scale-nodes  the same in rooms of 100 held by 2, 4 and 8 nodes on one Redis (FLOOR_SCALE_NODES),
#                at FLOOR_SLOPE_RATES: what one more subscriber node costs Redis per message
#   scale-idle   one fresh node holding 1,000, 10,000 and 19,000 idle sockets joined to rooms of 10
#                (FLOOR_SCALE_IDLE_SOCKETS; a process here may hold 20,000 files): RSS and CPU per
#                socket as sockets grow, and the node's open-files limit
#
# CPU is utime+stime of the exact PIDs from /proc/PID/stat over the measured window. Prints one
# table on stdout (also table.md and figures.json beside the logs); sioload's JSON lines and logs
# stay in $BENCH/floor-run/<time>/. Every figure of the table is the median of FLOOR_RUNS runs
# (1); the runs take the systems in turn (floor, roomcast, node, python, floor, ...).
#
#   scripts/bench.sh floor                  (the same as scripts/bench-floor.sh)
#   FLOOR_RUNS=3 scripts/bench.sh floor     # medians of 3 runs in one sitting
#   FLOOR_SYSTEMS="floor roomcast" scripts/bench.sh floor     # a subset
#   FLOOR_SHAPES="idle connect" scripts/bench.sh floor        # some shapes
#   scripts/bench.sh storm                  # the storm alone, Roomcast alone (FLOOR_SYSTEMS to add peers)
#   FLOOR_PERF=20 scripts/bench.sh floor    # also perf record an idle Roomcast node for 20 s,
#                                           # after its measured window (needs linux-perf)
#   FLOOR_PERF_CHAT=10 scripts/bench.sh floor   # also perf record Redis and one Roomcast node
#                                           # for 10 s in the middle of the fastest chat (the
#                                           # profile changes that run's CPU figures a little)
#   FLOOR_PERF_CONNECT=2 scripts/bench.sh floor # the same for 2 s of Roomcast's connect shape
#   FLOOR_PERF_STORM=5 scripts/bench.sh floor   # the same for Roomcast's survivor, 5 s from the kill
#   FLOOR_PERF_HZ=10000 ...                 # perf's sampling rate for these (999 by default)
#   FLOOR_ROOMCAST_BIN=/tmp/before scripts/bench.sh floor # a directory with another build's
#                                           # roomcast and its resource bundles (before/after)
#
# Builds once and caches under $BENCH (/tmp/bench), never in the repository: sioload (Debian's Go +
# gorilla/websocket, GOPATH mode) and the python peer's venv (PyPI). The floor and the Node peer
# are third-party code (uWebSockets, socket.io) that this repository neither holds nor builds:
# FLOOR_UWS_BIN names a floor binary built from Benchmarks/LoadTools/uws_floor/server.cpp, and
# FLOOR_NODE_MODULES a node_modules folder holding socket.io 4.8.3 and @socket.io/redis-adapter
# 8.3.0 for Benchmarks/LoadTools/peer_node/server.js (Benchmarks/LoadTools/README.md says what
# each needs). Not run by CI: it times nothing it asserts.
set -euo pipefail
cd "$(dirname "$0")/.."
root="$(pwd)"
started_at=$(date +%s)

BENCH="${BENCH:-/tmp/bench}"
export BENCH
tools="$root/Benchmarks/LoadTools"
# Ports apart from scripts/bench.sh's defaults, so that both can run on one machine.
export BENCH_REDIS=standalone BENCH_REDIS_PORT="${BENCH_REDIS_PORT:-6498}" BENCH_NODE_PORT="${BENCH_NODE_PORT:-8280}"
peer_base="${FLOOR_PEER_PORT:-7280}"
floor_port="${FLOOR_UWS_PORT:-7290}"
systems="${FLOOR_SYSTEMS:-floor roomcast node python}"
systems="${systems//peer/python}"
shapes="${FLOOR_SHAPES:-idle connect chat storm}"
shapes="${shapes//scaling/scale-room scale-nodes scale-idle}"
runs="${FLOOR_RUNS:-1}"
idle_window="${FLOOR_IDLE_WINDOW:-30}"
chat_seconds="${FLOOR_CHAT_SECONDS:-15}"
chat_rate="${FLOOR_CHAT_RATE:-80}"          # messages/s over 10 publishers; x100 members = deliveries/s
slope_rates="${FLOOR_SLOPE_RATES:-40 200}"  # messages/s: Redis CPU per message = slope between these
perf_seconds="${FLOOR_PERF:-0}"
perf_chat_seconds="${FLOOR_PERF_CHAT:-0}"
perf_connect_seconds="${FLOOR_PERF_CONNECT:-0}"
perf_storm_seconds="${FLOOR_PERF_STORM:-0}"
idle_conns=10000 idle_members=10
connect_conns=10000 connect_inflight=100
chat_conns=1000 chat_members=100 chat_publishers=10
storm_conns="${FLOOR_STORM_SOCKETS:-10000}" storm_members=10
storm_traffic_rooms="${FLOOR_STORM_ROOMS:-100}" storm_rate="${FLOOR_STORM_RATE:-1}"
scale_room_sizes="${FLOOR_SCALE_ROOM_SIZES:-10 100 1000}"
scale_max_deliveries="${FLOOR_SCALE_MAX_DELIVERIES:-20000}"
scale_nodes="${FLOOR_SCALE_NODES:-2 4 8}"
scale_idle_sockets="${FLOOR_SCALE_IDLE_SOCKETS:-1000 10000 19000}"
# The peers' HS256 key (Roomcast's is set by scripts/bench-lib.sh; its tokens come from its API).
peer_secret="bench-peer-secret-0123456789abcdef0123"

say() { echo "[floor] $*" >&2; }

for system in $systems; do
    case "$system" in floor|roomcast|node|python) ;; *) say "unknown system $system (floor, roomcast, node, python)"; exit 2 ;; esac
done
for shape in $shapes; do
    case "$shape" in idle|connect|chat|storm|scale-room|scale-nodes|scale-idle) ;;
    *) say "unknown shape $shape (idle, connect, chat, storm; scale-room, scale-nodes, scale-idle or scaling)"; exit 2 ;;
    esac
done
[[ "$runs" =~ ^[1-9][0-9]*$ ]] || { say "FLOOR_RUNS must be a positive number"; exit 2; }
uws="${FLOOR_UWS_BIN:-}"
node_modules="${FLOOR_NODE_MODULES:-}"
if [[ " $systems " == *" floor "* ]] && [ ! -x "$uws" ]; then
    say "the floor is third-party code built outside this repository: set FLOOR_UWS_BIN to its binary"
    say "(Benchmarks/LoadTools/README.md), or leave it out (FLOOR_SYSTEMS=\"roomcast node python\")"
    exit 2
fi
if [[ " $systems " == *" node "* ]] && [ ! -f "$node_modules/socket.io/package.json" ]; then
    say "the Node peer runs on third-party code installed outside this repository: set FLOOR_NODE_MODULES"
    say "to a node_modules folder with socket.io and @socket.io/redis-adapter (Benchmarks/LoadTools/README.md),"
    say "or leave it out (FLOOR_SYSTEMS=\"floor roomcast python\")"
    exit 2
fi

scripts/setup.sh >/dev/null
missing=()
command -v go >/dev/null 2>&1 || missing+=(golang-go)
[ -d /usr/share/gocode/src/github.com/gorilla/websocket ] || missing+=(golang-github-gorilla-websocket-dev)
if [[ " $systems " == *" python "* ]]; then python3 -c 'import ensurepip' >/dev/null 2>&1 || missing+=(python3-venv); fi
if [[ " $systems " == *" node "* ]]; then
    command -v node >/dev/null 2>&1 || missing+=(nodejs)
    for package in node-redis node-accepts node-base64id node-cors node-ms; do
        dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q 'install ok installed' || missing+=("$package")
    done
fi
if [ "$perf_seconds$perf_chat_seconds$perf_connect_seconds$perf_storm_seconds" != 0000 ] && ! command -v perf >/dev/null 2>&1; then missing+=(linux-perf); fi
scripts/apt-install.sh bench-floor ${missing[@]+"${missing[@]}"}

. scripts/bench-lib.sh
bench_init
results="$BENCH/floor-run/$(date -u +%Y%m%dT%H%M%SZ)"
mkdir -p "$results" "$BENCH/bin"
measures="$results/measures.txt"
: > "$measures"
prefix=""  # r<run>. while a run is under way
put() { echo "$prefix$1=$2" >> "$measures"; }

# ---- builds (each once; later runs reuse them)
sioload="$BENCH/bin/sioload"
newest_source="$(ls -t "$tools"/sioload/*.go | head -n 1)"
if [ ! -x "$sioload" ] || [ "$newest_source" -nt "$sioload" ]; then
    say "building sioload -> $sioload"
    mkdir -p "$BENCH/gopath"
    GO111MODULE=off GOPATH="/usr/share/gocode:$BENCH/gopath" GOCACHE="$BENCH/gocache" \
        nice -n 10 go build -o "$sioload.tmp.$$" "$tools"/sioload/*.go
    mv -f "$sioload.tmp.$$" "$sioload"
fi
python="$BENCH/venv/bin/python"
if [[ " $systems " == *" python "* ]] && ! "$python" -c 'import socketio, aiohttp, uvloop, redis' >/dev/null 2>&1; then
    say "making the python peer's venv in $BENCH/venv"
    python3 -m venv "$BENCH/venv"
    nice -n 10 "$BENCH/venv/bin/pip" install -q python-socketio aiohttp uvloop redis
fi
bin="${FLOOR_ROOMCAST_BIN:-}"
if [[ " $systems " == *" roomcast "* ]] && [ -z "$bin" ]; then
    say "building roomcast (release)"
    nice -n 10 swift build -c release --product roomcast >/dev/null
    bin="$(swift build -c release --show-bin-path)"
fi
{
    echo "sioload: $(cd "$root" && git rev-parse --short HEAD 2>/dev/null || echo '?') $(go version | cut -d' ' -f3)"
    [ -n "$uws" ] && [ -f "$(dirname "$uws")/BUILD_INFO" ] && sed 's/^/uws_floor: /' "$(dirname "$uws")/BUILD_INFO"
    [ -n "$node_modules" ] && [ -f "$(dirname "$node_modules")/VERSIONS" ] && sed 's/^/node peer: /' "$(dirname "$node_modules")/VERSIONS"
    [ -x "$python" ] && { "$python" -m pip list 2>/dev/null | grep -iE '^(python-socketio|python-engineio|aiohttp|uvloop|redis) ' | sed 's/^/python peer: /' || true; }
    true
} > "$results/versions.txt"

# ---- measuring
hz="$(getconf CLK_TCK)"
ticks() {  # utime+stime of the PIDs given, in clock ticks
    local total=0 pid
    for pid in "$@"; do
        total=$((total + $(sed 's/^.*) //' "/proc/$pid/stat" | awk '{print $12 + $13}')))
    done
    echo "$total"
}
switches() {  # context switches, voluntary and not, of every thread of the PID given
    cat /proc/"$1"/task/*/status 2>/dev/null | awk '/^(voluntary|nonvoluntary)_ctxt_switches:/ { n += $2 } END { print n + 0 }'
}
machine() {  # busy and total jiffies of all CPUs (the noise: what else ran)
    awk '/^cpu / { busy = $2 + $3 + $4 + $7 + $8 + $9; print busy, busy + $5 + $6; exit }' /proc/stat
}
now() { date +%s.%N; }
calc() { awk "BEGIN { printf \"%.6f\", $1 }"; }
load() { cut -d' ' -f1-3 /proc/loadavg; }

# sioload LABEL ARGS...: JSON line -> $results/LABEL.json, stderr -> $results/LABEL.log
run_sioload() {
    local label="$1"
    shift
    timeout -k 5 900 "$sioload" -label "$label" -report 5s "$@" >"$results/$label.json" 2>"$results/$label.log" || {
        say "sioload $label failed:"; tail -n 15 "$results/$label.log" >&2; return 1; }
}

# Roomcast's users, registered once per Redis by the first shape that needs them.
users_file=""
users_for() {  # N: sioload flags that give it N users
    local have=0
    [ -s "$users_file" ] && have="$(python3 -c 'import json, sys; print(len(json.load(open(sys.argv[1]))))' "$users_file")"
    if [ "$have" -ge "$1" ]; then echo "-load-users $users_file -users $1"; else echo "-save-users $users_file -users $1"; fi
}

start_peer_nodes() {  # COMMAND...: two nodes of a peer, each given its port then --redis
    local port
    bench_start_redis
    redis_pid="${redis_pids[0]}"
    for port in $((peer_base + 1)) $((peer_base + 2)); do
        "$@" "$port" --redis "$redis_url/0" --jwt-secret "$peer_secret" >"$dir/peer-$port.log" 2>&1 &
        pids+=("$!")
        node_ports+=("$port")
    done
    for port in "${node_ports[@]}"; do
        for _ in $(seq 100); do (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null && break; sleep 0.1; done
    done
    urls="ws://127.0.0.1:${node_ports[0]},ws://127.0.0.1:${node_ports[1]}"
    node_pids=("${pids[@]}")
    setup=(-setup peer -jwt-secret "$peer_secret")
}

# System: setup=(sioload setup flags), room_flag (-rooms|-members), urls, node_pids, redis_pid
start_system() {
    local system="$1"
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
        users_file="$results/roomcast-users.r$run.json"
        ;;
    node)
        PEER_NODE_MODULES="$node_modules" start_peer_nodes node "$tools/peer_node/server.js"
        ;;
    python)
        start_peer_nodes "$python" "$tools/peer_python/server.py"
        ;;
    esac
    for pid in "${node_pids[@]}"; do kill -0 "$pid" || { say "$system did not start (logs in $dir)"; exit 1; }; done
    sleep 2
}

measure_idle() {  # SYSTEM [SOCKETS LABEL]: SOCKETS (idle_conns) sockets over the nodes, figures as LABEL (idle)
    local system="$1" conns="${2:-$idle_conns}" label="${3:-idle}" rooms users=() hold sl n0 n1 r0=0 r1=0 t0 t1 m0 m1
    rooms=$((conns / idle_members))
    [ "$room_flag" = -members ] && rooms=$idle_members
    [ "$system" = roomcast ] && read -ra users <<< "$(users_for "$conns")"
    hold=$((5 + idle_window + 2))
    [ "$system" = roomcast ] && [ "$perf_seconds" != 0 ] && [ "$label" = idle ] && hold=$((hold + perf_seconds + 2))
    say "$system $label: $conns sockets in rooms of $idle_members, window ${idle_window}s"
    run_sioload "$system-$label$tag" "${setup[@]}" ${users[@]+"${users[@]}"} -urls "$urls" -conns "$conns" \
        "$room_flag" "$rooms" -idle -idle-join -duration "${hold}s" -connect-concurrency 100 \
        -server-pid "$(IFS=,; echo "${node_pids[*]}")" ${redis_pid:+-redis-pid "$redis_pid"} &
    sl=$!
    for _ in $(seq 3000); do
        grep -q '^sioload: connected' "$results/$system-$label$tag.log" 2>/dev/null && break
        kill -0 "$sl" 2>/dev/null || break
        sleep 0.2
    done
    sleep 5
    [ -n "$redis_pid" ] && redis-cli -p "$BENCH_REDIS_PORT" config resetstat >/dev/null
    n0=$(ticks "${node_pids[@]}"); [ -n "$redis_pid" ] && r0=$(ticks "$redis_pid"); t0=$(now); m0=$(machine)
    sleep "$idle_window"
    n1=$(ticks "${node_pids[@]}"); [ -n "$redis_pid" ] && r1=$(ticks "$redis_pid"); t1=$(now); m1=$(machine)
    if [ -n "$redis_pid" ]; then
        redis-cli -p "$BENCH_REDIS_PORT" info commandstats > "$results/$system-$label$tag-commandstats.txt"
        redis-cli -p "$BENCH_REDIS_PORT" dbsize >> "$results/$system-$label$tag-commandstats.txt"
    fi
    if [ "$system" = roomcast ] && [ "$perf_seconds" != 0 ] && [ "$label" = idle ]; then
        say "perf record -g on roomcast node ${node_pids[0]} for ${perf_seconds}s (idle, after the window)"
        perf record -F 999 -g -p "${node_pids[0]}" -o "$results/roomcast-idle$tag.perf.data" -- sleep "$perf_seconds" \
            >"$results/perf-record.log" 2>&1 || say "perf record failed: $(tail -n 3 "$results/perf-record.log")"
    fi
    wait "$sl" || return 1
    put "$system.$label.window_s" "$(calc "$t1 - $t0")"
    put "$system.$label.node_cpu_s" "$(calc "($n1 - $n0) / $hz")"
    put "$system.$label.redis_cpu_s" "$(calc "($r1 - $r0) / $hz")"
    # Everything but the nodes and Redis: sioload answering pings is nearly nothing when idle.
    put "$system.$label.other_cpu_pct" "$(calc "100 * ((${m1% *} - ${m0% *}) - ($n1 - $n0) - ($r1 - $r0)) / $hz / ($t1 - $t0)")"
    put "$system.$label.load" "$(load)"
}

# Lets the previous shape's closes finish: waits (at most 60 s) until the nodes are quiet (a tick a
# second, or half a tick per node when more than two idle nodes keep their timers running).
quiet() {
    local b0 b1 most=$((${#node_pids[@]} > 2 ? ${#node_pids[@]} / 2 : 1))
    for _ in $(seq 60); do
        b0=$(ticks "${node_pids[@]}"); sleep 1; b1=$(ticks "${node_pids[@]}")
        [ $((b1 - b0)) -le "$most" ] && break
    done
    put "$1.nodes_cpu_per_s_before" "$(calc "($b1 - $b0) / $hz")"
}

# Roomcast's users registered ahead of a shape that measures what comes after (the API, bcrypt):
# sets users=(sioload flags for COUNT users). LABEL names the registering run.
register_users() {  # SYSTEM COUNT LABEL
    users=()
    [ "$1" = roomcast ] || return 0
    read -ra users <<< "$(users_for "$2")"
    if [ "${users[0]}" = -save-users ]; then
        say "$1 $3: registering $2 users first"
        run_sioload "$1-$3-users$tag" "${setup[@]}" "${users[@]}" -urls "${urls%%,*}" -conns "$2" \
            -idle -duration 0s -connect-concurrency 100
        read -ra users <<< "$(users_for "$2")"
    fi
}

measure_connect() {
    local system="$1" users=() n0 n1 r0=0 r1=0 t0 t1 m0 m1 s0 s1 profile=""
    # Registering them would count as connect cost: first, apart.
    register_users "$system" "$connect_conns" connect
    say "$system connect: $connect_conns sockets on one node, $connect_inflight in flight"
    quiet "$system.connect"
    if [ "$system" = roomcast ] && [ "$perf_connect_seconds" != 0 ]; then
        # Past the load generator's start (it registers nothing here: the users exist).
        (sleep 1; perf_during "connect$tag" "$perf_connect_seconds" "${node_pids[0]}") &
        profile=$!
    fi
    n0=$(ticks "${node_pids[0]}"); [ -n "$redis_pid" ] && r0=$(ticks "$redis_pid"); t0=$(now); m0=$(machine); s0=$(switches "${node_pids[0]}")
    run_sioload "$system-connect$tag" "${setup[@]}" ${users[@]+"${users[@]}"} -urls "${urls%%,*}" -conns "$connect_conns" \
        -idle -duration 0s -connect-concurrency "$connect_inflight" -server-pid "${node_pids[0]}"
    sleep 2  # the closes
    n1=$(ticks "${node_pids[0]}"); [ -n "$redis_pid" ] && r1=$(ticks "$redis_pid"); t1=$(now); m1=$(machine); s1=$(switches "${node_pids[0]}")
    if [ -n "$profile" ]; then wait "$profile"; fi
    put "$system.connect.window_s" "$(calc "$t1 - $t0")"
    put "$system.connect.node_switches" "$((s1 - s0))"
    put "$system.connect.node_cpu_s" "$(calc "($n1 - $n0) / $hz")"
    put "$system.connect.redis_cpu_s" "$(calc "($r1 - $r0) / $hz")"
    put "$system.connect.machine_cpu_s" "$(calc "(${m1% *} - ${m0% *}) / $hz")"
    put "$system.connect.load" "$(load)"
}

# perf record -g of Redis and of node PID at once for SECONDS; reports beside the JSON as
# roomcast-LABEL-redis.perf.txt and roomcast-LABEL-node.perf.txt.
perf_during() {
    local label="$1" seconds="$2" node="$3" who pid
    for who in redis node; do
        pid="$redis_pid"; [ "$who" = node ] && pid="$node"
        perf record -F "${FLOOR_PERF_HZ:-999}" -g -p "$pid" -o "$results/roomcast-$label-$who.perf.data" -- sleep "$seconds" \
            >"$results/perf-$label-$who.log" 2>&1 &
    done
    wait
    for who in redis node; do
        perf report -i "$results/roomcast-$label-$who.perf.data" --no-children --percent-limit 1 --stdio -g none \
            > "$results/roomcast-$label-$who.perf.txt" 2>/dev/null || true
    done
}

measure_chat() {  # SYSTEM RATE [MEMBERS LABEL]: chat_conns sockets in rooms of MEMBERS (chat_members)
    local system="$1" rate="$2" members="${3:-$chat_members}" label="${4:-chat-$2}" rooms users=() profile=""
    rooms=$((chat_conns / members))
    [ "$room_flag" = -members ] && rooms=$members
    [ "$system" = roomcast ] && read -ra users <<< "$(users_for "$chat_conns")"
    say "$system $label: $rate messages/s into rooms of $members over ${#node_pids[@]} nodes, ${chat_seconds}s"
    quiet "$system.$label"
    [ -n "$redis_pid" ] && redis-cli -p "$BENCH_REDIS_PORT" config resetstat >/dev/null
    if [ "$system" = roomcast ] && [ "$perf_chat_seconds" != 0 ] && [ "$label" = "chat-${slope_rates##* }" ]; then
        # After the joins and a few seconds of load: the steady state of the fastest rate.
        (sleep $((chat_seconds / 2)); perf_during "$label$tag" "$perf_chat_seconds" "${node_pids[0]}") &
        profile=$!
    fi
    run_sioload "$system-$label$tag" "${setup[@]}" ${users[@]+"${users[@]}"} -urls "$urls" -conns "$chat_conns" \
        "$room_flag" "$rooms" -publishers "$chat_publishers" \
        -rate "$(calc "$rate / $chat_publishers")" -duration "${chat_seconds}s" -drain 30s -settle 2s \
        -size 64 -connect-concurrency 100 -server-pid "$(IFS=,; echo "${node_pids[*]}")" ${redis_pid:+-redis-pid "$redis_pid"}
    if [ -n "$profile" ]; then wait "$profile"; fi
    put "$system.$label.load" "$(load)"
    # Setup (users, rooms, joins) included: the difference between two rates is per message.
    [ -n "$redis_pid" ] && redis-cli -p "$BENCH_REDIS_PORT" info commandstats > "$results/$system-$label$tag-commandstats.txt"
    return 0
}

# ---- the scaling shapes (Roomcast): one thing varied at a time, on the system's Redis

# The nodes replaced by COUNT fresh ones on the same Redis (its users stay registered).
restart_nodes() {
    local count="$1"
    bench_stop_nodes
    bench_start_nodes "$bin" "$count"
    node_pids=("${pids[@]}")
    urls="$(printf 'ws://127.0.0.1:%s,' "${node_ports[@]}")"
    urls="${urls%,}"
}

# Rooms of 10, 100, 1,000 on 2 nodes; each size at two rates, for the slope between them.
measure_scale_room() {
    local system="$1" members high low
    restart_nodes 2
    for members in $scale_room_sizes; do
        high=$((scale_max_deliveries / members)); [ "$high" -gt 200 ] && high=200
        low=$((high / 5)); [ "$low" -lt 1 ] && low=1
        put "$system.scale-room-$members.rates" "$low $high"
        measure_chat "$system" "$low" "$members" "scale-room-$members-$low"
        measure_chat "$system" "$high" "$members" "scale-room-$members-$high"
    done
}

# Rooms of chat_members held by 2, 4, 8 nodes (every room has members on every node).
measure_scale_nodes() {
    local system="$1" count rate
    for count in $scale_nodes; do
        restart_nodes "$count"
        for rate in $slope_rates; do measure_chat "$system" "$rate" "$chat_members" "scale-nodes-$count-$rate"; done
    done
}

# One fresh node per count of idle sockets, so that its RSS grows from nothing.
measure_scale_idle() {
    local system="$1" count users=() most=0
    for count in $scale_idle_sockets; do most=$((count > most ? count : most)); done
    restart_nodes 1
    register_users "$system" "$most" scale-idle
    put "$system.scale-idle.nofile" "$(awk '/^Max open files/ { print $4 }' "/proc/${node_pids[0]}/limits")"
    for count in $scale_idle_sockets; do
        restart_nodes 1
        measure_idle "$system" "$count" "scale-idle-$count"
    done
}

# The last shape of a system: it kills node 1; node 0 survives.
measure_storm() {
    local system="$1" rooms users=() watcher="" status=0
    rooms=$((storm_conns / storm_members))
    [ "$room_flag" = -members ] && rooms=$storm_members
    [ "$system" = roomcast ] && read -ra users <<< "$(users_for "$storm_conns")"
    say "$system storm: $storm_conns sockets in rooms of $storm_members on one node, killed; $storm_traffic_rooms rooms with traffic"
    quiet "$system.storm"
    [ -n "$redis_pid" ] && redis-cli -p "$BENCH_REDIS_PORT" config resetstat >/dev/null
    if [ "$system" = roomcast ] && [ "$perf_storm_seconds" != 0 ]; then
        (for _ in $(seq 6000); do grep -q 'SIGKILL to' "$results/$system-storm$tag.log" 2>/dev/null && break; sleep 0.05; done
         perf_during "storm$tag" "$perf_storm_seconds" "${node_pids[0]}") &
        watcher=$!
    fi
    # The shell's notice of the node sioload kills goes nowhere: the kill is the point.
    exec 3>&2 2>/dev/null
    run_sioload "$system-storm$tag" "${setup[@]}" ${users[@]+"${users[@]}"} -storm \
        -urls "ws://127.0.0.1:${node_ports[1]}" -storm-urls "ws://127.0.0.1:${node_ports[0]}" -storm-kill-pid "${node_pids[1]}" \
        -conns "$storm_conns" "$room_flag" "$rooms" -storm-rooms "$storm_traffic_rooms" -rate "$storm_rate" -size 64 \
        -connect-concurrency 100 -settle 1s -drain 5s -server-pid "${node_pids[0]}" ${redis_pid:+-redis-pid "$redis_pid"} \
        || status=$?
    wait "${node_pids[1]}" || true
    exec 2>&3 3>&-
    if [ "$status" != 0 ]; then
        say "sioload $system-storm$tag failed:"; tail -n 15 "$results/$system-storm$tag.log" >&2
        return "$status"
    fi
    if [ -n "$watcher" ]; then wait "$watcher"; fi
    put "$system.storm.load" "$(load)"
    [ -n "$redis_pid" ] && redis-cli -p "$BENCH_REDIS_PORT" info commandstats > "$results/$system-storm$tag-commandstats.txt"
    return 0
}

put run.start "$(date -u +%Y-%m-%dT%H:%M:%SZ)"
put run.load_start "$(load)"
put run.host "$(nproc) cores, $(uname -r)"
put run.runs "$runs"
put run.systems "$systems"
for run in $(seq "$runs"); do
    tag=".r$run"
    prefix="r$run."
    for system in $systems; do
        say "== run $run of $runs: $system (load average $(load))"
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
        [[ " $shapes " == *" storm "* ]] && [ "$system" != floor ] && measure_storm "$system"
        if [ "$system" = roomcast ]; then  # after the storm: each restarts the nodes it needs
            [[ " $shapes " == *" scale-room "* ]] && measure_scale_room "$system"
            [[ " $shapes " == *" scale-nodes "* ]] && measure_scale_nodes "$system"
            [[ " $shapes " == *" scale-idle "* ]] && measure_scale_idle "$system"
        elif [[ " $shapes " == *" scale-"* ]]; then
            say "$system: the scaling shapes are Roomcast's alone"
        fi
        bench_stop_all
        # The servers' own logs (a node that died says why there), beside sioload's.
        mkdir -p "$results/servers$tag-$system"
        cp "$dir"/*.log "$dir"/redis-*/redis.log "$results/servers$tag-$system/" 2>/dev/null || true
    done
done
prefix=""
put run.end "$(date -u +%Y-%m-%dT%H:%M:%SZ)"
put run.load_end "$(load)"
put run.minutes "$(calc "($(date +%s) - $started_at) / 60")"
for data in "$results"/roomcast-idle.r*.perf.data; do
    [ -f "$data" ] || continue
    perf report -i "$data" --no-children --percent-limit 2 --stdio > "${data%.data}.txt" 2>/dev/null || true
    say "perf report: ${data%.data}.txt"
done

python3 "$root/scripts/bench-floor-table.py" "$results" "$chat_rate" "$slope_rates" "$idle_conns" | tee "$results/table.md"
if [[ " $systems " == *" roomcast "* && " $shapes " == *" scale-"* ]]; then
    # It needs scale-room and scale-idle at least; it says what it misses.
    python3 "$root/scripts/capacity-model.py" "$results/figures.json" | tee "$results/capacity.md" || true
fi
say "JSON lines, logs and table.md: $results"
