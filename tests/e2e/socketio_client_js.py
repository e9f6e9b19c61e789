"""socket.io-client's browser bundle (`socket.io.min.js`, the reference JavaScript client) for tests
that run it in Chromium, without a Node.js toolchain or an npm registry.

The bundle is the one the NiceGUI wheel ships (PyPI, `nicegui/static/socket.io.min.js`,
Socket.IO v4.8.1): `pip download` of that pinned wheel, without its dependencies, and the one
file taken out of it and checked against its SHA-256. It is kept under `.build-e2e/` (ignored by
git) for the next run. `SOCKET_IO_CLIENT_JS` names a copy of your own instead.
"""

import hashlib
import os
import subprocess
import sys
import tempfile
import zipfile

REPOSITORY = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
WHEEL = "nicegui==3.18.0"
MEMBER = "nicegui/static/socket.io.min.js"
SHA256 = "b0e735814f8dcfecd6cdb8a7ce95a297a7e1e5f2727a29e6f5901801d52fa0c5"
VERSION = "4.8.1"
CACHE = os.path.join(REPOSITORY, ".build-e2e", f"socket.io-{VERSION}.min.js")


def bundle():
    """The bundle's text, fetched once."""
    path = os.environ.get("SOCKET_IO_CLIENT_JS") or CACHE
    if not os.path.exists(path):
        if path != CACHE:
            raise FileNotFoundError(f"SOCKET_IO_CLIENT_JS names {path}, which does not exist")
        _fetch()
    with open(path, encoding="utf-8") as handle:
        return handle.read()


def _fetch():
    with tempfile.TemporaryDirectory(prefix="roomcast-socketio-js.") as directory:
        subprocess.run([sys.executable, "-m", "pip", "download", "--quiet", "--disable-pip-version-check", "--no-deps",
                        "--only-binary", ":all:", "--dest", directory, WHEEL], check=True, timeout=600)
        wheels = [name for name in os.listdir(directory) if name.endswith(".whl")]
        assert len(wheels) == 1, wheels
        with zipfile.ZipFile(os.path.join(directory, wheels[0])) as wheel:
            data = wheel.read(MEMBER)
    digest = hashlib.sha256(data).hexdigest()
    assert digest == SHA256, f"{MEMBER} of {WHEEL} has SHA-256 {digest}, not the pinned {SHA256}"
    assert f"Socket.IO v{VERSION}".encode() in data[:200]
    os.makedirs(os.path.dirname(CACHE), exist_ok=True)
    partial = CACHE + ".partial"
    with open(partial, "wb") as handle:
        handle.write(data)
    os.replace(partial, CACHE)
