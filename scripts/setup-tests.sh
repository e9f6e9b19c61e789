#!/usr/bin/env bash
# Installs what the end-to-end tests need beyond scripts/setup.sh and is missing: Debian's
# chromium and chromium-driver (tests/e2e/test_console.py) and nginx (the round-robin load
# balancer of tests/e2e/test_load_balancer.py). Idempotent: installs nothing when all are there.
# Uses sudo when not root.
set -euo pipefail

missing=()
command -v chromium >/dev/null 2>&1 || missing+=(chromium)
command -v chromedriver >/dev/null 2>&1 || missing+=(chromium-driver)
command -v nginx >/dev/null 2>&1 || [ -x /usr/sbin/nginx ] || missing+=(nginx)

if [ ${#missing[@]} -gt 0 ]; then
    echo "setup-tests: installing ${missing[*]}"
    sudo=""
    if [ "$(id -u)" -ne 0 ]; then
        command -v sudo >/dev/null 2>&1 || { echo "setup-tests: need root or sudo to install ${missing[*]}" >&2; exit 1; }
        sudo="sudo"
    fi
    export DEBIAN_FRONTEND=noninteractive
    $sudo apt-get update -qq
    $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi
