"""Run Python in a fresh process: for what only a process's first import shows (a global
that is read once, a provider set after a runtime was bound)."""

from __future__ import annotations

import os
import subprocess
import sys

from tests.support.paths import ROOT


def fresh_python_lines(code: str) -> list[str]:
    """The lines ``code`` prints, run by this interpreter in a new process at the repository
    root with no ``OTEL_*`` variables (so the environment configures no tracer provider).

    Raises:
        subprocess.CalledProcessError: the process exited non-zero.
    """
    env = {k: v for k, v in os.environ.items() if not k.startswith("OTEL_")}
    done = subprocess.run(
        [sys.executable, "-c", code],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    return done.stdout.splitlines()
