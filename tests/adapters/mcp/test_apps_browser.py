"""An MCP Apps host in headless Chromium against a real ``foldkit-agent serve --mcp http``.

The host is ext-apps' AppBridge with the official MCP TypeScript client (tests/interop/
apps_host.js, bundled here by esbuild): it lists the todo app's ``ui://`` resource, renders it
in a sandboxed frame, and forwards what the view asks. A person's click in the view creates a
todo; the model's next ``agent://context`` read (the Python SDK client, as an agent) shows it;
the model's own call reaches the view through the host; and the audit records who pressed
each: ``view`` and ``agent``.
"""

from __future__ import annotations

import sqlite3
import subprocess
from pathlib import Path
from typing import Any

import pytest
from playwright.async_api import Frame, Page, Route, expect

from tests.support.browser import ARTIFACTS, TIMEOUT_MS, launch, need_chromium
from tests.support.paths import ROOT
from tests.support.serving import mcp_client, serve_process, todos_of

INTEROP = ROOT / "tests" / "interop"
ESBUILD = INTEROP / "node_modules" / ".bin" / "esbuild"

pytestmark = [
    pytest.mark.browser,
    pytest.mark.interop,
    pytest.mark.skipif(
        not ESBUILD.exists(), reason="npm packages are not installed in tests/interop (make node)"
    ),
]


def host_script(out: Path) -> str:
    """The host page's script: tests/interop/apps_host.js with ext-apps and the MCP client."""
    done = subprocess.run(
        [
            str(ESBUILD),
            "tests/interop/apps_host.js",
            "--bundle",
            "--format=iife",
            "--platform=browser",
            "--target=es2020",
            "--log-level=warning",
            f"--outfile={out}",
        ],
        cwd=ROOT,
        env={"PATH": "/usr/bin:/bin", "NODE_PATH": str(INTEROP / "node_modules")},
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return out.read_text("utf-8")


async def host_page(page: Page, origin: str, script: str) -> None:
    """Open the host page on the server's own origin (so the client's /mcp requests are
    same-origin, as a host's backend would make them), served by the browser's router."""
    html = f"<!doctype html><html><body><h1>Host</h1><script>{script}</script></body></html>"

    async def fulfil(route: Route) -> None:
        await route.fulfill(status=200, content_type="text/html", body=html)

    await page.route(f"{origin}/host.html", fulfil)
    await page.goto(f"{origin}/host.html")


def audited(path: Path) -> list[tuple[str, str, str | None]]:
    conn = sqlite3.connect(path)
    try:
        rows = conn.execute(
            "SELECT capability, decision, actor FROM audit_entries ORDER BY id"
        ).fetchall()
    finally:
        conn.close()
    return [(str(c), str(d), a) for c, d, a in rows]


async def test_a_click_in_the_view_is_the_call_the_model_reads_and_the_audit_tells_apart(
    tmp_path: Path,
) -> None:
    need_chromium()
    script = host_script(tmp_path / "host.js")
    db = tmp_path / "audit.db"
    async with (
        serve_process(
            "examples.todo:runtime", "--mcp", "http", "--audit", f"sqlite:{db}", "--audit-durable"
        ) as origin,
        launch(native=False) as browser,
    ):
        page = await browser.new_page(viewport={"width": 1280, "height": 1000})
        page.set_default_timeout(TIMEOUT_MS)
        await host_page(page, origin, script)
        opened: dict[str, Any] = await page.evaluate("url => window.openApp(url)", f"{origin}/mcp")

        assert {"uri": "ui://app/view.html", "mimeType": "text/html;profile=mcp-app"} in opened[
            "resources"
        ]
        assert opened["read"] == {
            "uri": "ui://app/view.html",
            "mimeType": "text/html;profile=mcp-app",
            "csp": {"connectDomains": [], "resourceDomains": []},
        }
        assert {t["uri"] for t in opened["tools"]} == {"ui://app/view.html"}
        assert not any(t["appOnly"] for t in opened["tools"])

        frame = await app_frame(page)
        view = page.frame_locator("iframe[title=app]")
        await expect(view.locator("body")).to_have_attribute("data-ready", "true")
        await expect(view.locator("#title")).to_have_text("Todos")
        create = view.locator("form[name=create_todo]")
        await expect(create).to_have_attribute("data-available", "true")
        await expect(view.locator("form[name=delete_todo]")).to_have_attribute(
            "data-available", "false"
        )

        # a person's click in the view
        await create.get_by_label("Title").fill("Buy milk")
        await create.get_by_role("button").click()
        await expect(create.get_by_role("status")).to_have_text("Done.")
        await expect(view.locator("#context table")).to_contain_text("Buy milk")

        # the model's next read shows it, and the model's own call reaches the view
        async with mcp_client(f"{origin}/mcp") as agent_client:
            assert [t["title"] for t in await todos_of(agent_client)] == ["Buy milk"]
            called = await agent_client.call_tool("create_todo", {"title": "Call mom"})
            assert not called.is_error
            refused = await agent_client.call_tool("delete_todo", {})
            assert refused.is_error
        await page.evaluate(
            "r => window.toolResult(r)",
            {"content": [{"type": "text", "text": called.content[0].text}]},  # type: ignore[union-attr]
        )
        await expect(view.locator("#context table")).to_contain_text("Call mom")

        # a refusal is shown in place, under the form it answers
        delete = view.locator("form[name=delete_todo]")
        await delete.get_by_role("button").click()
        await expect(delete.get_by_role("status")).to_contain_text("Refused: ")

        # what the view pushed for the model: the context after the person's change
        pushed = await page.evaluate("() => window.heard.modelContext")
        assert len(pushed) == 1
        assert [t["title"] for t in pushed[0]["structuredContent"]["todos"]] == ["Buy milk"]
        assert "Buy milk" in pushed[0]["content"][0]["text"]

        ARTIFACTS.mkdir(exist_ok=True)
        await page.screenshot(path=str(ARTIFACTS / "mcp-apps-view.png"), full_page=True)
        assert frame.is_detached() is False

    assert audited(db) == [
        ("create_todo", "dispatched", "view"),
        ("create_todo", "dispatched", "agent"),
        ("delete_todo", "refused", "agent"),
        ("delete_todo", "refused", "view"),
    ]


async def app_frame(page: Page) -> Frame:
    handle = await page.wait_for_selector("iframe[title=app]")
    frame = await handle.content_frame()
    assert frame is not None
    return frame


async def test_a_host_keeps_an_app_only_capability_from_its_model(tmp_path: Path) -> None:
    need_chromium()
    script = host_script(tmp_path / "host.js")
    async with (
        serve_process("tests.support.apps_todo:runtime", "--mcp", "http") as origin,
        launch(native=False) as browser,
    ):
        page = await browser.new_page()
        page.set_default_timeout(TIMEOUT_MS)
        await host_page(page, origin, script)
        opened: dict[str, Any] = await page.evaluate("url => window.openApp(url)", f"{origin}/mcp")
        view = page.frame_locator("iframe[title=app]")
        await expect(view.locator("#title")).to_have_text("Selection")
        await expect(view.locator("form[name=clear_selection]")).to_have_count(1)
    # ext-apps' own reading of the listing: the host offers clear_selection to the view only
    assert {t["name"]: t["appOnly"] for t in opened["tools"]} == {
        "selected_todo": False,
        "clear_selection": True,
    }
