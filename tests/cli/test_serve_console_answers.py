"""A person answering at the console of a real ``foldkit-agent serve --console`` reaches the
agent whose call waits across requests: a 2026-era MCP caller (the official ``mcp`` client)
is told where the answer led on its next ``request_state`` call, an A2A task (the
``a2a-sdk`` client) moves on in the store. The console's own answer says whether the Message
was sent: ``approved: false`` for a call refused as stale however the person answered. The
audit records who declined.
"""

from __future__ import annotations

import json
import re
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import httpx
import httpx2
import mcp.types as types
from a2a.types import GetTaskRequest, TaskState
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from foldkit_agent.adapters.mcp.approval import INPUT_KEY
from foldkit_agent.adapters.web.csrf import CSRF_HEADER
from tests.cli.test_serve_decisions import a2a_caller, a2a_delete_waits, audited
from tests.support.serving import serve_process

ALICE = "alice-token-0123456789"
CAROL = "carol-token-0123456789"
SERVE = ("--console", "--token", f"{ALICE}=alice;todos:delete", "--token", f"{CAROL}=carol")


@asynccontextmanager
async def served(audit: Path, *args: str) -> AsyncIterator[str]:
    target = "examples.todo:runtime"
    async with serve_process(target, *args, *SERVE, "--audit", f"jsonl:{audit}") as origin:
        yield origin


class Console:
    """alice, signed in to the console with her token."""

    def __init__(self, http: httpx.AsyncClient, csrf: str) -> None:
        self.http = http
        self.csrf = csrf

    async def waiting(self) -> list[str]:
        """The keys of the calls waiting for alice's answer."""
        parts = (await self.http.get("/console/parts")).json()
        return [a["key"] for a in parts["approvals"]]

    async def answer(self, key: str, reply: dict[str, Any]) -> dict[str, Any]:
        r = await self.http.post(
            f"/console/approvals/{key}", json=reply, headers={CSRF_HEADER: self.csrf}
        )
        assert r.status_code == 200, r.text
        return r.json()


@asynccontextmanager
async def console(origin: str) -> AsyncIterator[Console]:
    async with httpx.AsyncClient(base_url=origin, headers={"Origin": origin}, timeout=30) as hc:
        assert (await hc.post("/console/sign-in", json={"token": ALICE})).status_code == 200
        page = (await hc.get("/console")).text
        found = re.search(r'<meta name="csrf-token" content="([^"]+)">', page)
        assert found is not None, page
        yield Console(hc, found.group(1))


@asynccontextmanager
async def modern_mcp(origin: str, token: str) -> AsyncIterator[Client]:
    http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"}, timeout=30)
    transport = streamable_http_client(f"{origin}/mcp", http_client=http)

    async def nobody(_context: Any, _params: Any) -> types.ElicitResult:
        raise AssertionError("the agent's own client is not asked: the console answers")

    async with Client(transport, mode="auto", elicitation_callback=nobody) as client:
        assert client.protocol_version == "2026-07-28"
        yield client


async def delete_waits(alice: Client) -> str:
    """Two todos, the first selected, ``delete_todo`` called: its ``request_state``."""
    for title in ("Milk", "Eggs"):
        assert (await alice.call_tool("create_todo", {"title": title})).is_error is False
    assert (await alice.call_tool("select_todo", {"id": "todo-1"})).is_error is False
    first = await alice.session.call_tool("delete_todo", {}, allow_input_required=True)
    assert isinstance(first, types.InputRequiredResult)
    assert first.request_state is not None
    return first.request_state


async def come_back(alice: Client, state: str) -> types.CallToolResult:
    """The agent's next request on its call (its own answer is not used: the console's was
    first)."""
    got = await alice.session.call_tool(
        "delete_todo",
        {},
        input_responses={INPUT_KEY: types.ElicitResult(action="accept", content={"approve": True})},
        request_state=state,
        allow_input_required=True,
    )
    assert isinstance(got, types.CallToolResult)
    return got


async def titles(client: Client) -> list[str]:
    contents = (await client.read_resource("agent://context")).contents[0]
    return [t["title"] for t in json.loads(getattr(contents, "text", "{}"))["todos"]]


async def test_a_console_decline_with_a_message_reaches_a_2026_mcp_agent(tmp_path: Path) -> None:
    audit = tmp_path / "audit.jsonl"
    async with served(audit, "--mcp", "http") as origin:
        async with modern_mcp(origin, ALICE) as alice, console(origin) as person:
            state = await delete_waits(alice)
            assert await person.waiting() == [state]
            said = await person.answer(state, {"approve": False, "message": "Not Milk"})
            assert (said["approved"], said["outcome"], said["reason"]) == (
                False,
                "refused",
                "declined",
            )
            result = await come_back(alice, state)
            assert result.is_error is True
            first = result.content[0]
            assert isinstance(first, types.TextContent)
            assert "They said: 'Not Milk'." in first.text
            assert await titles(alice) == ["Milk", "Eggs"]
            assert await person.waiting() == []
    (entry,) = audited(audit, "delete_todo")
    assert (entry["approval"], entry["declined_by"], entry["approved_by"]) == (
        "declined",
        "alice",
        None,
    )


async def test_a_console_approval_reaches_a_2026_mcp_agent_with_its_result(
    tmp_path: Path,
) -> None:
    audit = tmp_path / "audit.jsonl"
    async with served(audit, "--mcp", "http") as origin:
        async with modern_mcp(origin, ALICE) as alice, console(origin) as person:
            state = await delete_waits(alice)
            said = await person.answer(state, {"approve": True})
            assert (said["approved"], said["outcome"]) == (True, "dispatched")
            assert await titles(alice) == ["Eggs"]
            result = await come_back(alice, state)
            assert result.is_error is False
            assert result.structured_content is not None
            assert result.structured_content["status"] == "dispatched"
            assert await titles(alice) == ["Eggs"]  # told, not sent a second time
    (entry,) = audited(audit, "delete_todo")
    assert (entry["approval"], entry["approved_by"]) == ("approved", "alice")


async def test_a_console_approval_after_the_selection_was_cleared_says_not_approved(
    tmp_path: Path,
) -> None:
    audit = tmp_path / "audit.jsonl"
    async with served(audit, "--mcp", "http") as origin:
        async with (
            modern_mcp(origin, ALICE) as alice,
            modern_mcp(origin, CAROL) as carol,
            console(origin) as person,
        ):
            state = await delete_waits(alice)
            assert (await carol.call_tool("clear_selection", {})).is_error is False
            said = await person.answer(state, {"approve": True})
            assert (said["approved"], said["outcome"], said["reason"]) == (
                False,
                "refused",
                "stale",
            )
            result = await come_back(alice, state)
            assert result.structured_content is not None
            assert result.structured_content["reason"] == "stale"
            assert await titles(alice) == ["Milk", "Eggs"]
    (entry,) = audited(audit, "delete_todo")
    assert (entry["decision"], entry["approval"]) == ("refused", "stale")


async def test_a_console_approval_completes_a_waiting_a2a_task(tmp_path: Path) -> None:
    audit = tmp_path / "audit.jsonl"
    async with served(audit, "--a2a", "--webmcp") as origin:
        async with a2a_caller(origin, ALICE) as alice, console(origin) as person:
            waiting = await a2a_delete_waits(alice)
            assert await person.waiting() == [waiting.id]
            said = await person.answer(waiting.id, {"approve": True})
            assert (said["approved"], said["outcome"]) == (True, "dispatched")
            task = await alice.client.get_task(GetTaskRequest(id=waiting.id))
            assert task.status.state == TaskState.TASK_STATE_COMPLETED
            (artifact,) = task.artifacts
            assert artifact.name == "result"
            context = (await person.http.get("/agent/context")).json()["context"]
            assert [t["title"] for t in context["todos"]] == ["Eggs"]
    (entry,) = audited(audit, "delete_todo")
    assert (entry["transport"], entry["approval"], entry["approved_by"]) == (
        "a2a",
        "approved",
        "alice",
    )


async def test_a_console_edit_asks_a_2026_mcp_agent_again_and_sends_the_edit_once(
    tmp_path: Path,
) -> None:
    audit = tmp_path / "audit.jsonl"
    shelf = "tests.support.approval_app:runtime"
    args = ("--mcp", "http", *SERVE, "--audit", f"jsonl:{audit}")
    async with serve_process(shelf, *args) as origin:
        async with modern_mcp(origin, ALICE) as alice, console(origin) as person:
            first = await alice.session.call_tool(
                "add_item", {"title": "!milk"}, allow_input_required=True
            )
            assert isinstance(first, types.InputRequiredResult)
            assert first.request_state is not None
            said = await person.answer(
                first.request_state, {"approve": True, "input": {"title": "!oat milk"}}
            )
            assert (said["approved"], said["outcome"]) == (False, "asked again")
            (again_key,) = await person.waiting()
            assert again_key != first.request_state
            # the agent's next request is told the new question, under the new request_state
            told = await alice.session.call_tool(
                "add_item",
                {"title": "!milk"},
                input_responses={INPUT_KEY: types.ElicitResult(action="cancel")},
                request_state=first.request_state,
                allow_input_required=True,
            )
            assert isinstance(told, types.InputRequiredResult)
            assert told.request_state == again_key
            assert told.input_requests is not None
            asked = told.input_requests[INPUT_KEY]
            assert isinstance(asked, types.ElicitRequest)
            assert isinstance(asked.params, types.ElicitRequestFormParams)
            assert asked.params.requested_schema["properties"]["title"]["default"] == "!oat milk"
            said = await person.answer(again_key, {"approve": True})
            assert (said["approved"], said["outcome"]) == (True, "dispatched")
            contents = (await alice.read_resource("agent://context")).contents[0]
            items = json.loads(getattr(contents, "text", "{}"))["items"]
            assert items == ["milk", "!oat milk"]
    (entry,) = audited(audit, "add_item")
    assert (entry["approval"], entry["approval_asks"], entry["approved_by"]) == (
        "approved",
        2,
        "alice",
    )


async def test_a_console_edit_puts_an_a2a_task_back_in_input_required_for_its_caller(
    tmp_path: Path,
) -> None:
    audit = tmp_path / "audit.jsonl"
    shelf = "tests.support.approval_app:runtime"
    args = ("--a2a", "--webmcp", *SERVE, "--audit", f"jsonl:{audit}")
    async with serve_process(shelf, *args) as origin:
        async with a2a_caller(origin, ALICE) as alice, console(origin) as person:
            waiting = await alice.skill("add_item", {"title": "!milk"})
            assert waiting.status.state == TaskState.TASK_STATE_INPUT_REQUIRED
            said = await person.answer(
                waiting.id, {"approve": True, "input": {"title": "!oat milk"}}
            )
            assert (said["approved"], said["outcome"]) == (False, "asked again")
            again = await alice.client.get_task(GetTaskRequest(id=waiting.id))
            assert again.status.state == TaskState.TASK_STATE_INPUT_REQUIRED
            text = next(p.text for p in again.status.message.parts if p.HasField("text"))
            assert "  Title: !oat milk" in text.splitlines()
            done = await alice.answer(again, {"approve": True})  # the agent's own person
            assert done.status.state == TaskState.TASK_STATE_COMPLETED
            context = (await person.http.get("/agent/context")).json()["context"]
            assert context["items"] == ["milk", "!oat milk"]
    (entry,) = audited(audit, "add_item")
    assert (entry["approval"], entry["approval_asks"]) == ("approved", 2)
