"""Shared pieces of the headless-Chromium tests of the WebMCP bridge and the todo web page.

Two ways an agent reaches the page's tools:

* native: Chromium launched with ``--enable-features=WebMCP``; the agent is Playwright's
  ``page.webmcp`` (``tools()`` / ``call_tool()``);
* polyfill: no flag; ``@mcp-b/global`` 5.1.0 (served from ``tests/interop/node_modules``)
  installs ``document.modelContext`` and the ``navigator.modelContextTesting`` shim, which the
  agent side uses.

Nothing here sleeps: every wait is a Playwright wait on a condition.
"""

from __future__ import annotations

import asyncio
import json
import shutil
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any, Protocol

import pytest
from playwright.async_api import Browser, Page, async_playwright
from starlette.responses import FileResponse
from starlette.routing import Route

from examples.todo_web import TodoWeb, todo_web
from tests.support.paths import ROOT
from tests.support.web_serving import serve

ARTIFACTS = ROOT / "test-artifacts"
CHROMIUM = "/usr/bin/chromium"
POLYFILL = ROOT / "tests/interop/node_modules/@mcp-b/global/dist/index.iife.js"
POLYFILL_URL = "/vendor/mcp-b-global.iife.js"
BASE_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-quic",
]
TIMEOUT_MS = 10_000
_waits = 0


def need_chromium() -> None:
    if not Path(CHROMIUM).exists() and shutil.which("chromium") is None:
        pytest.skip("Debian chromium is not installed (make chromium)")


@asynccontextmanager
async def launch(*, native: bool) -> AsyncIterator[Browser]:
    """One headless Chromium; with the WebMCP feature when ``native``."""
    args = [*BASE_ARGS, *(["--enable-features=WebMCP"] if native else [])]
    async with async_playwright() as pw:
        browser = await pw.chromium.launch(executable_path=CHROMIUM, args=args, headless=True)
        try:
            yield browser
        finally:
            await browser.close()


@asynccontextmanager
async def site(*, polyfill: bool) -> AsyncIterator[tuple[TodoWeb, str]]:
    """The todo web app on a loopback port; with the polyfill script when asked."""
    extra = []
    head: tuple[str, ...] = ()
    if polyfill:
        extra = [
            Route(
                POLYFILL_URL,
                lambda _r: FileResponse(POLYFILL, media_type="text/javascript"),
                methods=["GET"],
            )
        ]
        head = (POLYFILL_URL,)
    async with todo_web(head_scripts=head, extra_routes=extra) as web, serve(web.app) as url:
        yield web, url


class Agent(Protocol):
    """How the test plays a browser agent against one page."""

    async def tools(self) -> list[dict[str, Any]]: ...

    async def call(self, name: str, args: dict[str, Any]) -> dict[str, Any]: ...


class NativeAgent:
    """Playwright's own WebMCP client (``page.webmcp``), over Chromium's implementation."""

    def __init__(self, page: Page) -> None:
        self.page = page

    async def tools(self) -> list[dict[str, Any]]:
        return list(await self.page.webmcp.tools())  # pyright: ignore[reportUnknownArgumentType]

    async def call(self, name: str, args: dict[str, Any]) -> dict[str, Any]:
        return await self.page.webmcp.call_tool(name, args)  # pyright: ignore[reportUnknownVariableType]


class PolyfillAgent:
    """The polyfill's testing shim, ``navigator.modelContextTesting``."""

    def __init__(self, page: Page) -> None:
        self.page = page

    async def tools(self) -> list[dict[str, Any]]:
        raw = await self.page.evaluate("navigator.modelContextTesting.listTools()")
        out: list[dict[str, Any]] = []
        for tool in raw:
            schema = tool.get("inputSchema")
            out.append(
                {**tool, "inputSchema": json.loads(schema) if isinstance(schema, str) else schema}
            )
        return out

    async def call(self, name: str, args: dict[str, Any]) -> dict[str, Any]:
        text = await self.page.evaluate(
            "([n, a]) => navigator.modelContextTesting.executeTool(n, JSON.stringify(a))",
            [name, args],
        )
        return json.loads(text) if isinstance(text, str) else text


async def wait_for_tools(page: Page, present: list[str], absent: Sequence[str] = ()) -> None:
    """Wait until the browser's model context lists ``present`` and none of ``absent``.

    ``getTools()`` answers with a Promise and ``wait_for_function`` wants a plain value, so
    each poll starts a fresh ``getTools()`` and judges the answer the previous poll stored.
    """
    global _waits
    _waits += 1
    await page.wait_for_function(
        """([present, absent, key]) => {
            const seen = (window.__seenTools ??= {});
            document.modelContext.getTools().then(ts => { seen[key] = ts.map(t => t.name); });
            const names = seen[key];
            return !!names && present.every(n => names.includes(n))
                && !absent.some(n => names.includes(n));
        }""",
        arg=[present, list(absent), _waits],
        timeout=TIMEOUT_MS,
    )


async def scenario(page: Page, agent: Agent, web: TodoWeb, url: str, mode: str) -> None:
    """The story both modes must tell (issue 7): see the module doc of the test modules."""
    console_errors: list[str] = []
    page.on("console", lambda m: console_errors.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda e: console_errors.append(str(e)))
    await page.goto(url + "/")
    await page.wait_for_function("window.foldkitAgent !== undefined", timeout=TIMEOUT_MS)
    await wait_for_tools(page, ["create_todo"], ["delete_todo", "select_todo"])

    # 1. the agent lists the tools: only what is available, with the server's schema
    tools = {t["name"]: t for t in await agent.tools()}
    assert set(tools) == {"create_todo"}
    schema = tools["create_todo"]["inputSchema"]
    assert schema["properties"]["title"]["type"] == "string"
    assert schema["additionalProperties"] is False

    # 2. the agent creates a todo; the person's page shows it (rendered from the app's events)
    result = await agent.call("create_todo", {"title": "Buy oat milk"})
    assert result.get("isError") is False, result
    assert result["structuredContent"]["status"] == "completed"
    todo = page.get_by_test_id("todos").locator("li", has_text="Buy oat milk")
    await todo.wait_for(state="visible", timeout=TIMEOUT_MS)
    await (
        page.locator("li", has_text="Buy oat milk")
        .locator(".pending")
        .wait_for(state="detached", timeout=TIMEOUT_MS)
    )

    # 3. a person adds one too; the agent's context sees it
    await page.get_by_placeholder("What needs doing?").fill("Water the plants")
    await page.get_by_role("button", name="Add").click()
    await page.locator("li", has_text="Water the plants").wait_for(timeout=TIMEOUT_MS)
    assert [t.title for t in web.running.model().todos] == ["Buy oat milk", "Water the plants"]

    # 4. the person selects the agent's todo: delete_todo appears as a tool
    await todo.get_by_role("button", name="Select").click()
    await wait_for_tools(page, ["delete_todo", "clear_selection", "select_todo"])
    assert "delete_todo" in {t["name"] for t in await agent.tools()}

    # 5. F03: bad input is a refusal result, not a success and not a thrown error
    refused = await agent.call("create_todo", {"title": 5, "priority": "high"})
    assert refused["isError"] is True, refused
    assert refused["structuredContent"]["_tag"] == "AgentInvalidInputError"
    assert "priority" in refused["content"][0]["text"]
    refused = await agent.call("select_todo", {"id": ["todo-1"]})
    assert refused["isError"] is True

    # 6. the agent deletes the selected todo (authorized by the page's signed-in user): the
    #    call waits while the page shows its person what would go; they approve (issue 17)
    pending = asyncio.ensure_future(agent.call("delete_todo", {}))
    request = page.get_by_test_id("approvals").get_by_test_id("approval")
    await request.wait_for(state="visible", timeout=TIMEOUT_MS)
    assert "removes todos.0" in await request.inner_text()
    assert [t.title for t in web.running.model().todos] == ["Buy oat milk", "Water the plants"]
    await request.get_by_role("button", name="Approve").click()
    deleted = await asyncio.wait_for(pending, TIMEOUT_MS / 1000)
    assert deleted["isError"] is False, deleted
    await todo.wait_for(state="detached", timeout=TIMEOUT_MS)
    await wait_for_tools(page, ["create_todo", "select_todo"], ["delete_todo"])
    assert [t.title for t in web.running.model().todos] == ["Water the plants"]

    # the agent toggles the person's todo; the page shows it done
    done = await agent.call("toggle_todo", {"id": "todo-2"})
    assert done["isError"] is False
    await page.locator("li.completed", has_text="Water the plants").wait_for(timeout=TIMEOUT_MS)

    ARTIFACTS.mkdir(exist_ok=True)
    await page.screenshot(path=str(ARTIFACTS / f"webmcp-{mode}.png"), full_page=True)

    assert await page.evaluate("window.foldkitAgent.errors()") == []
    assert console_errors == [], console_errors
    entries = web.runtime.audit.entries() if web.runtime.audit else []
    assert {e.transport for e in entries} == {"webmcp"}
    assert {e.principal for e in entries} == {"demo"}
    (delete,) = [e for e in entries if e.capability == "delete_todo"]
    assert (delete.decision, delete.approval, delete.approved_by) == (
        "dispatched",
        "approved",
        "demo",
    )


async def resync_storm(page: Page, agent: Agent, web: TodoWeb, url: str, rounds: int = 12) -> None:
    """F12: many availability flips and forced re-registrations never raise or duplicate."""
    console_errors: list[str] = []
    page.on("console", lambda m: console_errors.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda e: console_errors.append(str(e)))
    await page.goto(url + "/")
    await wait_for_tools(page, ["create_todo"])
    assert (await agent.call("create_todo", {"title": "Flip me"}))["isError"] is False
    await wait_for_tools(page, ["select_todo"])
    row = page.locator("li", has_text="Flip me")
    for _ in range(rounds):
        await row.get_by_role("button", name="Select").click()
        await wait_for_tools(page, ["delete_todo"])
        await row.get_by_role("button", name="Unselect").click()
        await wait_for_tools(page, ["select_todo"], ["delete_todo"])
    # forced re-registration of every tool, many times, concurrently with changes
    await page.evaluate(
        """async () => {
            const runs = [];
            for (let i = 0; i < 20; i++) runs.push(window.foldkitAgent.sync({reregister: true}));
            await Promise.all(runs);
        }"""
    )
    await row.get_by_role("button", name="Select").click()
    await wait_for_tools(page, ["delete_todo", "create_todo", "select_todo", "clear_selection"])
    names = [t["name"] for t in await agent.tools()]
    assert len(names) == len(set(names)), names
    assert set(names) == {
        "create_todo",
        "rename_todo",
        "toggle_todo",
        "select_todo",
        "clear_selection",
        "delete_todo",
    }
    assert await page.evaluate("window.foldkitAgent.errors()") == []
    assert console_errors == [], console_errors
    # the tools still work after the storm
    assert (await agent.call("rename_todo", {"id": "todo-1", "title": "Flipped"}))[
        "isError"
    ] is False
    await page.locator("li", has_text="Flipped").wait_for(timeout=TIMEOUT_MS)


async def self_removing_call(page: Page, agent: Agent, web: TodoWeb, url: str) -> None:
    """A call that makes its own tool unavailable still gets its answer.

    ``clear_selection`` is offered only while a todo is selected, so its own call removes it.
    The test holds the call's HTTP answer until the page has re-synced against the Model the
    call produced (the race a loaded machine loses on its own): the bridge must keep the tool
    registered until its call has answered, then remove it.
    """
    await page.goto(url + "/")
    await wait_for_tools(page, ["create_todo"])
    assert (await agent.call("create_todo", {"title": "Pick me"}))["isError"] is False
    await wait_for_tools(page, ["select_todo"])
    await page.locator("li", has_text="Pick me").get_by_role("button", name="Select").click()
    await wait_for_tools(page, ["clear_selection"])
    held: list[str] = []

    async def hold_until_resynced(route: Any) -> None:
        answer = await route.fetch()  # the server applied the call; its change event is out
        tools = await page.evaluate(
            "async () => { await window.foldkitAgent.sync(); return window.foldkitAgent.tools(); }"
        )
        held.extend(tools)
        await route.fulfill(response=answer)

    await page.route("**/invoke/clear_selection", hold_until_resynced)
    result = await agent.call("clear_selection", {})
    assert result["isError"] is False, result
    assert web.running.model().selected_todo_id is None
    assert "clear_selection" in held  # kept while its call was running
    await wait_for_tools(page, ["select_todo"], ["clear_selection"])  # and removed after
    assert await page.evaluate("window.foldkitAgent.errors()") == []
