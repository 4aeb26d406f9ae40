"""Run ``foldkit-agent demo --serve`` as a real subprocess on a free loopback port.

``demo_served()`` yields the origin of the todo page (signed in as the demo user, with MCP
and A2A on the same Model) once the demo says where it listens, and stops the process with
SIGTERM on exit. ``tests.support.serving.serve_process`` does the same for ``serve``.
"""

from __future__ import annotations

import asyncio
import os
import re
import sys
from collections.abc import AsyncGenerator
from contextlib import asynccontextmanager

import anyio

from tests.support.paths import ROOT


@asynccontextmanager
async def demo_served() -> AsyncGenerator[str]:
    """Run ``foldkit-agent demo --serve --port 0``; yield the origin of the todo page."""
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "foldkit_agent.cli",
        "demo",
        "--serve",
        "--port",
        "0",
        cwd=ROOT,
        stdout=asyncio.subprocess.PIPE,
        env={**os.environ, "PYTHONUNBUFFERED": "1", "NO_COLOR": "1", "COLUMNS": "200"},
    )
    assert proc.stdout is not None
    try:
        with anyio.fail_after(30):
            while "MCP (streamable HTTP)" not in (line := (await proc.stdout.readline()).decode()):
                assert line, "the demo ended before it said where it listens"
        found = re.search(r"http://[^/\s]+", line)
        assert found is not None, line
        yield found.group(0)
    finally:
        proc.terminate()
        with anyio.fail_after(15):
            code = await proc.wait()
    # Reached only when the test passed, so its own failure is never hidden by this one.
    assert code == 0, f"demo --serve exited {code} on SIGTERM"  # drained, then stopped
