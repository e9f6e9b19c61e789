#!/usr/bin/env bash
# WebSocket conformance: Autobahn|Testsuite's fuzzing client (tests/autobahn/fuzzingclient.json)
# against roomcast-autobahn-echo, an echo served by the gateway's own WebSocket stack
# (WebSocketServerChannel). Prints the count of cases per behavior and every case that is not OK, and
# exits non-zero when a case FAILED or the run did not finish. Reports go to var/autobahn/reports/.
#
#   scripts/autobahn.sh                     # every case, the 9.* performance cases included
#   scripts/autobahn.sh --skip-performance  # all but 9.*
#   scripts/autobahn.sh --quick             # all but 9.* and, of the compression cases (12.*, 13.*),
#                                           # only 12.1.* and 13.1.*: the rest take ~10 minutes of a
#                                           # debug build and repeat them with other window settings
#   scripts/autobahn.sh --max-payload N     # the echo's frame and message limit, in bytes
#
# The limit is the gateway's default (engineio.max_payload) unless 9.* run: those send messages of
# up to 16 MiB, so the echo then takes 16 MiB (with 1,000,000 bytes, 38 of them end in 1009,
# "message too big", as they should, and Autobahn counts that as FAILED). No other case sends more
# than 256 KiB.
#
# The suite is Python 2.7 code (even its 25.x release on PyPI): it runs in a Python 2.7
# virtualenv in var/autobahn/, made from AUTOBAHN_PYTHON2, python2.7 on PATH or pyenv's 2.7.
# ROOMCAST_BUILD=release builds optimised; ROOMCAST_AUTOBAHN_SCRATCH sets swift's --scratch-path.
set -euo pipefail
cd "$(dirname "$0")/.."

skip_performance=""
max_payload=""
while [ $# -gt 0 ]; do
    case "$1" in
        --skip-performance) skip_performance=yes ;;
        --quick) skip_performance=quick ;;
        --max-payload) max_payload="${2:?--max-payload needs a number of bytes}"; shift ;;
        *) echo "usage: scripts/autobahn.sh [--skip-performance | --quick] [--max-payload BYTES]" >&2; exit 64 ;;
    esac
    shift
done

work="$PWD/var/autobahn"
mkdir -p "$work"
started=$SECONDS

# 1. The fuzzing client, in a Python 2.7 virtualenv kept until the pinned requirements change.
find_python2() {
    local candidate
    for candidate in "${AUTOBAHN_PYTHON2:-}" "$(command -v python2.7 || true)" \
        "${PYENV_ROOT:-${HOME:-}/.pyenv}"/versions/2.7*/bin/python2.7; do
        # A pyenv shim for a version that is not selected fails here and is skipped.
        if [ -n "$candidate" ] && [ -x "$candidate" ] &&
            "$candidate" -c 'import sys; sys.exit(sys.version_info[:2] != (2, 7))' 2>/dev/null; then
            echo "$candidate"
            return 0
        fi
    done
    return 1
}
venv="$work/venv-py27"
requirements=tests/autobahn/requirements-py27.txt
if ! cmp -s "$requirements" "$venv/requirements.txt" 2>/dev/null; then
    python2="$(find_python2)" || {
        echo "autobahn: no Python 2.7 found (set AUTOBAHN_PYTHON2): Autobahn|Testsuite runs on Python 2.7 only" >&2
        exit 2
    }
    echo "autobahn: making the Python 2.7 virtualenv ($python2)"
    rm -rf "$venv"
    # virtualenv 20.21 is the last that makes Python 2.7 environments; it runs on Python 3.
    [ -x "$work/bootstrap/bin/virtualenv" ] || {
        python3 -m venv "$work/bootstrap"
        "$work/bootstrap/bin/pip" install -q --disable-pip-version-check 'virtualenv==20.21.1'
    }
    VIRTUALENV_OVERRIDE_APP_DATA="$work/virtualenv-data" "$work/bootstrap/bin/virtualenv" -q -p "$python2" "$venv"
    "$venv/bin/pip" install -q --disable-pip-version-check --no-python-version-warning -r "$requirements"
    cp "$requirements" "$venv/requirements.txt"
fi

# 2. The echo server, on a free loopback port.
configuration="${ROOMCAST_BUILD:-debug}"
scratch="${ROOMCAST_AUTOBAHN_SCRATCH:-.build}"
swift build -c "$configuration" --scratch-path "$scratch" --product roomcast-autobahn-echo
echo_bin="$(swift build -c "$configuration" --scratch-path "$scratch" --show-bin-path)/roomcast-autobahn-echo"
prepared=$SECONDS

[ -n "$max_payload" ] || [ -n "$skip_performance" ] || max_payload=$((16 * 1024 * 1024))
"$echo_bin" --port 0 ${max_payload:+--max-payload "$max_payload"} >"$work/echo.log" 2>&1 &
echo_pid=$!
stop_echo() { kill -TERM "$echo_pid" 2>/dev/null && wait "$echo_pid" 2>/dev/null || true; }
trap stop_echo EXIT
port=""
for _ in $(seq 100); do
    port="$(sed -n 's|^autobahn echo ready on ws://[^:]*:\([0-9]*\)/.*|\1|p' "$work/echo.log")"
    [ -n "$port" ] && break
    kill -0 "$echo_pid" 2>/dev/null || { cat "$work/echo.log" >&2; echo "autobahn: the echo server did not start" >&2; exit 1; }
    sleep 0.1
done
[ -n "$port" ] || { echo "autobahn: the echo server did not say it was ready" >&2; exit 1; }
head -1 "$work/echo.log"

# 3. The run: the committed spec with this run's port, report folder and exclusions.
rm -rf "$work/reports"
python3 - "$work" "$port" "$skip_performance" <<'EOF'
import json, sys
work, port, skip_performance = sys.argv[1:]
with open("tests/autobahn/fuzzingclient.json") as f:
    spec = json.load(f)
spec["outdir"] = work + "/reports/servers"
for server in spec["servers"]:
    server["url"] = "ws://127.0.0.1:%s/" % port
if skip_performance:
    spec["exclude-cases"] = spec.get("exclude-cases", []) + ["9.*"]
if skip_performance == "quick":
    spec["exclude-cases"] += ["12.%d.*" % group for group in range(2, 6)] + ["13.%d.*" % group for group in range(2, 8)]
with open(work + "/fuzzingclient.json", "w") as f:
    json.dump(spec, f, indent=4)
EOF
echo "autobahn: running the fuzzing client (log: var/autobahn/wstest.log)"
wstest_status=0
# Bounded: a server that stops answering must not hold CI up (a full run takes about a minute).
(cd "$work" && PYTHONWARNINGS=ignore timeout 900 "$venv/bin/wstest" -m fuzzingclient -s fuzzingclient.json) >"$work/wstest.log" 2>&1 || wstest_status=$?
stop_echo
trap - EXIT
finished=$SECONDS

# 4. The verdict.
expected="$(sed -n 's/^Ok, will run \([0-9]*\) test cases.*/\1/p' "$work/wstest.log")"
python3 - "$work/reports/servers/index.json" "${expected:-0}" "$wstest_status" <<'EOF'
import json, sys
from collections import Counter
path, expected, wstest_status = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
try:
    with open(path) as f:
        cases = json.load(f)["roomcast"]
except (IOError, OSError, KeyError, ValueError) as error:
    sys.exit("autobahn: no report (%s); see var/autobahn/wstest.log" % error)

def key(case_id):
    return [int(part) for part in case_id.split(".")]

counts = Counter(case["behavior"] for case in cases.values())
print("autobahn: %d cases: %s" % (len(cases), ", ".join(
    "%s %d" % (behavior, counts[behavior])
    for behavior in ["OK", "NON-STRICT", "INFORMATIONAL", "UNIMPLEMENTED", "FAILED"])))
closing = Counter(case["behaviorClose"] for case in cases.values() if case["behaviorClose"] not in ("OK", "INFORMATIONAL", "UNIMPLEMENTED"))
if closing:
    print("autobahn: closing handshake not OK: %s" % ", ".join("%s %d" % item for item in sorted(closing.items())))
failed = []
for case_id in sorted(cases, key=key):
    case = cases[case_id]
    if case["behavior"] in ("OK", "INFORMATIONAL", "UNIMPLEMENTED") and case["behaviorClose"] in ("OK", "INFORMATIONAL", "UNIMPLEMENTED"):
        continue
    if "FAILED" in (case["behavior"], case["behaviorClose"]):
        failed.append(case_id)
    print("  %-8s %-10s close %-10s code %-5s %s" % (
        case_id, case["behavior"], case["behaviorClose"], case.get("remoteCloseCode"), case["reportfile"]))
unimplemented = sorted({case_id.split(".")[0] for case_id, case in cases.items() if case["behavior"] == "UNIMPLEMENTED"}, key=int)
if unimplemented:
    print("  UNIMPLEMENTED: %s" % ", ".join(s + ".*" for s in unimplemented))
if failed:
    sys.exit("autobahn: %d case(s) FAILED: %s" % (len(failed), " ".join(failed)))
if len(cases) != expected or wstest_status != 0:
    sys.exit("autobahn: the run stopped early: %d of %d cases, wstest exit %d; see var/autobahn/wstest.log" % (len(cases), expected, wstest_status))
EOF
echo "autobahn: passed (setup and build $((prepared - started)) s, fuzzing $((finished - prepared)) s; report: var/autobahn/reports/servers/index.html)"
