"""The person's page of a real ``foldkit-agent serve --webmcp --token ...``, in headless Chromium
with its own WebMCP: a browser agent in the page, the person deciding.

Nothing of the page is readable before sign-in (the page redirects, every read of the surface
is 401). Signed in, the person sees what the agent may do (titles and descriptions, markup and
bidi characters as visible text), the request with its sentence and its preview as a diff,
declines with a message the agent's call receives, approves a request whose capability went
away meanwhile (nothing is sent and the audit says stale), and approves an edited input: asked
again with its preview, it is applied once. No response of the page is a
404 (or any error); at 1280 and 390 px nothing overflows and no text touches the edges;
screenshots go to ``test-artifacts/person-page-*.png``.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest
from playwright.async_api import Browser, Page

from tests.adapters.web.test_console import LAYOUT
from tests.support.browser import (
    ARTIFACTS,
    TIMEOUT_MS,
    NativeAgent,
    launch,
    need_chromium,
    wait_for_tools,
)
from tests.support.notes_board import ADD_TITLE
from tests.support.serving import serve_process

pytestmark = [pytest.mark.browser, pytest.mark.interop]

ALICE = "alice-token-0123456789"
REFUSED = 3


@pytest.fixture(scope="module")
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(scope="module")
async def browser() -> AsyncIterator[Browser]:
    need_chromium()
    async with launch(native=True) as b:
        yield b


def _serve(audit: Any) -> Any:
    return serve_process(
        "tests.support.notes_board:runtime",
        *("--webmcp", "--token", f"{ALICE}=alice"),
        *("--audit", f"jsonl:{audit}", "--audit-durable"),
    )


async def _layout_holds(page: Page, width: int) -> None:
    await page.set_viewport_size({"width": width, "height": 900})
    got: dict[str, Any] = await page.evaluate(LAYOUT)
    assert got["scrollWidth"] <= got["clientWidth"], got
    assert got["escaping"] == [], got
    assert got["edge"] == [], got
    ARTIFACTS.mkdir(exist_ok=True)
    await page.screenshot(path=str(ARTIFACTS / f"person-page-{width}.png"), full_page=True)


async def _signed_in(page: Page, origin: str) -> None:
    await page.goto(origin + "/")
    await page.get_by_label("Token").fill(ALICE)
    await page.get_by_role("button", name="Sign in").click()
    await page.get_by_test_id("who").get_by_text("alice").wait_for(timeout=TIMEOUT_MS)
    await page.wait_for_function("window.foldkitAgent !== undefined", timeout=TIMEOUT_MS)


async def test_nothing_of_the_page_is_read_before_sign_in(tmp_path: Any) -> None:
    async with _serve(tmp_path / "audit.jsonl") as origin, httpx.AsyncClient() as http:
        home = await http.get(origin + "/")
        assert (home.status_code, home.headers["location"]) == (303, "/console/sign-in?next=/")
        for path in ("capabilities", "context", "approvals", "events", "session", "page/parts"):
            got = await http.get(f"{origin}/agent/{path}")
            assert got.status_code == 401, (path, got.text)
            assert "Sign in to the page first" in got.text
        call = await http.post(f"{origin}/agent/invoke/select_note", json={"id": "n1"})
        assert call.status_code in (401, 403), call.text


async def test_a_person_decides_in_the_page_what_its_browser_agent_asks(
    browser: Browser, tmp_path: Any
) -> None:
    audit = tmp_path / "audit.jsonl"
    async with _serve(audit) as origin:
        context = await browser.new_context()
        failed: list[str] = []
        errors: list[str] = []
        try:
            page = await context.new_page()
            page.on(
                "response",
                lambda r: failed.append(f"{r.status} {r.url}") if r.status >= 400 else None,
            )
            page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
            page.on("pageerror", lambda e: errors.append(str(e)))
            await _signed_in(page, origin)
            agent = NativeAgent(page)
            await wait_for_tools(page, ["select_note", "add_note"], ["delete_selected"])

            # what an agent may do here, by title and description; markup stays text
            tools = page.get_by_test_id("tools-list")
            await tools.get_by_text("Select note").wait_for(timeout=TIMEOUT_MS)
            assert ADD_TITLE in await tools.inner_text()
            # the hostile title is visible text in the context: no override, no new line
            shown = await page.get_by_test_id("context-text").inner_text()
            assert "report⟨U+202E⟩txt.exe⟨U+2028⟩Nothing is sent" in shown
            body = await page.inner_text("body")
            assert "\u202e" not in body
            assert "\u2028" not in body

            for _ in range(REFUSED):
                refused = await agent.call("select_note", {"id": 5})
                assert refused["isError"] is True
            activity = page.get_by_test_id("activity")
            await activity.get_by_text(f"{REFUSED} refused calls").wait_for(timeout=TIMEOUT_MS)

            # 1. decline with a message: the agent's own call receives it
            assert (await agent.call("select_note", {"id": "n1"}))["isError"] is False
            await wait_for_tools(page, ["delete_selected", "clear_selection"])
            pending = asyncio.ensure_future(agent.call("delete_selected", {}))
            card = page.get_by_test_id("approval")
            await card.get_by_text('Delete the note "Groceries"').wait_for(timeout=TIMEOUT_MS)
            removed = card.locator(".diff .removed")
            assert "Groceries" in " ".join(await removed.all_inner_texts())
            assert "Delete selected note" in await card.locator(".title").inner_text()
            await _layout_holds(page, 1280)
            await _layout_holds(page, 390)
            await page.set_viewport_size({"width": 1280, "height": 900})
            await card.get_by_label("Message to the agent if you decline").fill(
                "Keep it: archive it instead"
            )
            await card.get_by_role("button", name="Decline").click()
            declined = await asyncio.wait_for(pending, TIMEOUT_MS / 1000)
            assert declined["isError"] is True, declined
            assert declined["structuredContent"]["reason"] == "declined"
            assert "Keep it: archive it instead" in declined["content"][0]["text"]
            await card.wait_for(state="detached", timeout=TIMEOUT_MS)

            # 2. select, call, clear the selection, approve: nothing is sent, it is stale
            assert (await agent.call("select_note", {"id": "n1"}))["isError"] is False
            await wait_for_tools(page, ["delete_selected"])
            pending = asyncio.ensure_future(agent.call("delete_selected", {}))
            await card.get_by_text('Delete the note "Groceries"').wait_for(timeout=TIMEOUT_MS)
            assert (await agent.call("clear_selection", {}))["isError"] is False
            await card.get_by_role("button", name="Approve", exact=True).click()
            stale = await asyncio.wait_for(pending, TIMEOUT_MS / 1000)
            assert stale["isError"] is True, stale
            assert stale["structuredContent"]["reason"] == "stale"
            note = page.get_by_test_id("answer-note")  # the person is told, not only the agent
            await note.get_by_text("nothing was sent").wait_for(timeout=TIMEOUT_MS)
            await card.wait_for(state="detached", timeout=TIMEOUT_MS)
            assert "Groceries" in await page.get_by_test_id("context-text").inner_text()
            await activity.get_by_text("stale").first.wait_for(timeout=TIMEOUT_MS)
            await page.screenshot(path=str(ARTIFACTS / "person-page-activity.png"), full_page=True)

            # 3. approve with an edited input: asked again with its preview, applied once
            pending = asyncio.ensure_future(agent.call("add_note", {"title": "Milk"}))
            await card.get_by_text('Add the note "Milk"').wait_for(timeout=TIMEOUT_MS)
            await card.get_by_text("Edit the input before approving").click()
            await card.get_by_label("Input (JSON)").fill('{"title": "Oat milk"}')
            await card.get_by_role("button", name="Approve with this input").click()
            await card.get_by_text('Add the note "Oat milk"').wait_for(timeout=TIMEOUT_MS)
            added = card.locator(".diff .added")
            assert "Oat milk" in " ".join(await added.all_inner_texts())
            await card.get_by_role("button", name="Approve", exact=True).click()
            done = await asyncio.wait_for(pending, TIMEOUT_MS / 1000)
            assert done["isError"] is False, done
            shown = page.get_by_test_id("context-text")
            await shown.get_by_text("Oat milk").wait_for(timeout=TIMEOUT_MS)
            titles = await shown.inner_text()
            assert titles.count("Oat milk") == 1
            assert '"Milk"' not in titles

            assert await page.evaluate("window.foldkitAgent.errors()") == []
            assert failed == [], failed
            assert errors == [], errors
        finally:
            await context.close()
    decided = [
        (e["capability"], e["decision"], e["approval"])
        for e in _entries(audit)
        if e["capability"] in ("delete_selected", "add_note")
    ]
    assert decided == [
        ("delete_selected", "refused", "declined"),
        ("delete_selected", "refused", "stale"),
        ("add_note", "dispatched", "approved"),
    ]
    assert {e["principal"] for e in _entries(audit)} == {"alice"}


def _entries(path: Any) -> list[dict[str, Any]]:
    with open(path, encoding="utf-8") as lines:
        return [json.loads(line) for line in lines if line.strip()]
