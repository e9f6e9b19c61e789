#!/usr/bin/env bash
# Start/stop a private Redis and N python-socketio peer nodes for sioload
# (the counterpart of ../peer_node/nodes.sh; both on ../peer_nodes.sh).
#
#   nodes.sh start [MODE] [PORT...]   MODE = aiohttp (default) | uvicorn;
#                                     ports default to 7101 7102
#   nodes.sh stop                     stops what "start" started (by PID, never by name)
#   nodes.sh pids                     prints "node1,node2,...,redis" PIDs
#
# Environment: BENCH=/tmp/bench (venv at $BENCH/venv, pid/log files in
# $BENCH/run/peer_python), REDIS_PORT=6379, JWT_SECRET (when set, the nodes
# accept only HS256 JWTs signed with it: sioload -jwt-secret).
set -euo pipefail
BENCH=${BENCH:-/tmp/bench}
RUN=$BENCH/run/peer_python
PY=$BENCH/venv/bin/python
REDIS_PORT=${REDIS_PORT:-6379}
HERE=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=../peer_nodes.sh
. "$HERE/../peer_nodes.sh"

launch_node() {
  exec "$PY" "$HERE/server.py" "$1" --mode "$mode" \
    --redis "redis://127.0.0.1:$REDIS_PORT/0" ${JWT_SECRET:+--jwt-secret "$JWT_SECRET"}
}

case "${1:-}" in
start)
  mode=${2:-aiohttp}
  shift $(( $# >= 2 ? 2 : $# ))
  start_nodes "$@" ;;
stop) stop_nodes ;;
pids) print_pids ;;
*)
  echo "usage: $0 start [aiohttp|uvicorn] [PORT...] | stop | pids" >&2; exit 2 ;;
esac
