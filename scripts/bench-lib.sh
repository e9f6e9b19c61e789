# Start-up shared by scripts/bench.sh and scripts/bench-floor.sh (sourced, not run): a private
# Redis (or three Redis Cluster masters) and gateway nodes built in release mode, with the limits
# that would throttle a load generator lifted. Everything started is stopped by PID on exit.
#
#   bench_init                     work dir ($dir), cleanup trap, open-files limit
#   bench_start_redis              BENCH_REDIS_PORT (6398), BENCH_REDIS=cluster: three masters
#                                  -> $redis_url, redis_ports=(...), redis_pids=(...)
#   bench_start_nodes BIN N        N nodes on BENCH_NODE_PORT+1.. (8181..) -> pids=(...),
#                                  node_ports=(...), gateways=(--gateway http://127.0.0.1:P ...)
#   bench_stop_nodes               stops the nodes started so far (Redis stays)
#   bench_stop_all                 stops the nodes and Redis started so far (the trap calls it)

bench_init() {
    dir="$(mktemp -d -t roomcast-bench.XXXXXX)"
    pids=()
    node_ports=()
    gateways=()
    redis_ports=()
    redis_pids=()
    trap 'bench_stop_all; rm -rf "$dir"' EXIT
    # Every held connection is a file on both sides.
    ulimit -n "$(ulimit -Hn)" 2>/dev/null || true
}

bench_stop_nodes() {
    local pid
    for pid in ${pids[@]+"${pids[@]}"}; do kill -TERM "$pid" 2>/dev/null || true; done
    # A draining node still uses CPU and its port: the next run must not start beside it.
    for pid in ${pids[@]+"${pids[@]}"}; do wait "$pid" 2>/dev/null || true; done
    pids=()
    node_ports=()
    gateways=()
}

bench_stop_all() {
    local port
    bench_stop_nodes
    for port in ${redis_ports[@]+"${redis_ports[@]}"}; do redis-cli -p "$port" shutdown nosave >/dev/null 2>&1 || true; done
    redis_ports=()
    redis_pids=()
}

bench_start_redis() {
    local redis_port="${BENCH_REDIS_PORT:-6398}" port cluster
    redis_ports=("$redis_port")
    if [ "${BENCH_REDIS:-standalone}" = cluster ]; then redis_ports=("$redis_port" $((redis_port + 1)) $((redis_port + 2))); fi
    for port in "${redis_ports[@]}"; do
        mkdir -p "$dir/redis-$port"
        cluster=()
        if [ "${#redis_ports[@]}" -gt 1 ]; then cluster=(--cluster-enabled yes --cluster-config-file nodes.conf); fi
        redis-server --port "$port" --bind 127.0.0.1 --save "" --appendonly no --dir "$dir/redis-$port" --daemonize yes \
            --pidfile "$dir/redis-$port/redis.pid" --logfile "$dir/redis-$port/redis.log" --maxclients 10000 ${cluster[@]+"${cluster[@]}"}
        for _ in $(seq 50); do redis-cli -p "$port" ping >/dev/null 2>&1 && break; sleep 0.1; done
        for _ in $(seq 50); do [ -s "$dir/redis-$port/redis.pid" ] && break; sleep 0.1; done
        redis_pids+=("$(cat "$dir/redis-$port/redis.pid")")
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
}

bench_start_nodes() {
    local bin="$1" count="$2" base="${BENCH_NODE_PORT:-8180}" index port
    export ROOMCAST_JWT_SECRET="roomcast-benchmark-secret-0123456789abcdef"
    export ROOMCAST_AUTH_BCRYPT_COST=4
    export ROOMCAST_SOCKET_EVENTS_PER_SECOND=1000000 ROOMCAST_SOCKET_EVENT_BURST=1000000
    export ROOMCAST_SOCKET_MAX_PER_USER=100000 ROOMCAST_ROOMS_MAX_PARTICIPANTS=1000
    export ROOMCAST_RATE_LOGINS_PER_ADDRESS=1000000 ROOMCAST_RATE_REST_MUTATIONS_PER_USER=1000000
    for index in $(seq "$count"); do
        port=$((base + index))
        "$bin/roomcast" serve --port "$port" --redis-url "$redis_url" --log-level error > "$dir/node-$port.log" 2>&1 &
        pids+=("$!")
        node_ports+=("$port")
        gateways+=(--gateway "http://127.0.0.1:$port")
    done
    for port in "${node_ports[@]}"; do
        for _ in $(seq 100); do curl -sf "http://127.0.0.1:$port/readyz" >/dev/null && break; sleep 0.1; done
    done
}
