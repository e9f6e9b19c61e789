#!/usr/bin/env bash
# Sets up what is missing, starts a local Redis (config/redis.conf, data in var/redis) unless one
# already answers on its port, builds and runs one gateway node. Extra arguments go to
# `roomcast serve` (e.g. --port 8081). ROOMCAST_BUILD=release builds optimised.
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/setup.sh

redis_port="${ROOMCAST_LOCAL_REDIS_PORT:-6379}"
started_redis=""
if redis-cli -p "$redis_port" ping >/dev/null 2>&1; then
    echo "run: using the Redis already answering on port $redis_port"
else
    mkdir -p var/redis
    redis-server config/redis.conf --port "$redis_port" --dir "$PWD/var/redis" \
        --daemonize yes --pidfile "$PWD/var/redis/redis.pid" --logfile "$PWD/var/redis/redis.log"
    for _ in $(seq 50); do redis-cli -p "$redis_port" ping >/dev/null 2>&1 && break; sleep 0.1; done
    redis-cli -p "$redis_port" ping >/dev/null || { echo "run: Redis did not start, see var/redis/redis.log" >&2; exit 1; }
    started_redis=yes
    echo "run: started Redis on port $redis_port (AOF in var/redis)"
fi
stop_redis() { [ -n "$started_redis" ] && redis-cli -p "$redis_port" shutdown >/dev/null 2>&1 || true; }
trap stop_redis EXIT

# A local JWT secret, made once and kept in var/ (ignored by git), unless one is given.
if [ -z "${ROOMCAST_JWT_SECRET:-}" ]; then
    mkdir -p var
    [ -s var/jwt-secret ] || head -c 48 /dev/urandom | base64 | tr -d '\n/+=' > var/jwt-secret
    export ROOMCAST_JWT_SECRET="$(cat var/jwt-secret)"
fi

configuration="${ROOMCAST_BUILD:-debug}"
swift build -c "$configuration" --product roomcast
export ROOMCAST_REDIS_URL="${ROOMCAST_REDIS_URL:-redis://127.0.0.1:$redis_port}"
"$(swift build -c "$configuration" --show-bin-path)/roomcast" serve "$@" &
gateway=$!
trap 'kill -TERM $gateway 2>/dev/null || true' INT TERM
wait $gateway || true
