#!/usr/bin/env bash
# Installs what the end-to-end tests need beyond scripts/setup.sh and is missing: Debian's
# chromium and chromium-driver (tests/e2e/test_console.py), nginx (the round-robin load
# balancer of tests/e2e/test_load_balancer.py), curl and jq (the documentation's snippets,
# tests/docs), promtool from Debian's prometheus (the alert rules' checks,
# scripts/monitoring-test.sh). Idempotent: installs nothing when all are there.
# Uses sudo when not root.
set -euo pipefail

missing=()
command -v chromium >/dev/null 2>&1 || missing+=(chromium)
command -v chromedriver >/dev/null 2>&1 || missing+=(chromium-driver)
command -v nginx >/dev/null 2>&1 || [ -x /usr/sbin/nginx ] || missing+=(nginx)
command -v curl >/dev/null 2>&1 || missing+=(curl)
command -v jq >/dev/null 2>&1 || missing+=(jq)
command -v promtool >/dev/null 2>&1 || missing+=(prometheus)

"$(dirname "$0")/apt-install.sh" setup-tests ${missing[@]+"${missing[@]}"}
