"""Writes a Markdown report of a conformance run: each failing case of our port (from pytest's
--junitxml) with the bytes seen vs expected, and the failures of the official suites (from the
output of scripts/conformance-official.sh).

    .venv/bin/python tests/conformance/make_report.py --junit port.xml \
        [--official-log official.log] [--server "what ran"] > report.md
"""

import argparse
import ast
import pathlib
import re
import sys
import xml.etree.ElementTree as ElementTree

HERE = pathlib.Path(__file__).resolve().parent


def case_titles():
    """test name -> the suite's `describe › it` title (the test's docstring)."""
    titles = {}
    for module in sorted(HERE.glob("test_*.py")):
        for node in ast.parse(module.read_text()).body:
            if isinstance(node, ast.FunctionDef) and node.name.startswith("test_"):
                titles[(module.stem, node.name)] = (ast.get_docstring(node) or "").strip()
    return titles


def evidence(text, limit=14):
    """The lines of a pytest failure that say what was seen and what was expected."""
    lines = [line[1:].rstrip() for line in text.splitlines() if line.startswith("E ")]
    lines = [line for line in lines if line.strip()]
    # Drop the tail of websocket-client's long handshake messages (headers dumps).
    lines = [re.sub(r" -\+-\+- \{.*?\} -\+-\+- ", " ", line) for line in lines]
    if len(lines) > limit:
        lines = lines[:limit] + [f"  ... ({len(lines) - limit} more lines)"]
    return "\n".join(lines) or text.strip()[-1500:]


def port_section(junit_path, out):
    titles = case_titles()
    tree = ElementTree.parse(junit_path)
    total = failed = 0
    failures = []
    for case in tree.iter("testcase"):
        total += 1
        problem = case.find("failure")
        if problem is None:
            problem = case.find("error")
        if problem is None:
            continue
        failed += 1
        module = case.get("classname", "").split(".")[-1]
        name = case.get("name")
        failures.append((module, name, titles.get((module, name), ""), problem))
    out.write(f"## Our port (tests/conformance): {total - failed}/{total} pass\n\n")
    for module, name, title, problem in failures:
        first = evidence((problem.get("message") or "") + "\n" + (problem.text or ""))
        first = first.strip().splitlines()[0] if first.strip() else "?"
        out.write(f"- {title or name}: `{first.strip()[:160]}`\n")
    if failures:
        out.write("\n")
    for module, name, title, problem in failures:
        suite = "Engine.IO v4 suite" if module == "test_engineio_v4" else "Socket.IO v5 suite"
        out.write(f"### {suite}: {title or name}\n\n`{module}.py::{name}`\n\n")
        out.write("```\n" + evidence((problem.get("message") or "") + "\n" + (problem.text or ""))
                  + "\n```\n\n")


def official_section(log_path, out):
    text = pathlib.Path(log_path).read_text(errors="replace")
    out.write("## The unmodified official suites (scripts/conformance-official.sh)\n\n")
    summary = re.findall(r"^(?:engine\.io|socket\.io): .*$", text, re.M)
    out.write("\n".join(f"- {line}" for line in summary) + "\n\n")
    for block in re.split(r"^=== ", text, flags=re.M)[1:]:
        header, _, body = block.partition("\n")
        match = re.search(r"^\s+\d+ failing.*$", body, re.M)
        if not match:
            continue
        failures = body[match.end():]
        failures = "\n".join(line for line in failures.splitlines()
                             if not re.match(r"\s+at ", line)).strip()
        failures = re.sub(r"\n{3,}", "\n\n", failures)
        out.write(f"### {header.strip(' =')}\n\n```\n{failures}\n```\n\n")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--junit", required=True)
    parser.add_argument("--official-log")
    parser.add_argument("--server", default="")
    args = parser.parse_args()
    out = sys.stdout
    out.write("# Engine.IO / Socket.IO conformance report\n\n")
    if args.server:
        out.write(args.server.strip() + "\n\n")
    port_section(args.junit, out)
    if args.official_log:
        official_section(args.official_log, out)


if __name__ == "__main__":
    main()
