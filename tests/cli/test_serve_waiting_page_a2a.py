"""Calls waiting for a person hold no connection and no other caller's place, on a real
``foldkit-agent serve`` with MCP, A2A and the page (the shelf's ``note`` asks a person).

One anonymous page visitor, with a fresh page session for every call, and one bearer token over
A2A each hold their most calls waiting for a person (16); past it their next one is refused
naming the cap. Meanwhile another caller is served on every transport: over MCP, over A2A (and
still gets a person asked), and on the page.
"""

from __future__ import annotations

from typing import Any

import httpx
from a2a.types import Task, TaskState

from tests.support.a2a_lab import skill_request
from tests.support.serving import a2a_client, mcp_client, serve_process

TOKENS = ("--token", "alice-token=alice", "--token", "bob-token=bob")
MOST = 16  # calls one caller may have waiting for a person (the default)


async def page_call(page: httpx.AsyncClient, name: str, body: dict[str, Any]) -> httpx.Response:
    """One call from a page session of its own: the session's token first, then the call."""
    page.cookies.clear()
    token = (await page.get("/agent/session")).json()["csrfToken"]
    return await page.post(f"/agent/invoke/{name}", json=body, headers={"X-CSRF-Token": token})


async def a2a_call(client: Any, name: str, body: dict[str, Any]) -> Task:
    events = [ev async for ev in client.send_message(skill_request(name, body))]
    tasks = [ev.task for ev in events if ev.HasField("task")]
    assert tasks, events
    return tasks[-1]


def status_text(task: Task) -> str:
    return next(p.text for p in task.status.message.parts if p.HasField("text"))


async def test_callers_holding_their_most_calls_waiting_for_a_person_keep_nobody_else_waiting() -> (
    None
):
    async with (
        serve_process(
            "tests.support.approval_app:runtime",
            "--mcp",
            "http",
            "--a2a",
            "--webmcp",
            *TOKENS,
            "--drain-timeout",
            "0",
        ) as origin,
        httpx.AsyncClient(base_url=origin, timeout=30, headers={"origin": origin}) as page,
        a2a_client(origin, "alice-token") as alice,
        a2a_client(origin, "bob-token") as bob,
    ):
        visitor = [await page_call(page, "note", {"text": f"page {n}"}) for n in range(MOST)]
        assert [r.status_code for r in visitor] == [202] * MOST  # answered at once, parked
        past = await page_call(page, "note", {"text": "one more"})
        refused = past.json()
        assert refused["isError"] is True
        assert refused["structuredContent"]["reason"] == "unavailable"
        assert f"({MOST}" in refused["content"][0]["text"]

        held = [await a2a_call(alice, "note", {"text": f"a2a {n}"}) for n in range(MOST)]
        assert {t.status.state for t in held} == {TaskState.TASK_STATE_INPUT_REQUIRED}
        over = await a2a_call(alice, "note", {"text": "one more"})
        assert over.status.state == TaskState.TASK_STATE_REJECTED
        assert f"({MOST}" in status_text(over)

        # everyone else is served: over MCP, over A2A (asked a person too) and on the page
        async with mcp_client(f"{origin}/mcp", "bob-token") as mcp:
            added = await mcp.call_tool("add_item", {"title": "eggs"})
            assert added.is_error is False
        assert (await a2a_call(bob, "add_item", {"title": "tea"})).status.state == (
            TaskState.TASK_STATE_COMPLETED
        )
        asked = await a2a_call(bob, "note", {"text": "bob's"})
        assert asked.status.state == TaskState.TASK_STATE_INPUT_REQUIRED
        served = await page_call(page, "add_item", {"title": "jam"})
        assert served.status_code == 200
        assert served.json()["isError"] is False
        listed = await page.get("/agent/context")
        assert listed.json()["context"] == {"items": ["milk", "eggs", "tea", "jam"]}
