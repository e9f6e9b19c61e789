#!/usr/bin/env bash
# Sets up what is missing, builds everything and runs every test. Tests start their own
# redis-server on free loopback ports; none is assumed to be running.
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/setup.sh

sweep() {
    # Test servers left behind by a crashed test process carry this directory name.
    pkill -9 -f "roomcast-test-redis" 2>/dev/null || true
}
trap sweep EXIT

swift build --build-tests
swift test --skip-build "$@"

# End-to-end: the unmodified python-socketio client against two real gateway nodes (tests/e2e).
[ -x .venv/bin/python ] || python3 -m venv .venv
.venv/bin/pip install -q --disable-pip-version-check -r tests/e2e/requirements.txt
.venv/bin/python -m pytest -q tests/e2e
