#!/usr/bin/env bash
# Start/stop a private Redis and N python-socketio peer nodes for sioload.
#
#   nodes.sh start [MODE] [PORT...]   MODE = aiohttp (default) | uvicorn;
#                                     ports default to 7101 7102
#   nodes.sh stop                     stops what "start" started (by PID)
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
mkdir -p "$RUN"

alive() { [ -f "$1" ] && kill -0 "$(cat "$1")" 2>/dev/null; }

start_redis() {
  if alive "$RUN/redis.pid"; then return; fi
  if (exec 3<>"/dev/tcp/127.0.0.1/$REDIS_PORT") 2>/dev/null; then
    echo "port $REDIS_PORT is already in use (another Redis?); set REDIS_PORT" >&2
    exit 1
  fi
  redis-server --port "$REDIS_PORT" --bind 127.0.0.1 --save '' --appendonly no \
    --daemonize no --logfile "$RUN/redis.log" >/dev/null 2>&1 &
  echo $! >"$RUN/redis.pid"
  for _ in $(seq 50); do redis-cli -p "$REDIS_PORT" ping >/dev/null 2>&1 && return; sleep 0.1; done
  echo "redis did not start" >&2; exit 1
}

case "${1:-}" in
start)
  mode=${2:-aiohttp}
  shift $(( $# >= 2 ? 2 : $# ))
  ports=("$@"); [ ${#ports[@]} -eq 0 ] && ports=(7101 7102)
  start_redis
  for p in "${ports[@]}"; do
    if alive "$RUN/node$p.pid"; then echo "node $p already running" >&2; continue; fi
    if (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null; then
      echo "port $p is already in use by another process" >&2; exit 1
    fi
    # the hard RLIMIT_NOFILE may be capped (20000 in the sandbox): raise the soft one only
    (ulimit -n "$(ulimit -Hn)"; exec "$PY" "$HERE/server.py" "$p" --mode "$mode" \
        --redis "redis://127.0.0.1:$REDIS_PORT/0" ${JWT_SECRET:+--jwt-secret "$JWT_SECRET"}) \
      >"$RUN/node$p.log" 2>&1 &
    echo $! >"$RUN/node$p.pid"
    echo "$p" >>"$RUN/ports"
  done
  for p in "${ports[@]}"; do
    for _ in $(seq 100); do
      (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null && break; sleep 0.1
    done
    alive "$RUN/node$p.pid" || { echo "node $p died, see $RUN/node$p.log" >&2; exit 1; }
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
  echo "usage: $0 start [aiohttp|uvicorn] [PORT...] | stop | pids" >&2; exit 2 ;;
esac
