#!/usr/bin/env bash
# Start/stop a private Redis and N Node.js Socket.IO peer nodes for sioload
# (the counterpart of ../peer_python/nodes.sh; both on ../peer_nodes.sh).
#
#   nodes.sh start [PORT...]   ports default to 7101 7102
#   nodes.sh stop              stops what "start" started (by PID, never by name)
#   nodes.sh pids              prints "node1,node2,...,redis" PIDs
#
# Environment: BENCH=/tmp/bench (node_modules: PEER_NODE_MODULES, default
# $BENCH/peer_node/node_modules), RUN=$BENCH/run/peer_node (pid and log
# files; apart from peer_python's $BENCH/run/peer_python so that the two never stop each
# other's processes), REDIS_PORT=6379, NODE=node, NODE_ARGS (extra node
# flags), PING_INTERVAL / PING_TIMEOUT (seconds, default 25 / 20), JWT_SECRET
# (when set, the nodes accept only HS256 JWTs signed with it: sioload -jwt-secret).
set -euo pipefail
BENCH=${BENCH:-/tmp/bench}
RUN=${RUN:-$BENCH/run/peer_node}
NODE=${NODE:-node}
REDIS_PORT=${REDIS_PORT:-6379}
HERE=$(cd "$(dirname "$0")" && pwd)
export PEER_NODE_MODULES=${PEER_NODE_MODULES:-$BENCH/peer_node/node_modules}
# shellcheck source=../peer_nodes.sh
. "$HERE/../peer_nodes.sh"

launch_node() {
  # shellcheck disable=SC2086
  exec "$NODE" ${NODE_ARGS:-} "$HERE/server.js" "$1" \
    --redis "redis://127.0.0.1:$REDIS_PORT/0" \
    --ping-interval "${PING_INTERVAL:-25}" --ping-timeout "${PING_TIMEOUT:-20}" \
    ${JWT_SECRET:+--jwt-secret "$JWT_SECRET"}
}

case "${1:-}" in
start)
  shift
  if [ ! -f "$PEER_NODE_MODULES/socket.io/package.json" ]; then
    echo "no $PEER_NODE_MODULES: set PEER_NODE_MODULES to a node_modules with socket.io and @socket.io/redis-adapter (../README.md)" >&2; exit 1
  fi
  start_nodes "$@" ;;
stop) stop_nodes ;;
pids) print_pids ;;
*)
  echo "usage: $0 start [PORT...] | stop | pids" >&2; exit 2 ;;
esac
