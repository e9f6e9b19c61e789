#!/usr/bin/env bash
# Installs what Roomcast needs and is missing: hiredis headers, redis-server, redis-cli.
# Idempotent: installs nothing when everything is there. Uses sudo when not root.
set -euo pipefail

missing=()
[ -f /usr/include/hiredis/hiredis.h ] || missing+=(libhiredis-dev)
command -v redis-server >/dev/null 2>&1 || missing+=(redis-server)
command -v redis-cli >/dev/null 2>&1 || missing+=(redis-tools)
command -v pkg-config >/dev/null 2>&1 || missing+=(pkg-config)

if [ ${#missing[@]} -gt 0 ]; then
    echo "setup: installing ${missing[*]}"
    sudo=""
    if [ "$(id -u)" -ne 0 ]; then
        command -v sudo >/dev/null 2>&1 || { echo "setup: need root or sudo to install ${missing[*]}" >&2; exit 1; }
        sudo="sudo"
    fi
    export DEBIAN_FRONTEND=noninteractive
    $sudo apt-get update -qq
    $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

command -v swift >/dev/null 2>&1 || { echo "setup: the Swift toolchain (swift) is not on PATH" >&2; exit 1; }
