#!/usr/bin/env bash
# schemathesis against one live node: its own OpenAPI document (GET /api/openapi.json), an
# authenticated user, the default checks, bounds, and a new random seed each run, printed first
# (tests/schemathesis). Fails on any failure schemathesis reports or when the node does not answer
# /readyz afterwards. Expects a built debug binary (scripts/test.sh builds it) or ROOMCAST_BINARY.
#
#   scripts/schemathesis.sh                         a new seed
#   SCHEMATHESIS_SEED=1234 scripts/schemathesis.sh  replays the run that printed seed 1234
set -euo pipefail
cd "$(dirname "$0")/.."
[ -x .venv/bin/python ] || python3 -m venv .venv
.venv/bin/pip install -q --disable-pip-version-check -r tests/e2e/requirements.txt -r tests/schemathesis/requirements.txt
exec .venv/bin/python tests/schemathesis/run_schemathesis.py "$@"
