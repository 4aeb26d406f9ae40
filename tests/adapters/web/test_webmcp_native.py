"""WebMCP in Chromium's own implementation (``--enable-features=WebMCP``), driven through
Playwright's ``page.webmcp``: the todo page's tools, a person and an agent on one Model."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest
from playwright.async_api import Browser

from tests.support.browser import (
    NativeAgent,
    launch,
    need_chromium,
    resync_storm,
    scenario,
    self_removing_call,
    site,
)

pytestmark = [pytest.mark.browser, pytest.mark.interop]


@pytest.fixture(scope="module")
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(scope="module")
async def browser() -> AsyncIterator[Browser]:
    need_chromium()
    async with launch(native=True) as b:
        yield b


async def test_agent_and_person_share_the_todo_page_native(browser: Browser) -> None:
    async with site(polyfill=False) as (web, url):
        context = await browser.new_context()
        try:
            page = await context.new_page()
            await scenario(page, NativeAgent(page), web, url, "native")
        finally:
            await context.close()


async def test_many_resyncs_never_duplicate_or_throw_f12_native(browser: Browser) -> None:
    async with site(polyfill=False) as (web, url):
        context = await browser.new_context()
        try:
            page = await context.new_page()
            await resync_storm(page, NativeAgent(page), web, url)
        finally:
            await context.close()


async def test_a_call_that_removes_its_own_tool_still_answers_native(browser: Browser) -> None:
    async with site(polyfill=False) as (web, url):
        context = await browser.new_context()
        try:
            page = await context.new_page()
            await self_removing_call(page, NativeAgent(page), web, url)
        finally:
            await context.close()
