"""Every snippet of the documentation that is marked to run does run, against a real node.

Each document gets a fresh private Redis and a node on it (as the end-to-end suite starts them),
so its usernames and rooms are its own; its blocks run in order (`snippets.py`).
"""

import os
import sys

import pytest

import snippets

sys.path.insert(0, os.path.join(snippets.REPOSITORY, "tests", "e2e"))
from roomcast_e2e import GatewayNode, private_redis, tail  # noqa: E402

RUNNABLE = [path for path in snippets.documents() if snippets.snippets(path)]


def test_every_marker_is_on_a_runnable_block():
    """A marker before anything but a ```sh or ```python block fails here rather than being
    skipped; and the client references keep their snippets."""
    for path in snippets.documents():
        snippets.snippets(path)
    for path in ("docs/clients/protocol.md", "docs/clients/events.md", "docs/clients/recovery.md",
                 "docs/clients/rest.md", "docs/clients/push.md", "docs/operations/observability.md"):
        assert path in RUNNABLE, f"{path} has no snippet marked {snippets.MARKER}"


@pytest.mark.parametrize("path", RUNNABLE)
def test_snippets_run(path):
    binary = snippets.roomcast_binary()
    redis = private_redis()
    try:
        node = GatewayNode("docs", binary, redis.url, log_directory=redis.directory)
        try:
            environment = dict(os.environ)
            environment["PATH"] = os.pathsep.join([os.path.dirname(binary), os.path.dirname(sys.executable),
                                                   environment.get("PATH", "/usr/bin:/bin")])
            # `roomcast inspect` in a snippet reads the node's Redis, as it would the reader's.
            environment["ROOMCAST_REDIS_URL"] = redis.url
            try:
                snippets.run_document(path, f"127.0.0.1:{node.port}", environment)
            except snippets.SnippetError as failure:
                pytest.fail(f"{failure}\n--- node log\n{tail(node.log_path)}", pytrace=False)
        finally:
            node.stop()
    finally:
        redis.destroy()
