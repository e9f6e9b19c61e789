#!/usr/bin/env bash
# End-to-end benchmark: a private Redis, gateway nodes built in release mode, and roomcast-bench
# against them over loopback. Prints one JSON line and a summary. Scenarios and their options:
#
#   scripts/bench.sh canvas  [--rooms 1000] [--rate 5] [--seconds 10]      # drag in two-person rooms
#   scripts/bench.sh chat    [--rooms 10] [--members 100] [--rate 20] [--seconds 10]   # fan-out
#   scripts/bench.sh preview [--rooms 120] [--members 10] [--rate 25] [--seconds 10]   # element:drag previews
#   scripts/bench.sh idle    [--connections 19000] [--seconds 10]          # memory per connection
#   scripts/bench.sh connect [--connections 5000] [--concurrency 100]      # connect + JWT rate
#
# BENCH_COMPRESS=1: the load generator's sockets offer permessage-deflate (the nodes accept it
# unless ROOMCAST_WEBSOCKET_COMPRESSION=off; ROOMCAST_WEBSOCKET_COMPRESSION_THRESHOLD_BYTES=0
# compresses every event).
# BENCH_NODES (default 2) nodes run; `idle` on one node: BENCH_NODES=1 scripts/bench.sh idle ...
# BENCH_REDIS=cluster runs three Redis Cluster masters instead of one server (ports from
# BENCH_REDIS_PORT on). The nodes lift the per-socket and per-user limits that would throttle a
# load generator.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh >/dev/null

scenario="${1:?usage: scripts/bench.sh canvas|chat|preview|idle|connect [roomcast-bench options]}"
shift
nodes="${BENCH_NODES:-2}"
configuration="${ROOMCAST_BUILD:-release}"
redis_port="${BENCH_REDIS_PORT:-6398}"
redis_ports=("$redis_port")
if [ "${BENCH_REDIS:-standalone}" = cluster ]; then redis_ports=("$redis_port" $((redis_port + 1)) $((redis_port + 2))); fi
dir="$(mktemp -d -t roomcast-bench.XXXXXX)"
pids=()
cleanup() {
    for pid in "${pids[@]}"; do kill -TERM "$pid" 2>/dev/null || true; done
    # A draining node still uses CPU and its port: the next run must not start beside it.
    for pid in "${pids[@]}"; do wait "$pid" 2>/dev/null || true; done
    for port in "${redis_ports[@]}"; do redis-cli -p "$port" shutdown nosave >/dev/null 2>&1 || true; done
    rm -rf "$dir"
}
trap cleanup EXIT
# Every held connection is a file on both sides.
ulimit -n "$(ulimit -Hn)" 2>/dev/null || true

swift build -c "$configuration" --product roomcast >/dev/null
swift build -c "$configuration" --product roomcast-bench >/dev/null
bin="$(swift build -c "$configuration" --show-bin-path)"

for port in "${redis_ports[@]}"; do
    mkdir -p "$dir/redis-$port"
    cluster=()
    if [ "${#redis_ports[@]}" -gt 1 ]; then cluster=(--cluster-enabled yes --cluster-config-file nodes.conf); fi
    redis-server --port "$port" --bind 127.0.0.1 --save "" --appendonly no --dir "$dir/redis-$port" --daemonize yes \
        --pidfile "$dir/redis-$port/redis.pid" --logfile "$dir/redis-$port/redis.log" --maxclients 10000 "${cluster[@]}"
    for _ in $(seq 50); do redis-cli -p "$port" ping >/dev/null 2>&1 && break; sleep 0.1; done
done
redis_url="redis://127.0.0.1:$redis_port"
if [ "${#redis_ports[@]}" -gt 1 ]; then
    redis-cli --cluster create $(printf '127.0.0.1:%s ' "${redis_ports[@]}") --cluster-yes >/dev/null
    for port in "${redis_ports[@]}"; do
        for _ in $(seq 100); do redis-cli -p "$port" cluster info | grep -q cluster_state:ok && break; sleep 0.1; done
    done
    redis_url="redis-cluster://$(printf '127.0.0.1:%s,' "${redis_ports[@]}")"
    redis_url="${redis_url%,}"
fi

export ROOMCAST_JWT_SECRET="roomcast-benchmark-secret-0123456789abcdef"
export ROOMCAST_AUTH_BCRYPT_COST=4
export ROOMCAST_SOCKET_EVENTS_PER_SECOND=1000000 ROOMCAST_SOCKET_EVENT_BURST=1000000
export ROOMCAST_SOCKET_MAX_PER_USER=100000 ROOMCAST_ROOMS_MAX_PARTICIPANTS=1000
export ROOMCAST_RATE_LOGINS_PER_ADDRESS=1000000 ROOMCAST_RATE_REST_MUTATIONS_PER_USER=1000000
gateways=()
for index in $(seq "$nodes"); do
    port=$((8180 + index))
    "$bin/roomcast" serve --port "$port" --redis-url "$redis_url" --log-level error > "$dir/node-$port.log" 2>&1 &
    pids+=("$!")
    gateways+=(--gateway "http://127.0.0.1:$port")
done
for index in $(seq "$nodes"); do
    port=$((8180 + index))
    for _ in $(seq 100); do curl -sf "http://127.0.0.1:$port/readyz" >/dev/null && break; sleep 0.1; done
done

"$bin/roomcast-bench" "$scenario" "${gateways[@]}" --redis-url "$redis_url" \
    --pids "$(IFS=,; echo "${pids[*]}")" "$@"
