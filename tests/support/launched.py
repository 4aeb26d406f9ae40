"""A server script that binds a free loopback port itself and prints ``PORT <n>`` once bound
(tests/support/a2a_server.py, ag_ui_server.py), run as a subprocess for the interop tests."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Generator
from contextlib import contextmanager
from pathlib import Path

import pytest

from tests.support.paths import ROOT


@contextmanager
def launched(script: Path, what: str) -> Generator[tuple[str, subprocess.Popen[str]]]:
    """Run ``script``; yield its base URL (``http://127.0.0.1:<n>``) and the process once it
    printed its port (connections queue from then on), and end it (SIGTERM, then SIGKILL
    after 10 s) when the block ends. A script that prints anything else fails the test,
    naming ``what`` with the end of its standard error.

    Example:
        >>> with launched(ROOT / "tests/support/ag_ui_server.py", "the AG-UI server") as (url, _):
        ...     httpx.get(url + "/audit")
    """
    proc = subprocess.Popen(
        [sys.executable, str(script)],
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        if not line.startswith("PORT "):
            proc.kill()
            _out, err = proc.communicate(timeout=10)
            pytest.fail(f"{what} did not start: {line!r} {err[-2000:]}")
        yield f"http://127.0.0.1:{int(line.split()[1])}", proc
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
