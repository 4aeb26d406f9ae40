"""SIGTERM to a real ``foldkit-agent serve`` while MCP calls are in flight."""

from __future__ import annotations

import asyncio
import os
import re
import signal
import sys

import anyio
import httpx2
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from tests.support.paths import ROOT


async def test_sigterm_answers_mcp_calls_in_flight_outcome_unknown() -> None:
    """``--drain-timeout 0``: the calls are aborted at once, each answered "the server shut
    down, outcome unknown". Before: uvicorn ended every SSE stream at once and each caller got
    no answer at all ("SSE stream ended without a response"; the server logged "ASGI callable
    returned without completing response")."""
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        *("-m", "foldkit_agent.cli", "serve", "tests.support.mcp_cart:long_wait_runtime"),
        *("--mcp", "http", "--port", "0", "--drain-timeout", "0"),
        cwd=ROOT,
        stderr=asyncio.subprocess.PIPE,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )
    assert proc.stderr is not None
    try:
        with anyio.fail_after(30):
            line = (await proc.stderr.readline()).decode()
        found = re.search(r"http://[^/\s]+", line)
        assert found is not None, line
        url = f"{found.group(0)}/mcp"
        answers: list[tuple[bool, str, str]] = []
        started = 0
        all_started = anyio.Event()

        async def call() -> None:
            nonlocal started
            http = httpx2.AsyncClient(timeout=20)
            async with Client(streamable_http_client(url, http_client=http)) as mcp:
                await mcp.list_tools()  # the session is up: the call below is the next request
                started += 1
                if started == 3:
                    all_started.set()
                result = await mcp.call_tool("wait_long", {})
                answers.append(
                    (result.is_error, result.structured_content["status"], result.content[0].text)  # type: ignore[index, union-attr]
                )

        with anyio.fail_after(30):
            async with anyio.create_task_group() as tg:
                for _ in range(3):
                    tg.start_soon(call)
                await all_started.wait()
                await anyio.sleep(
                    0.5
                )  # the three tools/call requests are sent (nothing signals it)
                proc.send_signal(signal.SIGTERM)
        assert len(answers) == 3
        for is_error, status, text in answers:
            assert is_error is True
            assert status == "unknown"
            assert "rolled back" in text
        with anyio.fail_after(15):
            assert await proc.wait() == 0  # was -15: the signal, before any cleanup
    finally:
        if proc.returncode is None:
            proc.kill()
            await proc.wait()
