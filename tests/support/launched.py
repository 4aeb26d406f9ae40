"""A server script that binds a free loopback port itself and prints ``PORT <n>`` once bound
(tests/support/a2a_server.py, ag_ui_server.py, tests/interop/copilotkit_runtime.mjs), run as a
subprocess for the interop tests."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Generator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path

import pytest

from tests.support.paths import ROOT


@contextmanager
def launched(
    script: Path | Sequence[str],
    what: str,
    *,
    cwd: Path = ROOT,
    env: Mapping[str, str] | None = None,
) -> Generator[tuple[str, subprocess.Popen[str]]]:
    """Run ``script`` (a Python file, or a whole command such as ``["node", "x.mjs", ...]``,
    in ``cwd`` with ``env`` added to the environment); yield its base URL
    (``http://127.0.0.1:<n>``) and the process once it printed its port (connections queue
    from then on), and end it (SIGTERM, then SIGKILL after 10 s) when the block ends. A
    script that prints anything else fails the test, naming ``what`` with the end of its
    standard error.

    Example:
        >>> with launched(ROOT / "tests/support/ag_ui_server.py", "the AG-UI server") as (url, _):
        ...     httpx.get(url + "/audit")
    """
    argv = [sys.executable, str(script)] if isinstance(script, Path) else list(script)
    proc = subprocess.Popen(
        argv,
        cwd=cwd,
        env={**os.environ, "PYTHONPATH": str(ROOT), **(env or {})},
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
