#!/usr/bin/env bash
# The Engine.IO v4 / Socket.IO v5 protocol conformance run of CI: our port of the official suites'
# 57 cases (tests/conformance, pytest) against `roomcast-conformance`, the conformance server built
# on the SocketIOServer library (Conformance/SocketIOConformance).
#
#   scripts/conformance.sh                      # build, start on a free loopback port, run, stop
#   scripts/conformance.sh -k upgrade -x        # extra arguments go to pytest
#
# ROOMCAST_CONFORMANCE_BINARY=/path/to/server  uses that binary instead of building one
# ROOMCAST_BUILD=release                        builds optimised (default debug)
# CONFORMANCE_WAIT=SECONDS                      the bound of every wait inside a case (default 10)
#
# The server is started as `BINARY --host 127.0.0.1 --port N`; the run waits until it answers
# GET /engine.io/?EIO=4&transport=polling, runs `.venv/bin/pytest tests/conformance` with
# CONFORMANCE_URL=http://127.0.0.1:N, stops the server and exits with pytest's status.
# scripts/conformance-official.sh runs the unmodified official suites instead (local only).
set -euo pipefail
cd "$(dirname "$0")/.."

binary="${ROOMCAST_CONFORMANCE_BINARY:-}"
if [ -z "$binary" ]; then
    configuration="${ROOMCAST_BUILD:-debug}"
    swift build -c "$configuration" --product roomcast-conformance
    binary="$(swift build -c "$configuration" --show-bin-path)/roomcast-conformance"
fi
if [ ! -x "$binary" ]; then
    echo "conformance: no conformance server at $binary" >&2
    exit 2
fi

if [ ! -x .venv/bin/pytest ]; then
    [ -x .venv/bin/python ] || python3 -m venv .venv
    .venv/bin/pip install -q --disable-pip-version-check -r tests/e2e/requirements.txt
fi

log="$(mktemp -t roomcast-conformance.XXXXXX)"
server_pid=""
stop_server() {
    if [ -n "$server_pid" ]; then
        kill "$server_pid" 2>/dev/null || true
        wait "$server_pid" 2>/dev/null || true
        server_pid=""
    fi
}
trap 'stop_server; rm -f "$log"' EXIT

free_port() {
    .venv/bin/python -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# The HTTP status of a GET (000 when nothing answers): curl, or the venv's Python without it.
http_status() {
    if command -v curl >/dev/null; then
        curl -s -o /dev/null -m 2 -w '%{http_code}' "$1" 2>/dev/null || true
    else
        .venv/bin/python - "$1" <<'EOF' 2>/dev/null || echo 000
import sys, urllib.error, urllib.request
try:
    print(urllib.request.urlopen(sys.argv[1], timeout=2).status)
except urllib.error.HTTPError as error:
    print(error.code)
EOF
    fi
}

# Start the server; a port taken between free_port and the bind makes it exit: try another.
port=""
for attempt in 1 2 3; do
    candidate="$(free_port)"
    "$binary" --host 127.0.0.1 --port "$candidate" > "$log" 2>&1 &
    server_pid=$!
    deadline=$((SECONDS + 60))
    while :; do
        if ! kill -0 "$server_pid" 2>/dev/null; then
            wait "$server_pid" 2>/dev/null || true
            server_pid=""
            break
        fi
        status="$(http_status "http://127.0.0.1:$candidate/engine.io/?EIO=4&transport=polling")"
        if [ "$status" = 200 ]; then
            port="$candidate"
            break
        fi
        if [ "$SECONDS" -ge "$deadline" ]; then
            echo "conformance: $binary did not answer on port $candidate within 60 s; its output:" >&2
            cat "$log" >&2
            exit 2
        fi
        sleep 0.1
    done
    [ -z "$port" ] || break
    echo "conformance: $binary exited before answering on port $candidate (attempt $attempt); its output:" >&2
    cat "$log" >&2
done
if [ -z "$port" ]; then
    echo "conformance: could not start $binary" >&2
    exit 2
fi
echo "conformance: $binary on http://127.0.0.1:$port" >&2

status=0
CONFORMANCE_URL="http://127.0.0.1:$port" .venv/bin/pytest tests/conformance "$@" || status=$?
if ! kill -0 "$server_pid" 2>/dev/null; then
    echo "conformance: the server exited during the run; its output:" >&2
    cat "$log" >&2
    [ "$status" -ne 0 ] || status=1
fi
stop_server
exit "$status"
