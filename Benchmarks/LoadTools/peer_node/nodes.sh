#!/usr/bin/env bash
# Start/stop a private Redis and N Node.js Socket.IO peer nodes for sioload
# (the counterpart of ../peer_python/nodes.sh).
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
mkdir -p "$RUN"

alive() { [ -f "$1" ] && kill -0 "$(cat "$1")" 2>/dev/null; }
port_open() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

start_redis() {
  if alive "$RUN/redis.pid"; then return; fi
  if port_open "$REDIS_PORT"; then
    echo "port $REDIS_PORT is already in use (another Redis? peer_python's?); set REDIS_PORT" >&2
    exit 1
  fi
  redis-server --port "$REDIS_PORT" --bind 127.0.0.1 --save '' --appendonly no \
    --daemonize no --logfile "$RUN/redis.log" >/dev/null 2>&1 &
  echo $! >"$RUN/redis.pid"
  for _ in $(seq 50); do
    redis-cli -p "$REDIS_PORT" ping >/dev/null 2>&1 && alive "$RUN/redis.pid" && return
    sleep 0.1
  done
  echo "redis did not start, see $RUN/redis.log" >&2; exit 1
}

case "${1:-}" in
start)
  shift
  ports=("$@"); [ ${#ports[@]} -eq 0 ] && ports=(7101 7102)
  if [ ! -f "$PEER_NODE_MODULES/socket.io/package.json" ]; then
    echo "no $PEER_NODE_MODULES: set PEER_NODE_MODULES to a node_modules with socket.io and @socket.io/redis-adapter (../README.md)" >&2; exit 1
  fi
  start_redis
  for p in "${ports[@]}"; do
    if alive "$RUN/node$p.pid"; then echo "node $p already running" >&2; continue; fi
    if port_open "$p"; then
      echo "port $p is already in use by another process" >&2; exit 1
    fi
    # the hard RLIMIT_NOFILE may be capped (20000 in the sandbox): raise the soft one only
    # shellcheck disable=SC2086
    (ulimit -n "$(ulimit -Hn)"; exec "$NODE" ${NODE_ARGS:-} "$HERE/server.js" "$p" \
        --redis "redis://127.0.0.1:$REDIS_PORT/0" \
        --ping-interval "${PING_INTERVAL:-25}" --ping-timeout "${PING_TIMEOUT:-20}" \
        ${JWT_SECRET:+--jwt-secret "$JWT_SECRET"}) \
      >"$RUN/node$p.log" 2>&1 &
    echo $! >"$RUN/node$p.pid"
    echo "$p" >>"$RUN/ports"
  done
  for p in "${ports[@]}"; do
    for _ in $(seq 100); do
      port_open "$p" && break; alive "$RUN/node$p.pid" || break; sleep 0.1
    done
    alive "$RUN/node$p.pid" && port_open "$p" ||
      { echo "node $p died or did not listen, see $RUN/node$p.log" >&2; exit 1; }
  done
  "$0" pids
  ;;
stop)
  for f in "$RUN"/node*.pid "$RUN"/redis.pid; do
    [ -f "$f" ] || continue
    pid=$(cat "$f"); kill "$pid" 2>/dev/null || true
    # a node holding many connections can take a while to shut down gracefully
    for _ in $(seq 300); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    if kill -0 "$pid" 2>/dev/null; then kill -9 "$pid" 2>/dev/null || true; sleep 0.5; fi
    rm -f "$f"
  done
  rm -f "$RUN/ports"
  ;;
pids)
  out=""
  for f in "$RUN"/node*.pid; do [ -f "$f" ] && out+="$(cat "$f"),"; done
  [ -f "$RUN/redis.pid" ] && out+="$(cat "$RUN/redis.pid")"
  echo "${out%,}"
  ;;
*)
  echo "usage: $0 start [PORT...] | stop | pids" >&2; exit 2 ;;
esac
