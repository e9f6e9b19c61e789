#!/usr/bin/env bash
# schemathesis against one live node: its own OpenAPI document (GET /api/openapi.json), an
# authenticated user, the default checks, a fixed seed and bounds (tests/schemathesis). Fails on
# any failure schemathesis reports or when the node does not answer /readyz afterwards.
# Expects a built debug binary (scripts/test.sh builds it) or ROOMCAST_BINARY.
set -euo pipefail
cd "$(dirname "$0")/.."
[ -x .venv/bin/python ] || python3 -m venv .venv
.venv/bin/pip install -q --disable-pip-version-check -r tests/e2e/requirements.txt -r tests/schemathesis/requirements.txt
exec .venv/bin/python tests/schemathesis/run_schemathesis.py "$@"
