"""The documentation's runnable snippets: fenced blocks marked with `<!-- run -->` on the line
before them, in `README.md` and `docs/**/*.md` (CONTRIBUTING.md, "Snippets that run", says how to
write one).

A document's blocks run in order against one node. ```sh blocks run with
`bash -euo pipefail` and every variable they set is kept for the document's next blocks;
```python blocks run with this virtualenv's Python and see those variables in `os.environ`.
`localhost:8080`, the address a reader's node has (`scripts/run.sh`), is rewritten to the node
under test.
"""

import os
import re
import subprocess
import sys
import tempfile
from dataclasses import dataclass

REPOSITORY = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

MARKER = "<!-- run -->"
LANGUAGES = {"sh", "python"}
READER_ADDRESS = "localhost:8080"
# One block's bound: generous for a loaded CI machine; a block that hangs fails instead of stalling.
BLOCK_TIMEOUT = 120


@dataclass
class Snippet:
    path: str  # relative to the repository
    line: int  # of the opening fence, 1-based
    language: str
    code: str

    @property
    def where(self):
        return f"{self.path}:{self.line}"


class SnippetError(Exception):
    pass


def roomcast_binary():
    """`ROOMCAST_BINARY`, or the `roomcast` that `swift build` made (as the end-to-end suite finds it)."""
    binary = os.environ.get("ROOMCAST_BINARY")
    if not binary:
        result = subprocess.run(["swift", "build", "--show-bin-path"], cwd=REPOSITORY, capture_output=True, text=True,
                                timeout=120, check=True)
        binary = os.path.join(result.stdout.strip().splitlines()[-1], "roomcast")
    if not os.access(binary, os.X_OK):
        raise SnippetError(f"no roomcast binary at {binary}: run `swift build` first or set ROOMCAST_BINARY")
    return binary


def documents():
    """`README.md` and every Markdown file under `docs/`, relative to the repository, sorted."""
    found = []
    if os.path.exists(os.path.join(REPOSITORY, "README.md")):
        found.append("README.md")
    for root, _, files in os.walk(os.path.join(REPOSITORY, "docs")):
        for name in files:
            if name.endswith(".md"):
                found.append(os.path.relpath(os.path.join(root, name), REPOSITORY))
    return sorted(found)


def snippets(path):
    """The marked blocks of one document, in order. A marker not followed by a ```sh or
    ```python fence is an error: a snippet meant to run must not be skipped quietly."""
    with open(os.path.join(REPOSITORY, path), encoding="utf-8") as handle:
        lines = handle.read().split("\n")
    found = []
    index = 0
    while index < len(lines):
        if lines[index].strip() != MARKER:
            index += 1
            continue
        marker_line = index + 1
        index += 1
        while index < len(lines) and not lines[index].strip():
            index += 1
        fence = re.match(r"^```(\w*)\s*$", lines[index]) if index < len(lines) else None
        if not fence or fence.group(1) not in LANGUAGES:
            raise SnippetError(f"{path}:{marker_line}: {MARKER} must be followed by a ```sh or ```python block")
        start = index
        index += 1
        body = []
        while index < len(lines) and lines[index].strip() != "```":
            body.append(lines[index])
            index += 1
        if index == len(lines):
            raise SnippetError(f"{path}:{start + 1}: the block is not closed")
        found.append(Snippet(path, start + 1, fence.group(1), "\n".join(body) + "\n"))
        index += 1
    return found


def run_document(path, node_address, environment):
    """Runs the document's snippets in order; raises SnippetError naming the first that fails.
    `environment` is the starting environment (PATH, ROOMCAST_REDIS_URL …)."""
    state = dict(environment)
    with tempfile.TemporaryDirectory(prefix="roomcast-docs.") as scratch:
        for number, snippet in enumerate(snippets(path)):
            code = snippet.code.replace(READER_ADDRESS, node_address)
            source = os.path.join(scratch, f"snippet-{number}.{'py' if snippet.language == 'python' else 'sh'}")
            with open(source, "w", encoding="utf-8") as handle:
                handle.write(code)
            if snippet.language == "sh":
                saved = os.path.join(scratch, f"state-{number}")
                # `set -a`: every variable the block sets is exported, so `env` at exit has it.
                command = ["bash", "-c", 'set -a -euo pipefail; trap \'env -0 > "$DOCS_STATE"\' EXIT; . "$DOCS_SNIPPET"']
                run_environment = dict(state, DOCS_STATE=saved, DOCS_SNIPPET=source)
            else:
                command = [sys.executable, source]
                run_environment = state
            try:
                result = subprocess.run(command, cwd=REPOSITORY, env=run_environment, capture_output=True, text=True,
                                        timeout=BLOCK_TIMEOUT)
            except subprocess.TimeoutExpired as timeout:
                raise SnippetError(f"{snippet.where}: still running after {BLOCK_TIMEOUT} s\n{_output(timeout.stdout, timeout.stderr)}")
            if result.returncode != 0:
                raise SnippetError(f"{snippet.where}: exited with {result.returncode}\n--- snippet\n{code}{_output(result.stdout, result.stderr)}")
            if snippet.language == "sh" and os.path.exists(saved):
                with open(saved, "rb") as handle:
                    entries = handle.read().split(b"\0")
                for entry in entries:
                    name, separator, value = entry.decode("utf-8", "replace").partition("=")
                    if separator and name not in ("DOCS_STATE", "DOCS_SNIPPET", "_", "SHLVL", "PWD", "OLDPWD"):
                        state[name] = value


def _output(stdout, stderr):
    def text(value):
        return value.decode("utf-8", "replace") if isinstance(value, bytes) else (value or "")
    return f"--- stdout\n{text(stdout)}--- stderr\n{text(stderr)}"
