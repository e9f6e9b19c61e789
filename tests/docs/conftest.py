"""The documentation snippets' suite: `scripts/test.sh` runs `.venv/bin/python -m pytest -q tests/docs`
after building. Its helpers come from the end-to-end suite (`tests/e2e/roomcast_e2e.py`)."""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
