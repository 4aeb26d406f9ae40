"""Titles and the read-only hint in the tools the page registers (DESIGN §10), read back in
headless Chromium: from Chromium's own WebMCP (``document.modelContext.getTools()`` and
Playwright's ``page.webmcp``) and from the polyfill."""

from __future__ import annotations

from typing import Any

import pytest
from playwright.async_api import Page

from tests.support.browser import TIMEOUT_MS, launch, need_chromium, site, wait_for_tools

pytestmark = [pytest.mark.browser, pytest.mark.interop]


async def registered_tools(page: Page, url: str) -> list[dict[str, Any]]:
    """Open the todo page and read back what it registered: name, title, readOnlyHint."""
    await page.goto(url + "/")
    await page.wait_for_function("window.foldkitAgent !== undefined", timeout=TIMEOUT_MS)
    await wait_for_tools(page, ["create_todo"], ["delete_todo"])
    return await page.evaluate(
        """() => document.modelContext.getTools().then(ts => ts.map(t => ({
            name: t.name, title: t.title ?? null,
            readOnlyHint: t.annotations ? t.annotations.readOnlyHint : undefined})))"""
    )


REGISTERED = [{"name": "create_todo", "title": "Create todo", "readOnlyHint": False}]


async def test_chromium_sees_the_title_and_read_only_hint_the_page_registered() -> None:
    need_chromium()
    async with launch(native=True) as browser, site(polyfill=False) as (_web, url):
        context = await browser.new_context()
        try:
            page = await context.new_page()
            assert await registered_tools(page, url) == REGISTERED
            (seen,) = await page.webmcp.tools()  # pyright: ignore[reportUnknownVariableType]
            assert seen["name"] == "create_todo"
            # Playwright reports annotations only when one is set; readOnly is not
            assert not seen.get("annotations", {}).get("readOnly", False)  # pyright: ignore[reportUnknownMemberType]
        finally:
            await context.close()


async def test_the_polyfill_gets_the_same_title_and_hint() -> None:
    need_chromium()
    async with launch(native=False) as browser, site(polyfill=True) as (_web, url):
        context = await browser.new_context()
        try:
            page = await context.new_page()
            assert await registered_tools(page, url) == REGISTERED
        finally:
            await context.close()
