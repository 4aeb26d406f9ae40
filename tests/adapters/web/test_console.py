"""The console of a real ``foldkit-agent serve --console --token ...``, in headless Chromium.

A person signs in with a token (a wrong one is refused), sees their own agent's waiting call
with its title, caller and preview, and another person's call without answer buttons; the
activity folds a burst of refused calls into one row so the agent's real action stays in
view; the person declines their agent's call, and the audit records the decline. At 1280 and
390 px nothing overflows the page and no text touches its edges; screenshots go to
``test-artifacts/console-<width>.png``.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any

import pytest
from playwright.async_api import Browser, Page

from tests.support.browser import ARTIFACTS, TIMEOUT_MS, launch, need_chromium
from tests.support.serving import serve_process
from tests.support.waiting_callers import Http, ModernMcp, Waiting

pytestmark = [pytest.mark.browser, pytest.mark.interop]

ALICE = "alice-token-0123456789"
BOB = "bob-token-0123456789"
REFUSED = 22

LAYOUT = """() => {
    const root = document.documentElement;
    const escaping = [...document.body.querySelectorAll("*")]
        .filter(el => el.getBoundingClientRect().right > root.clientWidth + 0.5)
        .map(el => el.tagName + "." + el.className);
    const edge = [...document.body.querySelectorAll("h1, h2, h3, p, dt, dd, pre, button")]
        .filter(el => el.offsetParent !== null)
        .filter(el => {
            const r = el.getBoundingClientRect();
            return r.width > 0 && (r.left < 8 || r.right > root.clientWidth - 8);
        })
        .map(el => el.tagName + ": " + el.textContent.slice(0, 30));
    return {scrollWidth: root.scrollWidth, clientWidth: root.clientWidth, escaping, edge};
}"""


@pytest.fixture(scope="module")
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(scope="module")
async def browser() -> AsyncIterator[Browser]:
    need_chromium()
    async with launch(native=False) as b:
        yield b


async def _sign_in(page: Page, origin: str, token: str) -> None:
    await page.goto(origin + "/console")
    await page.get_by_label("Token").fill(token)
    await page.get_by_role("button", name="Sign in").click()


async def _layout_holds(page: Page, width: int) -> None:
    await page.set_viewport_size({"width": width, "height": 900})
    got: dict[str, Any] = await page.evaluate(LAYOUT)
    assert got["scrollWidth"] <= got["clientWidth"], got
    assert got["escaping"] == [], got
    assert got["edge"] == [], got
    ARTIFACTS.mkdir(exist_ok=True)
    await page.screenshot(path=str(ARTIFACTS / f"console-{width}.png"), full_page=True)


async def test_a_person_signs_in_and_answers_only_their_own_agents_request(
    browser: Browser, tmp_path: Any
) -> None:
    audit = tmp_path / "audit.jsonl"
    serve = (
        "tests.support.waiting_app:runtime",
        *("--mcp", "http", "--console", "--audit", f"jsonl:{audit}", "--audit-durable"),
        *("--token", f"{ALICE}=alice", "--token", f"{BOB}=bob"),
    )
    async with serve_process(*serve) as origin:
        http = Http(origin, 8)
        alice, bob = ModernMcp(http, ALICE), ModernMcp(http, BOB)
        context = await browser.new_context()
        errors: list[str] = []
        try:
            page = await context.new_page()
            page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)

            await _sign_in(page, origin, "not-a-token-0123456789")
            alert = page.get_by_role("alert")
            await alert.get_by_text("That token is not accepted.").wait_for(timeout=TIMEOUT_MS)
            errors.clear()  # the refused sign-in's 401 is the one error the browser logs
            await _sign_in(page, origin, ALICE)
            await page.get_by_test_id("who").get_by_text("alice").wait_for(timeout=TIMEOUT_MS)
            (cookie,) = await context.cookies()
            assert (cookie["name"], cookie["httpOnly"], cookie["sameSite"]) == (
                "foldkit_agent_person",
                True,
                "Strict",
            )
            assert ALICE not in cookie["value"]

            assert (await alice.call("add_item", {"title": "bread"}))["isError"] is False
            for _ in range(REFUSED):
                refused = await alice.call("add_item", {"title": 5})
                assert refused["isError"] is True
            mine = await alice.attempt(0)
            theirs = await bob.attempt(1)
            assert isinstance(mine, Waiting)
            assert isinstance(theirs, Waiting)

            cards = page.get_by_test_id("approval")
            await page.get_by_test_id("pending-count").get_by_text("2").wait_for(timeout=TIMEOUT_MS)
            own = cards.filter(has_text="MCP agent of alice")
            other = cards.filter(has_text="MCP agent of bob")
            assert await own.get_by_role("button", name="Approve").count() == 1
            assert await other.get_by_role("button").count() == 0
            assert "Only its own person or an approver" in await other.inner_text()
            shown = await own.inner_text()
            assert "note" in shown
            assert "hold" in shown  # the input the agent sent, as a labelled field

            activity = page.get_by_test_id("activity")
            await activity.get_by_text(f"{REFUSED} refused calls").wait_for(timeout=TIMEOUT_MS)
            real = activity.get_by_test_id("activity-item").filter(has_text="add_item")
            assert await real.is_visible()  # the real action stays in view

            await _layout_holds(page, 1280)
            await _layout_holds(page, 390)

            await own.get_by_role("button", name="Decline").click()
            await page.get_by_test_id("pending-count").get_by_text("1").wait_for(timeout=TIMEOUT_MS)
            note = activity.get_by_test_id("activity-item").filter(has_text="note by alice")
            await note.get_by_text("declined").wait_for(timeout=TIMEOUT_MS)
            # bob's call waits on for bob: alice's console could not answer it
            ended = await bob.let_go(theirs)
            assert ended["structuredContent"]["reason"] == "declined", ended
            assert errors == [], errors
        finally:
            await context.close()
            http.close()
    entries = [e for e in _entries(audit) if e["capability"] == "note"]
    assert sorted((e["principal"], e["approval"]) for e in entries) == [
        ("alice", "declined"),
        ("bob", "declined"),
    ]


def _entries(path: Any) -> list[dict[str, Any]]:
    with open(path, encoding="utf-8") as lines:
        return [json.loads(line) for line in lines if line.strip()]
