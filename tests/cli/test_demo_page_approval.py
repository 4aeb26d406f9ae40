"""The todo page's person approves or declines a browser agent's ``delete_todo`` (issue 17).

A real ``foldkit-agent demo --serve`` subprocess serves the todo page; headless Chromium opens
it (signed in as the demo user, who may delete) and Chromium's own WebMCP
(``--enable-features=WebMCP``, Playwright's ``page.webmcp``) is the agent. The agent's call
waits while the page shows the request with its preview; the test clicks the page's Decline,
then its Approve, and reads the Model after each through the application's context.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest
from playwright.async_api import Browser, Page

from tests.support.browser import TIMEOUT_MS, NativeAgent, launch, need_chromium, wait_for_tools
from tests.support.cli_serving import demo_served

pytestmark = [pytest.mark.browser, pytest.mark.interop]


@pytest.fixture(scope="module")
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(scope="module")
async def browser() -> AsyncIterator[Browser]:
    need_chromium()
    async with launch(native=True) as b:
        yield b


async def titles(origin: str) -> list[str]:
    """The todo titles in the Model now, as the agent surface's context reports them."""
    async with httpx.AsyncClient(base_url=origin, timeout=30) as hc:
        await hc.get("/")  # the page's reads need a session: opening the page gives one
        context = (await hc.get("/agent/context")).json()["context"]
    return [t["title"] for t in context["todos"]]


async def answered_in_the_page(page: Page, agent: NativeAgent, button: str) -> dict[str, Any]:
    """The agent calls ``delete_todo``; the person reads the request and clicks ``button``."""
    call = asyncio.ensure_future(agent.call("delete_todo", {}))
    request = page.get_by_test_id("approvals").get_by_test_id("approval")
    await request.wait_for(state="visible", timeout=TIMEOUT_MS)
    shown = await request.inner_text()
    assert "Delete selected todo" in shown  # the capability's title
    assert 'Delete the todo "Milk"' in shown  # its sentence
    assert "removes todos.0" in shown
    assert '"title": "Milk"' in shown  # the preview names what goes
    assert not call.done()  # the agent waits for the person
    await request.get_by_role("button", name=button, exact=True).click()
    result = await asyncio.wait_for(call, TIMEOUT_MS / 1000)
    await request.wait_for(state="detached", timeout=TIMEOUT_MS)
    return result


async def test_the_person_declines_then_approves_the_agents_delete(browser: Browser) -> None:
    async with demo_served() as origin:
        context = await browser.new_context()
        try:
            page = await context.new_page()
            agent = NativeAgent(page)
            await page.goto(origin + "/")
            await wait_for_tools(page, ["create_todo"])
            for title in ("Milk", "Eggs"):
                assert (await agent.call("create_todo", {"title": title}))["isError"] is False
            milk = page.get_by_test_id("todos").locator("li", has_text="Milk")
            await milk.get_by_role("button", name="Select").click()
            await wait_for_tools(page, ["delete_todo"])

            declined = await answered_in_the_page(page, agent, "Decline")
            assert declined["isError"] is True
            assert declined["structuredContent"]["reason"] == "declined"
            assert await titles(origin) == ["Milk", "Eggs"]

            approved = await answered_in_the_page(page, agent, "Approve")
            assert approved["isError"] is False, approved
            await milk.wait_for(state="detached", timeout=TIMEOUT_MS)
            assert await titles(origin) == ["Eggs"]
        finally:
            await context.close()
