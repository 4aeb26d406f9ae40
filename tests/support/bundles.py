"""The one way a test rebuilds a committed esbuild bundle: its own ``make`` target, with the
output sent to a file of the test's, so the committed file can be compared byte for byte."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from tests.support.paths import ROOT

ESBUILD = ROOT / "tests" / "interop" / "node_modules" / ".bin" / "esbuild"
"""The pinned esbuild (``make node`` installs it); tests skip without it."""


def rebuilt(target: str, out_variable: str, out: Path) -> bytes:
    """Run ``make -s TARGET OUT_VARIABLE=out`` in the checkout and return what it wrote to
    ``out``; fails the test with make's standard error when the build fails.

    Example:
        >>> made = rebuilt("view", "VIEW_OUT", tmp_path / "view.js")
        >>> made == BUNDLE.read_bytes()  # the committed file, unchanged by the build
        True
    """
    done = subprocess.run(
        ["make", "-s", target, f"{out_variable}={out}"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        env={**os.environ, "MAKEFLAGS": ""},
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return out.read_bytes()
