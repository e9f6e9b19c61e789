#!/usr/bin/env bash
# Fuzzes the inbound decode path (Engine.IO frames and polling bodies, Socket.IO packets, their
# JSON, the socket events' request types) with libFuzzer for a set time; no Redis, no network.
#
#   scripts/fuzz.sh [SECONDS] [LIBFUZZER_FLAG...]   # SECONDS: else $FUZZ_SECONDS, else 60
#
# Builds Fuzz/ (a package of its own, scratch Fuzz/.build) with `--sanitize=fuzzer`, release,
# or debug when the release build fails. The working corpus is var/fuzz/corpus (seeded from
# Fuzz/Corpus, which it never writes to), the full log var/fuzz/fuzz.log, and crash inputs go
# to var/fuzz/crashes/. Prints libFuzzer's final figures; exits non-zero on a crash, leak or
# timeout. Replay an input with: Fuzz/.build/<config>/CodecFuzzer var/fuzz/crashes/<file>
set -euo pipefail
cd "$(dirname "$0")/.."

seconds="${FUZZ_SECONDS:-60}"
if [ $# -gt 0 ] && [[ "$1" =~ ^[0-9]+$ ]]; then
    seconds="$1"
    shift
fi
[[ "$seconds" =~ ^[0-9]+$ ]] && [ "$seconds" -gt 0 ] || {
    echo "usage: scripts/fuzz.sh [SECONDS] [LIBFUZZER_FLAG...]  (SECONDS > 0, or FUZZ_SECONDS)" >&2
    exit 64
}

scripts/setup.sh

# The same dependency versions as the main package, on the first build.
[ -f Fuzz/Package.resolved ] || [ ! -f Package.resolved ] || cp Package.resolved Fuzz/Package.resolved

build() {
    swift build --package-path Fuzz -c "$1" --sanitize=fuzzer --product CodecFuzzer
}
config=release
if ! build release; then
    echo "fuzz: the release build failed; building debug instead" >&2
    config=debug
    build debug
fi
fuzzer="$(swift build --package-path Fuzz -c "$config" --sanitize=fuzzer --show-bin-path)/CodecFuzzer"

work="$PWD/var/fuzz"
mkdir -p "$work/corpus" "$work/crashes"
log="$work/fuzz.log"
echo "fuzz: $config build, ${seconds}s, log $log"

status=0
"$fuzzer" "$work/corpus" Fuzz/Corpus \
    -max_total_time="$seconds" \
    -max_len=4096 \
    -timeout=10 \
    -dict=Fuzz/codec.dict \
    -artifact_prefix="$work/crashes/" \
    -print_final_stats=1 \
    "$@" >"$log" 2>&1 || status=$?

# The last progress line (execs, cov, ft, corpus) and the final statistics.
grep -E '^#[0-9]+' "$log" | tail -n 1 || true
grep -E '^stat::' "$log" || true
echo "fuzz: $(find "$work/corpus" -type f | wc -l) files in $work/corpus"

if [ "$status" -ne 0 ]; then
    echo "fuzz: FAILED (libFuzzer exit $status); the report:" >&2
    # From the first sign of trouble (a Swift trap's message or libFuzzer's report) on.
    awk '/Fatal error|==[0-9]+==/ { found = 1 } found && !/^stat::/' "$log" | head -n 60 >&2
    echo "fuzz: replay with $fuzzer <input>; inputs in $work/crashes/" >&2
    exit 1
fi
echo "fuzz: no crash in ${seconds}s"
