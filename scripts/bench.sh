#!/usr/bin/env bash
# End-to-end benchmark: a private Redis, gateway nodes built in release mode, and roomcast-bench
# against them over loopback. Prints one JSON line and a summary. Scenarios and their options:
#
#   scripts/bench.sh canvas  [--rooms 1000] [--rate 5] [--seconds 10]      # drag in two-person rooms
#   scripts/bench.sh chat    [--rooms 10] [--members 100] [--rate 20] [--seconds 10]   # fan-out
#   scripts/bench.sh preview [--rooms 120] [--members 10] [--rate 25] [--seconds 10]   # element:drag previews
#   scripts/bench.sh idle    [--connections 19000] [--seconds 10]          # memory per connection
#   scripts/bench.sh connect [--connections 5000] [--concurrency 100]      # connect + JWT rate
#   scripts/bench.sh floor                  # beside the uWS floor, the Node and python peers (scripts/bench-floor.sh)
#   scripts/bench.sh storm                  # reconnect storm: a node holding 10,000 sockets killed (scripts/bench-floor.sh)
#
# BENCH_COMPRESS=1: the load generator's sockets offer permessage-deflate (the nodes accept it
# unless ROOMCAST_WEBSOCKET_COMPRESSION=off; ROOMCAST_WEBSOCKET_COMPRESSION_THRESHOLD_BYTES=0
# compresses every event).
# BENCH_NODES (default 2) nodes run; `idle` on one node: BENCH_NODES=1 scripts/bench.sh idle ...
# BENCH_NODE_PORT (8180): the nodes listen on the ports after it; BENCH_REDIS_PORT (6398): Redis.
# BENCH_REDIS=cluster runs three Redis Cluster masters instead of one server (ports from
# BENCH_REDIS_PORT on). The nodes lift the per-socket and per-user limits that would throttle a
# load generator.
set -euo pipefail
cd "$(dirname "$0")/.."

scenario="${1:?usage: scripts/bench.sh canvas|chat|preview|idle|connect|floor|storm [options]}"
shift
# Against the floor (uWebSockets) and the peers (Node, python), driven by sioload: its own script.
# The storm is one of its shapes, run here for Roomcast alone unless FLOOR_SYSTEMS names others.
if [ "$scenario" = floor ]; then exec scripts/bench-floor.sh "$@"; fi
if [ "$scenario" = storm ]; then
    FLOOR_SHAPES=storm FLOOR_SYSTEMS="${FLOOR_SYSTEMS:-roomcast}" exec scripts/bench-floor.sh "$@"
fi
scripts/setup.sh >/dev/null
nodes="${BENCH_NODES:-2}"
configuration="${ROOMCAST_BUILD:-release}"
. scripts/bench-lib.sh
bench_init

swift build -c "$configuration" --product roomcast >/dev/null
swift build -c "$configuration" --product roomcast-bench >/dev/null
bin="$(swift build -c "$configuration" --show-bin-path)"

bench_start_redis
bench_start_nodes "$bin" "$nodes"

"$bin/roomcast-bench" "$scenario" "${gateways[@]}" --redis-url "$redis_url" \
    --pids "$(IFS=,; echo "${pids[*]}")" "$@"
