#!/usr/bin/env bash
# End-to-end canvas drag: a private Redis, two gateway nodes, and roomcast-bench moving one
# element per two-person room, sender and receiver on different nodes. Prints one JSON line and a
# summary (delivered/s, latency percentiles, Redis CPU per update, gateway CPU per delivery).
# Usage: scripts/bench-canvas.sh [rooms] [updates per second per room] [seconds]
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh

rooms="${1:-1000}"; rate="${2:-5}"; seconds="${3:-10}"
configuration="${ROOMCAST_BUILD:-release}"
redis_port="${BENCH_REDIS_PORT:-6398}"
dir="$(mktemp -d -t roomcast-bench.XXXXXX)"
pids=()
cleanup() {
    for pid in "${pids[@]}"; do kill -TERM "$pid" 2>/dev/null || true; done
    redis-cli -p "$redis_port" shutdown nosave >/dev/null 2>&1 || true
    rm -rf "$dir"
}
trap cleanup EXIT

swift build -c "$configuration" --product roomcast >/dev/null 2>&1
swift build -c "$configuration" --product roomcast-bench >/dev/null 2>&1
bin="$(swift build -c "$configuration" --show-bin-path)"

redis-server --port "$redis_port" --bind 127.0.0.1 --save "" --appendonly no --dir "$dir" --daemonize yes \
    --pidfile "$dir/redis.pid" --logfile "$dir/redis.log"
for _ in $(seq 50); do redis-cli -p "$redis_port" ping >/dev/null 2>&1 && break; sleep 0.1; done

export ROOMCAST_JWT_SECRET="roomcast-benchmark-secret-0123456789abcdef"
export ROOMCAST_AUTH_BCRYPT_COST=4
gateways=()
for port in 8181 8182; do
    "$bin/roomcast" serve --port "$port" --redis-url "redis://127.0.0.1:$redis_port" --log-level error > "$dir/node-$port.log" 2>&1 &
    pids+=("$!")
    gateways+=(--gateway "http://127.0.0.1:$port")
done
for port in 8181 8182; do
    for _ in $(seq 100); do curl -sf "http://127.0.0.1:$port/readyz" >/dev/null && break; sleep 0.1; done
done

"$bin/roomcast-bench" "${gateways[@]}" --redis-url "redis://127.0.0.1:$redis_port" \
    --rooms "$rooms" --rate "$rate" --seconds "$seconds" --pids "$(IFS=,; echo "${pids[*]}")"
