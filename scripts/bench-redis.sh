#!/usr/bin/env bash
# Pipelined PING/INCR throughput of our RedisClient next to redis-benchmark -P 16, both against a
# private redis-server on this machine. Usage: scripts/bench-redis.sh [seconds] [clients] [pipeline]
#
# scripts/bench-redis.sh scripts [operations]: Redis's own CPU per message:send, element:update
# and preview, through the stores and their scripts, one in flight and 64 in flight
# (Benchmarks/RedisScriptsBenchmark), with each command's calls and µs per operation.
#
# scripts/bench-redis.sh durable [operations]: what durable acks (redis.wait_replicas) cost a
# change's ack: message:send latency with the master's reply alone and with WAIT 1, against a
# master and one replica on this machine (docs/operations/redis.md, "Durable acks").
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh

mode=throughput
if [ "${1:-}" = scripts ]; then mode=scripts; shift; fi
if [ "${1:-}" = durable ]; then mode=durable; shift; fi
seconds="${1:-5}"; clients="${2:-50}"; depth="${3:-16}"
port="${BENCH_REDIS_PORT:-6399}"
dir="$(mktemp -d -t roomcast-bench-redis.XXXX)"
redis-server --port "$port" --bind 127.0.0.1 --save "" --appendonly no --dir "$dir" --daemonize yes \
    --pidfile "$dir/redis.pid" --logfile "$dir/redis.log"
trap 'redis-cli -p "$port" shutdown nosave >/dev/null 2>&1 || true; rm -rf "$dir"' EXIT
for _ in $(seq 50); do redis-cli -p "$port" ping >/dev/null 2>&1 && break; sleep 0.1; done

if [ "$mode" = durable ]; then
    replica_port=$((port + 1))
    redis-server --port "$replica_port" --bind 127.0.0.1 --save "" --appendonly no --dir "$dir" --daemonize yes \
        --pidfile "$dir/replica.pid" --logfile "$dir/replica.log" --replicaof 127.0.0.1 "$port"
    trap 'redis-cli -p "$replica_port" shutdown nosave >/dev/null 2>&1 || true; redis-cli -p "$port" shutdown nosave >/dev/null 2>&1 || true; rm -rf "$dir"' EXIT
    for _ in $(seq 100); do redis-cli -p "$replica_port" info replication | grep -q "master_link_status:up" && break; sleep 0.1; done
    swift build -c release --product RedisScriptsBenchmark >/dev/null 2>&1
    "$(swift build -c release --show-bin-path)/RedisScriptsBenchmark" ack "redis://127.0.0.1:$port" "${1:-10000}"
    exit
fi
if [ "$mode" = scripts ]; then
    swift build -c release --product RedisScriptsBenchmark >/dev/null 2>&1
    "$(swift build -c release --show-bin-path)/RedisScriptsBenchmark" "redis://127.0.0.1:$port" "${1:-20000}"
    exit
fi
swift build -c release --product RedisClientBenchmark >/dev/null 2>&1
echo "== redis-benchmark -P $depth -c $clients"
redis-benchmark -p "$port" -P "$depth" -c "$clients" -t ping_mbulk,incr -n $((seconds * 400000)) -q | tr "\r" "\n" | grep "requests per second"
echo "== RedisClient"
"$(swift build -c release --show-bin-path)/RedisClientBenchmark" "redis://127.0.0.1:$port" "$seconds" "$clients" "$depth"
