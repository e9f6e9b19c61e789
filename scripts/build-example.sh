#!/usr/bin/env bash
# Builds Examples/Chat, a package of its own that depends on this checkout by path, as another
# app would use the SocketIOServer product. Its dependencies resolve to the versions this
# package's Package.resolved pins (copied in when the example has none), so both builds use the
# same checkouts from SwiftPM's shared repository cache.
#
#   scripts/build-example.sh            # debug; the binary is Examples/Chat/.build/debug/chat
set -euo pipefail
cd "$(dirname "$0")/.."
if [ -f Package.resolved ] && [ ! -f Examples/Chat/Package.resolved ]; then
    cp Package.resolved Examples/Chat/Package.resolved
fi
swift build --package-path Examples/Chat --product chat "$@"
