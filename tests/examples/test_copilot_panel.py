"""The todo copilot panel (examples/todo_web/copilot_panel) in headless Chromium: a person asks,
and the panel shows the copilot's tool call, its answer and the todo list it changed, all read
from the AG-UI run by the bundled @ag-ui/client; a delete waits for the person's approval.

Also: the committed bundle is what ``make copilot-panel`` builds from its source and the
pinned packages."""

from __future__ import annotations

from pathlib import Path

import pytest
from playwright.async_api import Page, expect

from examples.todo_web.copilot_panel import HERE, copilot_site
from tests.support.browser import ARTIFACTS, launch, need_chromium
from tests.support.bundles import ESBUILD, rebuilt
from tests.support.serving import served


async def ask(page: Page, text: str) -> None:
    await page.fill("#said", text)
    await page.click("#ask")
    await expect(page.locator("#ask")).to_be_enabled()  # the run has ended


@pytest.mark.interop
@pytest.mark.browser
async def test_the_panel_shows_the_tool_call_and_the_state_change_the_person_asked_for() -> None:
    need_chromium()
    async with copilot_site() as (app, runtime), served(app) as origin, launch(native=False) as b:
        page = await b.new_page(viewport={"width": 1280, "height": 800})
        errors: list[str] = []
        page.on("pageerror", lambda err: errors.append(str(err)))
        await page.goto(f"{origin}/")

        await ask(page, "add Buy milk")
        calls = page.locator("#log .tool-call")
        await expect(calls).to_have_text(['create_todo({"title": "Buy milk"})'])
        await expect(page.locator("#log .tool-result")).to_contain_text(['"status":"completed"'])
        await expect(page.locator("#todos li")).to_have_text(["todo-1: Buy milk"])

        await ask(page, "select todo-1")
        await expect(page.locator("#todos li.selected")).to_have_text(["todo-1: Buy milk"])
        await ask(page, "delete the selected todo")
        await expect(page.locator("#approval")).to_be_visible()
        await expect(page.locator("#approval-text")).to_contain_text('Delete the todo "Buy milk"')
        await expect(page.locator("#todos li")).to_have_count(1)  # nothing sent yet
        ARTIFACTS.mkdir(exist_ok=True)
        await page.screenshot(path=str(ARTIFACTS / "copilot-panel-asked.png"), full_page=True)

        await page.click("#approve")
        await expect(page.locator("#approval")).to_be_hidden()
        await expect(page.locator("#todos li")).to_have_count(0)
        await expect(page.locator("#log .reply").last).to_have_text("delete_todo: dispatched")
        await page.screenshot(path=str(ARTIFACTS / "copilot-panel.png"), full_page=True)
        assert errors == []
        assert runtime.audit is not None
        done = [
            (e.transport, e.principal, e.capability, e.approval) for e in runtime.audit.entries()
        ]
        assert done == [
            ("ag-ui", "demo", "create_todo", None),
            ("ag-ui", "demo", "select_todo", None),
            ("ag-ui", "demo", "delete_todo", "approved"),
        ]


@pytest.mark.interop
@pytest.mark.skipif(not ESBUILD.exists(), reason="npm packages are not installed (make node)")
def test_the_committed_bundle_is_what_make_copilot_panel_builds(tmp_path: Path) -> None:
    made = rebuilt("copilot-panel", "PANEL_OUT", tmp_path / "panel.js")
    assert made == (HERE / "panel.js").read_bytes(), (
        "run `make copilot-panel` and commit examples/todo_web/copilot_panel/panel.js"
    )
