#!/usr/bin/env bash
# Runs the OFFICIAL, UNMODIFIED Engine.IO v4 and Socket.IO v5 protocol test suites (socketio/socket.io:
# docs/engine.io-protocol/v4-test-suite/test-suite.js, docs/socket.io-protocol/v5-test-suite/test-suite.js)
# with mocha against a server on port 3000, and prints the pass/fail counts of each.
#
# LOCAL ONLY: it needs a git mirror of socketio/socket.io, which CI cannot reach (CI runs our port of
# the same cases, tests/conformance, through scripts/conformance.sh). Nothing of the suites is kept in
# the repository: everything goes to a temporary directory removed on exit.
#
#   scripts/conformance-official.sh                                # server already on localhost:3000
#   scripts/conformance-official.sh --start .build/debug/roomcast-conformance
#                                                                  # starts BINARY --port 3000 first
#   scripts/conformance-official.sh --suite engine.io              # one suite (engine.io | socket.io)
#
#   --mirror DIR   a git clone of socketio/socket.io (a bare git directory, or a directory holding
#                  one as repo/); default $CONFORMANCE_MIRROR
#   --rev REV      the revision of the suites to run (default HEAD)
#   --keep         keep the temporary directory (its path is printed)
#   --repeat N     run the suites N times (a timing-sensitive case that fails now and then shows up;
#                  the end lists each case that failed in any run, with how often)
#
# The suites hard-code http://localhost:3000 (they are run unmodified), so the server must answer
# there: with --start this script runs `BINARY --port 3000` and stops it at the end; without, it
# checks that something answers GET /engine.io/?EIO=4&transport=polling on port 3000 and uses it.
#
# What the suites need besides mocha and ws is stood in for, in the temporary directory:
#   - mocha and ws: Debian's `mocha` and `node-ws`, installed with apt-get when missing (no npm
#     registry is needed or used);
#   - chai + chai-string: a few lines of our own written below: `expect` with the five assertions
#     the suites use (eql, startsWith, all.keys, a, oneOf);
#   - node-fetch: Node's own fetch (Node >= 18), which node-imports.js then puts back on globalThis.
# The suites' test-suite.js, node-imports.js and package.json ("type": "module") are copied as they are.
#
# Exit status: 0 when every case of the suites run passed, 1 when some failed, 2 on a setup problem.
set -euo pipefail
cd "$(dirname "$0")/.."

mirror="${CONFORMANCE_MIRROR:-}"
rev=HEAD
start_binary=""
suites="engine.io socket.io"
repeat=1
keep=""
while [ $# -gt 0 ]; do
    case "$1" in
        --mirror) mirror="${2:?--mirror needs a directory}"; shift ;;
        --rev) rev="${2:?--rev needs a revision}"; shift ;;
        --start) start_binary="${2:?--start needs the server binary}"; shift ;;
        --suite) suites="${2:?--suite needs engine.io or socket.io}"; shift ;;
        --keep) keep=yes ;;
        --repeat) repeat="${2:?--repeat needs a count}"; shift ;;
        -h|--help) sed -n '2,31p' "$0"; exit 0 ;;
        *) echo "usage: scripts/conformance-official.sh [--mirror DIR] [--rev REV] [--start BINARY] [--suite engine.io|socket.io] [--keep] [--repeat N]" >&2; exit 2 ;;
    esac
    shift
done

# --- the mirror ----------------------------------------------------------------------------------
git_dir=""
for candidate in "$mirror" "$mirror/repo" "$mirror/.git"; do
    if [ -d "$candidate" ] && git --git-dir="$candidate" rev-parse --verify -q "$rev^{commit}" >/dev/null 2>&1; then
        git_dir="$candidate"
        break
    fi
done
if [ -z "$git_dir" ]; then
    echo "conformance-official: no git mirror of socketio/socket.io with revision $rev at $mirror (--mirror DIR)" >&2
    exit 2
fi

# --- node, mocha, ws -------------------------------------------------------------------------------
as_root() { if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo "$@"; fi; }
if ! command -v node >/dev/null; then
    echo "conformance-official: node (Node.js >= 18) is required" >&2
    exit 2
fi
if ! command -v mocha >/dev/null || [ ! -f /usr/share/nodejs/ws/package.json ]; then
    echo "conformance-official: installing Debian's mocha and node-ws" >&2
    as_root apt-get install -y mocha node-ws >&2 ||
        { as_root apt-get update >&2 && as_root apt-get install -y mocha node-ws >&2; }
fi
if ! node -e 'process.exit(typeof fetch === "function" ? 0 : 1)'; then
    echo "conformance-official: this Node.js has no fetch (Node.js >= 18 needed)" >&2
    exit 2
fi

# --- the temporary directory ---------------------------------------------------------------------
work="$(mktemp -d -t roomcast-conformance-official.XXXXXX)"
server_pid=""
cleanup() {
    if [ -n "$server_pid" ]; then
        kill "$server_pid" 2>/dev/null || true
        wait "$server_pid" 2>/dev/null || true
    fi
    if [ -n "$keep" ]; then echo "conformance-official: kept $work" >&2; else rm -rf "$work"; fi
}
trap cleanup EXIT

declare -A suite_dir=(
    [engine.io]=docs/engine.io-protocol/v4-test-suite
    [socket.io]=docs/socket.io-protocol/v5-test-suite
)
for suite in $suites; do
    dir="${suite_dir[$suite]:-}"
    [ -n "$dir" ] || { echo "conformance-official: unknown suite '$suite' (engine.io | socket.io)" >&2; exit 2; }
    mkdir -p "$work/$suite"
    for file in test-suite.js node-imports.js package.json; do
        git --git-dir="$git_dir" show "$rev:$dir/$file" > "$work/$suite/$file"
    done
done
echo "conformance-official: suites from $git_dir at $(git --git-dir="$git_dir" rev-parse --short "$rev^{commit}")" >&2

# ESM resolves bare specifiers through node_modules/ only (NODE_PATH is for require()): the shared
# node_modules/ beside the two suite directories holds ws (Debian's) and the stand-ins.
modules="$work/node_modules"
mkdir -p "$modules/chai" "$modules/chai-string" "$modules/node-fetch"
ln -s /usr/share/nodejs/ws "$modules/ws"

cat > "$modules/node-fetch/package.json" <<'EOF'
{ "name": "node-fetch", "version": "0.0.0-standin", "type": "module", "main": "index.js", "exports": "./index.js" }
EOF
cat > "$modules/node-fetch/index.js" <<'EOF'
// Stand-in for node-fetch: Node's own fetch (undici), which node-imports.js puts on globalThis anyway.
const nativeFetch = globalThis.fetch;
export default function fetch(...args) {
  return nativeFetch(...args);
}
EOF

cat > "$modules/chai/package.json" <<'EOF'
{ "name": "chai", "version": "0.0.0-standin", "type": "module", "main": "index.js", "exports": "./index.js" }
EOF
cat > "$modules/chai/index.js" <<'EOF'
// Stand-in for chai 4 (written for scripts/conformance-official.sh): `expect` with the assertions the
// Engine.IO and Socket.IO protocol suites use: eql, a, oneOf, all.keys (and startsWith, which
// chai-string adds through chai.use). Failures throw an AssertionError mocha shows with a diff.

export class AssertionError extends Error {
  constructor(message, actual, expected, showDiff) {
    super(message);
    this.name = "AssertionError";
    if (showDiff) {
      this.actual = actual;
      this.expected = expected;
      this.showDiff = true;
    }
  }
}

function typeOf(value) {
  if (value === null) return "null";
  if (value === undefined) return "undefined";
  const primitive = typeof value;
  if (primitive !== "object" && primitive !== "function") return primitive;
  return Object.prototype.toString.call(value).slice(8, -1).toLowerCase();
}

function show(value) {
  if (value instanceof ArrayBuffer) return `ArrayBuffer [${Array.from(new Uint8Array(value)).join(", ")}]`;
  if (ArrayBuffer.isView(value)) return `${value.constructor.name} [${Array.from(new Uint8Array(value.buffer, value.byteOffset, value.byteLength)).join(", ")}]`;
  try {
    return JSON.stringify(value);
  } catch (e) {
    return String(value);
  }
}

// chai's deep equality (deep-eql), for what the suites compare: primitives, arrays, plain objects,
// ArrayBuffers and typed arrays (byte by byte, and only with a value of the same type).
export function deepEqual(a, b) {
  if (a === b) return a !== 0 || 1 / a === 1 / b;
  if (Number.isNaN(a) && Number.isNaN(b)) return true;
  const type = typeOf(a);
  if (type !== typeOf(b)) return false;
  if (typeof a !== "object" || a === null || b === null) return false;
  if (a instanceof ArrayBuffer || ArrayBuffer.isView(a)) {
    const x = a instanceof ArrayBuffer ? new Uint8Array(a) : new Uint8Array(a.buffer, a.byteOffset, a.byteLength);
    const y = b instanceof ArrayBuffer ? new Uint8Array(b) : new Uint8Array(b.buffer, b.byteOffset, b.byteLength);
    return x.length === y.length && x.every((byte, i) => byte === y[i]);
  }
  if (Array.isArray(a)) {
    return a.length === b.length && a.every((item, i) => deepEqual(item, b[i]));
  }
  const keysA = Object.keys(a).sort();
  const keysB = Object.keys(b).sort();
  return deepEqual(keysA, keysB) && keysA.every((key) => deepEqual(a[key], b[key]));
}

export class Assertion {
  constructor(object, message) {
    this._obj = object;
    this._message = message;
    this._all = false;
    this._negate = false;
  }

  // this.assert(condition, message, negatedMessage, expected, actual, showDiff), as chai plugins call it
  assert(condition, message, negatedMessage, expected, actual = this._obj, showDiff = false) {
    const ok = this._negate ? !condition : condition;
    if (!ok) {
      const text = (this._negate ? negatedMessage : message)
        .replace(/#\{this\}/g, show(this._obj))
        .replace(/#\{exp\}/g, show(expected))
        .replace(/#\{act\}/g, show(actual));
      throw new AssertionError((this._message ? this._message + ": " : "") + text, actual, expected, showDiff);
    }
  }

  static addMethod(name, method) {
    Object.defineProperty(Assertion.prototype, name, {
      configurable: true,
      value: function (...args) {
        const result = method.apply(this, args);
        return result === undefined ? this : result;
      },
    });
  }

  static addProperty(name, getter) {
    Object.defineProperty(Assertion.prototype, name, {
      configurable: true,
      get() {
        const result = getter.call(this);
        return result === undefined ? this : result;
      },
    });
  }

  get not() {
    this._negate = !this._negate;
    return this;
  }

  get all() {
    this._all = true;
    return this;
  }

  eql(expected) {
    this.assert(deepEqual(this._obj, expected), "expected #{this} to deeply equal #{exp}",
      "expected #{this} to not deeply equal #{exp}", expected, this._obj, true);
    return this;
  }

  a(type) {
    const actualType = typeOf(this._obj);
    this.assert(actualType === String(type).toLowerCase(), `expected #{this} to be a ${type}`,
      `expected #{this} not to be a ${type}`);
    return this;
  }

  oneOf(list) {
    this.assert(list.includes(this._obj), "expected #{this} to be one of #{exp}",
      "expected #{this} to not be one of #{exp}", list);
    return this;
  }

  keys(...args) {
    const expected = (args.length === 1 && Array.isArray(args[0]) ? args[0] : args).map(String);
    const object = this._obj;
    if (object === null || typeof object !== "object") {
      throw new AssertionError(`expected ${show(object)} to be an object with keys`);
    }
    const actual = Object.keys(object);
    // `all.keys` (the only form the suites use): exactly these keys, no more, no fewer.
    const ok = actual.length === expected.length && expected.every((key) => actual.includes(key));
    this.assert(ok, "expected #{this} to have all keys #{exp}", "expected #{this} to not have all keys #{exp}",
      expected.slice().sort(), actual.slice().sort(), true);
    return this;
  }
}

for (const word of ["to", "be", "been", "is", "that", "which", "and", "has", "have", "with", "at", "of", "same", "but", "does", "still", "also"]) {
  Object.defineProperty(Assertion.prototype, word, { configurable: true, get() { return this; } });
}
Assertion.prototype.an = Assertion.prototype.a;

export function expect(value, message) {
  return new Assertion(value, message);
}

const utils = { type: typeOf, inspect: show, deepEqual };
const used = new Set();
const chai = {
  expect,
  Assertion,
  AssertionError,
  use(plugin) {
    if (!used.has(plugin)) {
      used.add(plugin);
      plugin(chai, utils);
    }
    return chai;
  },
};

export default chai;
EOF

cat > "$modules/chai-string/package.json" <<'EOF'
{ "name": "chai-string", "version": "0.0.0-standin", "type": "module", "main": "index.js", "exports": "./index.js" }
EOF
cat > "$modules/chai-string/index.js" <<'EOF'
// Stand-in for chai-string: the one assertion of it the suites use, startsWith (a string prefix).
export default function chaiString(chai) {
  chai.Assertion.addMethod("startsWith", function (prefix) {
    const actual = this._obj;
    this.assert(typeof actual === "string" && actual.startsWith(prefix),
      "expected #{this} to start with #{exp}", "expected #{this} not to start with #{exp}", prefix);
  });
}
EOF

# Debian's mocha 10 requires log-symbols 5, an ES module, and gets no symbols: the spec reporter would
# print "undefined" for each passing case. Put plain marks back (display only).
cat > "$work/mocha-symbols.cjs" <<'EOF'
try {
  const base = require(require.resolve("mocha/lib/reporters/base.js", { paths: ["/usr/share/nodejs", "/usr/lib/nodejs"] }));
  for (const [name, mark] of Object.entries({ ok: "✓", err: "✖", dot: "․", comma: ",", bang: "!" })) {
    if (typeof base.symbols[name] !== "string") base.symbols[name] = mark;
  }
} catch (e) {
  // another mocha: leave its reporter alone
}
EOF

# --- the server ------------------------------------------------------------------------------------
probe_url="http://localhost:3000/engine.io/?EIO=4&transport=polling"
answers() { curl -s -o /dev/null -m 2 -w '%{http_code}' "$probe_url" 2>/dev/null | grep -qv '^000$'; }
if [ -n "$start_binary" ]; then
    [ -x "$start_binary" ] || { echo "conformance-official: $start_binary is not an executable" >&2; exit 2; }
    if answers; then
        echo "conformance-official: something already answers on port 3000; stop it or run without --start" >&2
        exit 2
    fi
    "$start_binary" --port 3000 > "$work/server.log" 2>&1 &
    server_pid=$!
    deadline=$((SECONDS + 120))
    until answers; do
        if ! kill -0 "$server_pid" 2>/dev/null; then
            echo "conformance-official: $start_binary exited before answering; its output:" >&2
            cat "$work/server.log" >&2
            server_pid=""
            exit 2
        fi
        if [ "$SECONDS" -ge "$deadline" ]; then
            echo "conformance-official: $start_binary did not answer on port 3000 within 120 s" >&2
            exit 2
        fi
        sleep 0.2
    done
    echo "conformance-official: started $start_binary --port 3000 (pid $server_pid)" >&2
elif ! answers; then
    echo "conformance-official: nothing answers $probe_url: start the server on port 3000 or use --start BINARY" >&2
    exit 2
fi

# --- the suites ----------------------------------------------------------------------------------
export NODE_PATH="/usr/share/nodejs:/usr/lib/nodejs${NODE_PATH:+:$NODE_PATH}"
summary=""
failed=0
declare -A failures=()
for run in $(seq 1 "$repeat"); do
  for suite in $suites; do
    echo
    echo "=== $suite: ${suite_dir[$suite]}/test-suite.js (unmodified)$([ "$repeat" -eq 1 ] || echo ", run $run/$repeat") ==="
    status=0
    # As the suites' `npm test` (mocha test-suite.js); --exit so that sockets a case leaves open do
    # not hold the process.
    (cd "$work/$suite" && mocha --exit --require "$work/mocha-symbols.cjs" --reporter spec test-suite.js) 2>&1 | tee "$work/$suite.log" || status=$?
    passing="$(sed -n 's/^ *\([0-9][0-9]*\) passing.*/\1/p' "$work/$suite.log" | tail -1)"
    failing="$(sed -n 's/^ *\([0-9][0-9]*\) failing.*/\1/p' "$work/$suite.log" | tail -1)"
    passing="${passing:-0}"
    failing="${failing:-0}"
    if [ "$status" -ne 0 ] && [ "$failing" -eq 0 ]; then
        failing="?"  # mocha stopped before its summary
    fi
    [ "$status" -eq 0 ] || failed=1
    summary+="$suite: $passing passing, $failing failing$([ "$repeat" -eq 1 ] || echo " (run $run)")"$'\n'
    # The spec reporter marks a failed case "N) title" where it runs (before the summary).
    while IFS= read -r title; do
        [ -n "$title" ] || continue
        key="$suite: $title"
        failures[$key]=$(( ${failures[$key]:-0} + 1 ))
    done < <(sed -n '/^ *[0-9][0-9]* passing/q; s/^ *[0-9][0-9]*) \(.*\)$/\1/p' "$work/$suite.log")
  done
done
echo
echo "=== official suites against localhost:3000 ==="
printf '%s' "$summary"
if [ "$repeat" -gt 1 ] && [ "${#failures[@]}" -gt 0 ]; then
    echo "cases that failed (in how many of $repeat runs):"
    for key in "${!failures[@]}"; do echo "  ${failures[$key]}x $key"; done | sort
fi
exit "$failed"
