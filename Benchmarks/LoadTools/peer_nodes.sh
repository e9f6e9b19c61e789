# Sourced by peer_node/nodes.sh and peer_python/nodes.sh: a private Redis and N peer nodes,
# started and stopped by PID, never by name. The sourcing script sets RUN (its pid and log
# files: each peer its own, so that the two never stop each other's processes) and REDIS_PORT,
# and defines `launch_node PORT`, which runs one node in the foreground (exec).

mkdir -p "$RUN"

alive() { [ -f "$1" ] && kill -0 "$(cat "$1")" 2>/dev/null; }
port_open() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

start_redis() {
  if alive "$RUN/redis.pid"; then return; fi
  if port_open "$REDIS_PORT"; then
    echo "port $REDIS_PORT is already in use (another Redis? the other peer's?); set REDIS_PORT" >&2
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

# start_nodes [PORT...]: Redis, then a node on each port (7101 7102 by default), each listening
# before it returns; prints the PIDs.
start_nodes() {
  local ports=("$@") p
  [ ${#ports[@]} -eq 0 ] && ports=(7101 7102)
  start_redis
  for p in "${ports[@]}"; do
    if alive "$RUN/node$p.pid"; then echo "node $p already running" >&2; continue; fi
    if port_open "$p"; then
      echo "port $p is already in use by another process" >&2; exit 1
    fi
    # the hard RLIMIT_NOFILE may be capped (20000 in the sandbox): raise the soft one only
    (ulimit -n "$(ulimit -Hn)"; launch_node "$p") >"$RUN/node$p.log" 2>&1 &
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
  print_pids
}

stop_nodes() {
  local f pid
  for f in "$RUN"/node*.pid "$RUN"/redis.pid; do
    [ -f "$f" ] || continue
    pid=$(cat "$f"); kill "$pid" 2>/dev/null || true
    # a node holding many connections can take a while to shut down gracefully
    for _ in $(seq 300); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    if kill -0 "$pid" 2>/dev/null; then kill -9 "$pid" 2>/dev/null || true; sleep 0.5; fi
    rm -f "$f"
  done
  rm -f "$RUN/ports"
}

# "node1,node2,...,redis"
print_pids() {
  local out="" f
  for f in "$RUN"/node*.pid; do [ -f "$f" ] && out+="$(cat "$f"),"; done
  [ -f "$RUN/redis.pid" ] && out+="$(cat "$RUN/redis.pid")"
  echo "${out%,}"
}
