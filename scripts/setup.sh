#!/usr/bin/env bash
# Installs what Roomcast needs and is missing: hiredis and zlib headers, redis-server, redis-cli,
# openssl.
# Idempotent: installs nothing when everything is there. Uses sudo when not root.
set -euo pipefail

missing=()
[ -f /usr/include/hiredis/hiredis.h ] || missing+=(libhiredis-dev)
[ -f /usr/include/zlib.h ] || missing+=(zlib1g-dev)
command -v redis-server >/dev/null 2>&1 || missing+=(redis-server)
command -v redis-cli >/dev/null 2>&1 || missing+=(redis-tools)
command -v pkg-config >/dev/null 2>&1 || missing+=(pkg-config)
# The TLS tests make their certificates with it.
command -v openssl >/dev/null 2>&1 || missing+=(openssl)

"$(dirname "$0")/apt-install.sh" setup ${missing[@]+"${missing[@]}"}

command -v swift >/dev/null 2>&1 || { echo "setup: the Swift toolchain (swift) is not on PATH" >&2; exit 1; }
