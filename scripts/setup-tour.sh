#!/usr/bin/env bash
# Installs what the README's tour needs to run its snippets against a node: curl and jq for the
# shell blocks, python-socketio for the Python one, in .venv (the tests' virtualenv, with the
# versions tests/e2e/requirements.txt pins). On Debian it installs missing commands with apt-get
# (through sudo when not root); elsewhere (macOS) it names them for your package manager.
# Idempotent: installs nothing when all is there.
set -euo pipefail
cd "$(dirname "$0")/.."

missing=()
command -v curl >/dev/null 2>&1 || missing+=(curl)
command -v jq >/dev/null 2>&1 || missing+=(jq)
python3 -c 'import ensurepip' >/dev/null 2>&1 || missing+=(python3-venv)
if [ ${#missing[@]} -gt 0 ]; then
    if command -v apt-get >/dev/null 2>&1; then
        scripts/apt-install.sh setup-tour "${missing[@]}"
    else
        echo "setup-tour: install ${missing[*]/python3-venv/python3} first (macOS: brew install ${missing[*]/python3-venv/python})" >&2
        exit 1
    fi
fi

[ -x .venv/bin/python ] || python3 -m venv .venv
grep -E '^(python-socketio|python-engineio|websocket-client|requests)(\[|==)' tests/e2e/requirements.txt \
    | .venv/bin/pip install -q --disable-pip-version-check -r /dev/stdin
echo "setup-tour: ready: the tour's Python runs with .venv/bin/python"
