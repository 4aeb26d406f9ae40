"""The todo page's activity panel shows which agent did what, on a real ``demo --serve``.

``foldkit-agent demo --serve`` runs in a subprocess (MCP, A2A and the page on one Model);
the official MCP client calls it as alice and as bob over real sockets while Chromium shows
the page: each call appears in the activity panel live, named by transport and principal as
the audit recorded it, with its decision. The screenshot is ``test-artifacts/page-demo.png``.
"""

from __future__ import annotations

import asyncio
import os
import re
import signal
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import httpx2
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from playwright.async_api import Page

from tests.support.browser import ARTIFACTS, TIMEOUT_MS, launch, need_chromium
from tests.support.paths import ROOT

pytestmark = [pytest.mark.browser, pytest.mark.interop]

CLI = str(Path(sys.executable).parent / "foldkit-agent")


@asynccontextmanager
async def _demo() -> AsyncIterator[str]:
    """``foldkit-agent demo --serve --port 0``; yields its origin once it has printed it."""
    proc = await asyncio.create_subprocess_exec(
        CLI,
        "demo",
        "--serve",
        "--port",
        "0",
        cwd=ROOT,
        env={**os.environ, "NO_COLOR": "1", "COLUMNS": "100"},
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.DEVNULL,
    )
    assert proc.stdout is not None
    try:
        async with asyncio.timeout(60):
            while True:
                line = (await proc.stdout.readline()).decode()
                assert line, "demo --serve ended before printing its address"
                found = re.search(r"MCP \(streamable HTTP\):\s+(http://\S+)/mcp", line)
                if found:
                    break
        yield found.group(1)
    finally:
        proc.send_signal(signal.SIGINT)
        async with asyncio.timeout(30):
            await proc.wait()


@asynccontextmanager
async def _mcp(origin: str, token: str) -> AsyncIterator[Any]:
    http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"}, timeout=30)
    async with Client(streamable_http_client(f"{origin}/mcp", http_client=http)) as client:
        yield client


async def _items(page: Page, count: int) -> list[str]:
    await page.wait_for_function(
        "n => document.querySelectorAll('[data-testid=activity-item]').length >= n",
        arg=count,
        timeout=TIMEOUT_MS,
    )
    return await page.get_by_test_id("activity-item").all_inner_texts()


async def test_the_activity_panel_names_each_mcp_agent_and_its_decision() -> None:
    need_chromium()
    async with (
        _demo() as origin,
        launch(native=True) as browser,
        _mcp(origin, "alice-token") as alice,
        _mcp(origin, "bob-token") as bob,
    ):
        context = await browser.new_context(viewport={"width": 1280, "height": 800})
        try:
            page = await context.new_page()
            await page.goto(origin + "/")
            await page.get_by_test_id("activity-empty").wait_for(timeout=TIMEOUT_MS)

            made = await alice.call_tool("create_todo", {"title": "Sent over MCP"})
            assert made.is_error is False
            await page.locator("li.todo", has_text="Sent over MCP").wait_for(timeout=TIMEOUT_MS)
            (first,) = await _items(page, 1)
            assert first.startswith("MCP agent")
            assert "Create todo by alice" in first
            assert "dispatched" in first

            assert (await alice.call_tool("select_todo", {"id": "todo-1"})).is_error is False
            refused = await bob.call_tool("delete_todo", {})
            assert refused.is_error is True
            # a refusal is folded, so the agents' real actions stay in view
            run = page.get_by_test_id("refused-run")
            await run.get_by_text("1 refused call").wait_for(timeout=TIMEOUT_MS)
            await run.get_by_text("1 refused call").click()
            said = await run.inner_text()
            assert "Delete selected todo · not allowed · bob" in said

            # the person's own click is told apart from the agents'
            await page.locator("li.todo", has_text="Sent over MCP").get_by_role("checkbox").check()
            newest, *_ = await _items(page, 3)
            assert newest.startswith("person")
            assert "Toggle todo by demo" in newest

            ARTIFACTS.mkdir(exist_ok=True)
            await page.screenshot(path=str(ARTIFACTS / "page-demo.png"), full_page=True)
        finally:
            await context.close()
