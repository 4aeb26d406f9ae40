"""The MCP specification's own server suite (``@modelcontextprotocol/conformance``, pinned with
the Node 22 it needs in tests/conformance/package.json) against ``foldkit-agent serve
examples.conformance:runtime --mcp http``: every scenario of ``--suite all`` runs, each one
passes unless tests/conformance/expected-failures.yml lists it with its reason, and a listed
one that starts to pass fails too (the suite's own baseline check). ``make conformance`` runs
this file; ``make test`` runs it with the rest.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.paths import ROOT

HARNESS = ROOT / "tests" / "conformance"
BIN = HARNESS / "node_modules" / ".bin"
SUITE = BIN / "conformance"
EXPECTED = HARNESS / "expected-failures.yml"
CLI = str(Path(sys.executable).parent / "foldkit-agent")
PROGRESS_INTERVAL = "0.05"
"""Seconds between signs of life, so the suite's slow tool reports progress several times."""

pytestmark = [
    pytest.mark.interop,
    pytest.mark.skipif(not SUITE.exists(), reason="run `make conformance` to install the suite"),
]


@pytest.fixture(scope="module")
def url() -> Iterator[str]:
    """``serve examples.conformance:runtime --mcp http`` on a free port, once it listens."""
    proc = subprocess.Popen(
        [
            CLI,
            "serve",
            "examples.conformance:runtime",
            "--mcp",
            "http",
            "--port",
            "0",
            "--progress-interval",
            PROGRESS_INTERVAL,
        ],
        cwd=ROOT,
        stderr=subprocess.PIPE,
        stdout=subprocess.DEVNULL,
        text=True,
    )
    try:
        assert proc.stderr is not None
        line = proc.stderr.readline()  # blocks until the socket listens (or the process dies)
        assert line.startswith("serving MCP at "), line
        yield line.removeprefix("serving MCP at ").strip()
    finally:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()


SUMMARY_LINE = re.compile(r"^([✓✗]) (\S+): \d+ passed, \d+ failed$", re.MULTILINE)
"""One scenario's line in the suite's summary: its mark and its name."""


def suite(*args: str) -> subprocess.CompletedProcess[str]:
    """The suite's CLI on the pinned Node 22 (first on PATH), with its output captured."""
    env = {**os.environ, "PATH": f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}"}
    return subprocess.run(
        [str(SUITE), *args], cwd=HARNESS, env=env, capture_output=True, text=True, timeout=600
    )


def server_scenarios() -> list[str]:
    listed = suite("list", "--server").stdout
    return re.findall(r"^\s+- (\S+)", listed.split("Client scenarios")[0], re.MULTILINE)


def test_every_scenario_passes_except_those_the_library_does_not_offer(
    url: str, tmp_path: Path
) -> None:
    run = suite(
        "server",
        "--url",
        url,
        "--suite",
        "all",
        "--expected-failures",
        str(EXPECTED),
        "--output-dir",
        str(tmp_path),
    )
    report = run.stdout + run.stderr
    marks = {name: mark for mark, name in SUMMARY_LINE.findall(report)}
    expected = set(re.findall(r"^  - (\S+)$", EXPECTED.read_text(), re.MULTILINE))
    assert run.returncode == 0, report[-4000:]
    assert set(marks) == set(server_scenarios())  # nothing skipped: the whole suite ran
    failed = {name for name, mark in marks.items() if mark == "✗"}
    assert failed == expected
    ran = set(marks)
    assert {"tools-call-with-progress", "tools-call-elicitation", "tools-call-error"} <= (
        ran - failed
    )
