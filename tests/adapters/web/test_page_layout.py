"""The todo page as a person sees it, at desktop (1280 px) and phone (390 px) widths (issue 19).

Headless Chromium with its own WebMCP (``--enable-features=WebMCP``): a browser agent and the
person use the page together (the todo app's own panel inside the library's person's page);
the test then checks layout facts in the DOM (nothing overflows its box, the tools listed stay
inside theirs, the panels sit side by side or stacked), that the activity panel shows both of
them as the audit recorded it with the refused call folded, and saves a screenshot to
``test-artifacts/page-<width>.png``.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest
from playwright.async_api import Browser, Page

from examples.todo import AppAgent
from tests.support.browser import (
    ARTIFACTS,
    TIMEOUT_MS,
    NativeAgent,
    launch,
    need_chromium,
    site,
    wait_for_tools,
)

pytestmark = [pytest.mark.browser, pytest.mark.interop]

ALL_TOOLS = [c.name for c in AppAgent.capabilities]
LONG_TITLE = "Renew-the-passport-before-the-summer-holidays-and-book-the-flights-to-Lisbon"

# For the page and each panel: does its content fit its box? And where is every box?
LAYOUT = """() => {
    const box = (el) => {
        const r = el.getBoundingClientRect();
        return {left: r.left, right: r.right, top: r.top, bottom: r.bottom,
                scrollWidth: el.scrollWidth, clientWidth: el.clientWidth};
    };
    const root = document.documentElement;
    const ids = ["app", "approvals", "context", "activity", "tools", "todos"];
    const panels = Object.fromEntries(ids.map(id => [id, box(document.getElementById(id))]));
    const chips = [...document.querySelectorAll("#tools [data-testid=tool]")].map(box);
    const escaping = [...document.body.querySelectorAll("*")]
        .filter(el => el.getBoundingClientRect().right > root.clientWidth + 0.5)
        .map(el => el.tagName + "#" + el.id + "." + el.className);
    return {page: {scrollWidth: root.scrollWidth, clientWidth: root.clientWidth},
            panels, chips, escaping};
}"""


# Every text's contrast against the background it sits on (WCAG 2 relative luminance), and
# every control's accessible name.
ACCESSIBILITY = """() => {
    const rgb = (c) => c.match(/[\\d.]+/g).map(Number);
    const lum = ([r, g, b]) => {
        const f = (v) => {
            v /= 255;
            return v <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4;
        };
        return 0.2126 * f(r) + 0.7152 * f(g) + 0.0722 * f(b);
    };
    const background = (el) => {
        for (; el; el = el.parentElement) {
            const c = rgb(getComputedStyle(el).backgroundColor);
            if (c.length < 4 || c[3] > 0) return c;
        }
        return [255, 255, 255];
    };
    const low = [];
    for (const el of document.body.querySelectorAll("*")) {
        const text = [...el.childNodes].some(n => n.nodeType === 3 && n.textContent.trim());
        if (!text || el.closest("[hidden]") || el.matches("input")) continue;
        const a = lum(rgb(getComputedStyle(el).color)), b = lum(background(el));
        const ratio = (Math.max(a, b) + 0.05) / (Math.min(a, b) + 0.05);
        if (ratio < 4.5) low.push(el.tagName + "." + el.className + ": " + ratio.toFixed(2));
    }
    const unnamed = [...document.querySelectorAll("button, input")].filter(el => {
        const label = el.id && document.querySelector(`label[for="${el.id}"]`);
        return !(el.getAttribute("aria-label") || (label && label.textContent.trim())
                 || (el.tagName === "BUTTON" && el.textContent.trim()));
    }).map(el => el.outerHTML);
    return {low, unnamed};
}"""


@pytest.fixture(scope="module")
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(scope="module")
async def browser() -> AsyncIterator[Browser]:
    need_chromium()
    async with launch(native=True) as b:
        yield b


async def _use_the_page(page: Page, url: str) -> None:
    """A browser agent and the person fill the page: five todos, one selected, one done."""
    agent = NativeAgent(page)
    await page.goto(url + "/")
    await wait_for_tools(page, ["create_todo"])
    for title in ("Buy oat milk", LONG_TITLE, "Call the plumber"):
        assert (await agent.call("create_todo", {"title": title}))["isError"] is False
    refused = await agent.call("create_todo", {"title": 5})
    assert refused["isError"] is True
    await page.get_by_label("New todo").fill("Water the plants")
    await page.get_by_role("button", name="Add").click()
    await page.locator("li.todo", has_text="Water the plants").wait_for(timeout=TIMEOUT_MS)
    await (
        page.locator("li.todo", has_text="Buy oat milk")
        .get_by_role("button", name="Select")
        .click()
    )
    await wait_for_tools(page, ALL_TOOLS)
    assert (await agent.call("toggle_todo", {"id": "todo-3"}))["isError"] is False
    await page.locator("li.todo.completed", has_text="Call the plumber").wait_for(
        timeout=TIMEOUT_MS
    )
    # the page lists all six tools once the selection offers them
    await page.wait_for_function(
        "document.querySelectorAll('#tools [data-testid=tool]').length === 6"
    )


async def _activity(page: Page, count: int) -> list[dict[str, Any]]:
    items = page.get_by_test_id("activity-item")
    await page.wait_for_function(
        "n => document.querySelectorAll('[data-testid=activity-item]').length >= n",
        arg=count,
        timeout=TIMEOUT_MS,
    )
    return [{"text": t} for t in await items.all_inner_texts()]


@pytest.mark.parametrize(("width", "height"), [(1280, 800), (390, 844)])
async def test_the_page_fits_its_width_and_shows_who_did_what(
    browser: Browser, width: int, height: int
) -> None:
    async with site(polyfill=False) as (web, url):
        context = await browser.new_context(viewport={"width": width, "height": height})
        try:
            page = await context.new_page()
            errors: list[str] = []
            page.on("pageerror", lambda e: errors.append(str(e)))
            await _use_the_page(page, url)

            # the activity panel: newest first, the agent and the person as the audit has them
            shown = [i["text"] for i in await _activity(page, 6)]
            assert [t.split("\n")[0] for t in shown] == [
                "browser agent",  # toggle_todo
                "person",  # select_todo
                "person",  # create_todo
                "browser agent",
                "browser agent",
                "browser agent",
            ]
            assert "Toggle todo by demo" in shown[0]
            assert "Select todo by demo" in shown[1]
            # the refused call is folded into one row, below the actions after it
            run = page.get_by_test_id("refused-run")
            assert "1 refused call" in await run.inner_text()
            # never the input: no title the agent or the person sent appears in the panel
            panel = await page.get_by_test_id("activity").inner_text()
            assert "oat milk" not in panel
            assert "plumber" not in panel
            assert "plants" not in panel
            audit = web.runtime.audit
            assert audit is not None
            assert [e.capability for e in audit.entries()][-1] == "toggle_todo"

            # the todos' state reads from the page, not only from colour
            selected = page.locator("li.todo[aria-current=true]")
            assert await selected.count() == 1
            assert "selected" in await selected.inner_text()
            done = page.locator("li.todo.completed", has_text="Call the plumber")
            assert "done" in await done.inner_text()
            assert await done.get_by_role("checkbox").is_checked()

            layout = await page.evaluate(LAYOUT)
            assert layout["page"]["scrollWidth"] <= layout["page"]["clientWidth"], layout["page"]
            assert layout["escaping"] == []
            for name, box in layout["panels"].items():
                assert box["scrollWidth"] <= box["clientWidth"], (name, box)
            tools = layout["panels"]["tools"]
            chips = layout["chips"]
            assert len(chips) == 6
            for chip in chips:
                assert tools["left"] - 0.5 <= chip["left"]
                assert chip["right"] <= tools["right"] + 0.5
            main, activity = layout["panels"]["app"], layout["panels"]["activity"]
            if width >= 900:
                assert activity["left"] >= main["right"]  # side by side
            else:
                assert activity["top"] >= main["bottom"]  # stacked
                assert main["right"] <= width
                assert activity["right"] <= width

            checked = await page.evaluate(ACCESSIBILITY)
            assert checked == {"low": [], "unnamed": []}

            ARTIFACTS.mkdir(exist_ok=True)
            await page.screenshot(path=str(ARTIFACTS / f"page-{width}.png"), full_page=True)
            assert errors == []
        finally:
            await context.close()
