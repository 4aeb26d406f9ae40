"""Decisions beyond yes/no, and answers bound to their Model, on a real ``foldkit-agent serve``
with the official clients: MCP in both eras (the ``mcp`` client's elicitation callback is the
person) and A2A (the ``a2a-sdk`` client's follow-up on the waiting task).

* A decline carries the person's message to the agent, quoted in the refusal.
* An approval with edited input is decoded again, asked about once more with its preview, and
  sent once with the edited value.
* Select a todo, call ``delete_todo`` (it waits), clear the selection, approve: nothing is sent
  and the call is refused as stale; select another todo instead and the person is asked again
  with the new preview, and only that answer deletes. The audit says which.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import httpx
import httpx2
import mcp.types as types
import pytest
from a2a.client import A2ACardResolver, ClientConfig, create_client
from a2a.helpers import new_data_part
from a2a.types import Message, Role, SendMessageRequest, Task, TaskState
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from foldkit_agent.adapters.a2a import EXTENSION_URI
from tests.support.a2a_lab import skill_request
from tests.support.serving import serve_process

TODO = "examples.todo:runtime"
SHELF = "tests.support.approval_app:runtime"
TOKENS = ("--token", "alice-token=alice;todos:delete", "--token", "carol-token=carol;todos:delete")
MODES = ["legacy", "auto"]  # the handshake era, and 2026-07-28 (InputRequiredResult)

Reply = dict[str, Any] | None  # an elicitation's accepted content; None: the person declines


@asynccontextmanager
async def served(target: str, audit: Path, *args: str) -> AsyncIterator[str]:
    async with serve_process(target, *args, "--audit", f"jsonl:{audit}") as origin:
        yield origin


def audited(audit: Path, capability: str) -> list[dict[str, Any]]:
    """The audit entries of ``capability`` the server wrote (read once it stopped)."""
    entries = [json.loads(line) for line in audit.read_text().splitlines()]
    return [e for e in entries if e["capability"] == capability]


class Person:
    """The elicitation callback: before each answer runs ``before`` (another caller changing
    the application while the person decides), then answers the next of ``replies``."""

    def __init__(self, *replies: Reply, before: Callable[[int], Awaitable[None]] | None = None):
        self.replies = list(replies)
        self.before = before
        self.asked: list[types.ElicitRequestFormParams] = []

    async def __call__(self, _context: Any, params: Any) -> types.ElicitResult:
        assert isinstance(params, types.ElicitRequestFormParams)
        self.asked.append(params)
        if self.before is not None:
            await self.before(len(self.asked))
        reply = self.replies[len(self.asked) - 1]
        if reply is None:
            return types.ElicitResult(action="decline")
        return types.ElicitResult(action="accept", content=reply)


def mcp_client(origin: str, mode: str, person: Person | None, token: str = "alice-token") -> Client:
    http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"}, timeout=30)
    transport = streamable_http_client(f"{origin}/mcp", http_client=http)
    return Client(transport, mode=mode, elicitation_callback=person)


def text_of(result: types.CallToolResult) -> str:
    first = result.content[0]
    assert isinstance(first, types.TextContent)
    return first.text


async def context_of(client: Client) -> dict[str, Any]:
    contents = (await client.read_resource("agent://context")).contents[0]
    return json.loads(getattr(contents, "text", "{}"))


async def titles(client: Client) -> list[str]:
    return [t["title"] for t in (await context_of(client))["todos"]]


async def two_todos_first_selected(client: Client) -> None:
    for title in ("Milk", "Eggs"):
        assert (await client.call_tool("create_todo", {"title": title})).is_error is False
    assert (await client.call_tool("select_todo", {"id": "todo-1"})).is_error is False


# -- MCP, both eras -------------------------------------------------------------------------------


@pytest.mark.parametrize("mode", MODES)
async def test_mcp_a_decline_with_a_message_reaches_the_agent(mode: str, tmp_path: Path) -> None:
    audit = tmp_path / "audit.jsonl"
    person = Person({"approve": False, "message": "Keep Milk; delete Eggs instead"})
    async with served(TODO, audit, "--mcp", "http", *TOKENS) as origin:
        async with mcp_client(origin, mode, person) as alice:
            await two_todos_first_selected(alice)
            result = await alice.call_tool("delete_todo", {})
            assert result.is_error is True
            assert "They said: 'Keep Milk; delete Eggs instead'." in text_of(result)
            assert await titles(alice) == ["Milk", "Eggs"]
    (entry,) = audited(audit, "delete_todo")
    assert (entry["decision"], entry["approval"]) == ("refused", "declined")


@pytest.mark.parametrize("mode", MODES)
async def test_mcp_an_approval_with_edited_input_is_asked_again_and_sent_once(
    mode: str, tmp_path: Path
) -> None:
    audit = tmp_path / "audit.jsonl"
    person = Person({"approve": True, "title": "!oat milk"}, {"approve": True})
    async with served(SHELF, audit, "--mcp", "http") as origin:
        async with mcp_client(origin, mode, person) as agent:
            result = await agent.call_tool("add_item", {"title": "!milk"})
            assert result.is_error is False, text_of(result)
            assert (await context_of(agent))["items"] == ["milk", "!oat milk"]
    first, second = person.asked
    assert first.requested_schema["properties"]["title"]["default"] == "!milk"
    assert "  Title: !oat milk" in second.message.splitlines()
    assert second.requested_schema["properties"]["title"]["default"] == "!oat milk"
    (entry,) = audited(audit, "add_item")
    assert (entry["decision"], entry["approval"], entry["approval_asks"]) == (
        "dispatched",
        "approved",
        2,
    )


@pytest.mark.parametrize("mode", MODES)
async def test_mcp_select_call_clear_approve_sends_nothing_and_is_stale(
    mode: str, tmp_path: Path
) -> None:
    audit = tmp_path / "audit.jsonl"
    async with served(TODO, audit, "--mcp", "http", *TOKENS) as origin:
        async with mcp_client(origin, mode, None, "carol-token") as carol:

            async def clear(_asked: int) -> None:
                assert (await carol.call_tool("clear_selection", {})).is_error is False

            person = Person({"approve": True}, before=clear)
            async with mcp_client(origin, mode, person) as alice:
                await two_todos_first_selected(alice)
                result = await alice.call_tool("delete_todo", {})
                assert result.is_error is True
                assert result.structured_content is not None
                assert result.structured_content["reason"] == "stale"
                assert await titles(alice) == ["Milk", "Eggs"]
    assert len(person.asked) == 1
    (entry,) = audited(audit, "delete_todo")
    assert (entry["decision"], entry["approval"]) == ("refused", "stale")


@pytest.mark.parametrize("mode", MODES)
async def test_mcp_a_changed_selection_asks_again_and_only_that_answer_deletes(
    mode: str, tmp_path: Path
) -> None:
    audit = tmp_path / "audit.jsonl"
    async with served(TODO, audit, "--mcp", "http", *TOKENS) as origin:
        async with mcp_client(origin, mode, None, "carol-token") as carol:

            async def select_eggs(asked: int) -> None:
                if asked == 1:
                    got = await carol.call_tool("select_todo", {"id": "todo-2"})
                    assert got.is_error is False

            person = Person({"approve": True}, {"approve": True}, before=select_eggs)
            async with mcp_client(origin, mode, person) as alice:
                await two_todos_first_selected(alice)
                result = await alice.call_tool("delete_todo", {})
                assert result.is_error is False, text_of(result)
                assert await titles(alice) == ["Milk"]
    first, second = (p.message.splitlines() for p in person.asked)
    assert first[1] == 'Delete the todo "Milk"'
    assert second[1] == "The application changed while you decided; this is the new preview."
    assert second[2] == 'Delete the todo "Eggs"'
    (entry,) = audited(audit, "delete_todo")
    assert (entry["approval"], entry["approval_asks"]) == ("approved", 2)


# -- A2A: the task waits in INPUT_REQUIRED ----------------------------------------------------


class A2ACaller:
    """One A2A caller with its own bearer token (the SDK client, non-streaming)."""

    def __init__(self, client: Any) -> None:
        self.client = client

    async def send(self, request: SendMessageRequest) -> Task:
        events = [ev async for ev in self.client.send_message(request)]
        tasks = [ev.task for ev in events if ev.HasField("task")]
        assert tasks, events
        return tasks[-1]

    async def skill(self, name: str, args: dict[str, Any] | None = None) -> Task:
        return await self.send(skill_request(name, {} if args is None else args))

    async def answer(self, task: Task, reply: dict[str, Any]) -> Task:
        msg = Message(
            role=Role.ROLE_USER,
            message_id=str(uuid.uuid4()),
            task_id=task.id,
            context_id=task.context_id,
            parts=[new_data_part(reply)],
            extensions=[EXTENSION_URI],
        )
        return await self.send(SendMessageRequest(message=msg))


@asynccontextmanager
async def a2a_caller(origin: str, token: str = "alice-token") -> AsyncIterator[A2ACaller]:
    async with httpx.AsyncClient(headers={"Authorization": f"Bearer {token}"}, timeout=30) as hc:
        card = await A2ACardResolver(hc, origin).get_agent_card()
        client = await create_client(
            card, client_config=ClientConfig(httpx_client=hc, streaming=False)
        )
        try:
            yield A2ACaller(client)
        finally:
            await client.close()


async def a2a_context(origin: str, token: str | None = None) -> dict[str, Any]:
    """The context, as the page shows it (to a person signed in with ``token``, if given)."""
    async with httpx.AsyncClient(base_url=origin, timeout=30) as hc:
        if token is not None:
            signed = await hc.post("/console/sign-in", json={"token": token})
            assert signed.status_code == 200, signed.text
        return (await hc.get("/agent/context")).json()["context"]


def status_text(task: Task) -> str:
    return next(p.text for p in task.status.message.parts if p.HasField("text"))


async def a2a_delete_waits(alice: A2ACaller) -> Task:
    for title in ("Milk", "Eggs"):
        done = await alice.skill("create_todo", {"title": title})
        assert done.status.state == TaskState.TASK_STATE_COMPLETED
    done = await alice.skill("select_todo", {"id": "todo-1"})
    assert done.status.state == TaskState.TASK_STATE_COMPLETED
    waiting = await alice.skill("delete_todo")
    assert waiting.status.state == TaskState.TASK_STATE_INPUT_REQUIRED
    return waiting


async def test_a2a_a_decline_with_a_message_reaches_the_agent(tmp_path: Path) -> None:
    audit = tmp_path / "audit.jsonl"
    async with served(TODO, audit, "--a2a", "--webmcp", *TOKENS) as origin:
        async with a2a_caller(origin) as alice:
            waiting = await a2a_delete_waits(alice)
            reply = {"approve": False, "message": "Keep Milk; delete Eggs instead"}
            done = await alice.answer(waiting, reply)
            assert done.status.state == TaskState.TASK_STATE_REJECTED
            assert "They said: 'Keep Milk; delete Eggs instead'." in status_text(done)
        todos = (await a2a_context(origin, "alice-token"))["todos"]
        assert [t["title"] for t in todos] == ["Milk", "Eggs"]
    (entry,) = audited(audit, "delete_todo")
    assert (entry["decision"], entry["approval"]) == ("refused", "declined")


async def test_a2a_an_approval_with_edited_input_is_asked_again_and_sent_once(
    tmp_path: Path,
) -> None:
    audit = tmp_path / "audit.jsonl"
    async with served(SHELF, audit, "--a2a", "--webmcp") as origin:
        async with a2a_caller(origin) as agent:
            waiting = await agent.skill("add_item", {"title": "!milk"})
            assert waiting.status.state == TaskState.TASK_STATE_INPUT_REQUIRED
            again = await agent.answer(waiting, {"approve": True, "input": {"title": "!oat milk"}})
            assert again.status.state == TaskState.TASK_STATE_INPUT_REQUIRED
            assert "  Title: !oat milk" in status_text(again).splitlines()
            assert (await a2a_context(origin))["items"] == ["milk"]  # nothing sent yet
            done = await agent.answer(again, {"approve": True})
            assert done.status.state == TaskState.TASK_STATE_COMPLETED
        assert (await a2a_context(origin))["items"] == ["milk", "!oat milk"]
    (entry,) = audited(audit, "add_item")
    assert (entry["approval"], entry["approval_asks"]) == ("approved", 2)


async def test_a2a_select_call_clear_approve_sends_nothing_and_is_stale(tmp_path: Path) -> None:
    audit = tmp_path / "audit.jsonl"
    async with served(TODO, audit, "--a2a", "--webmcp", *TOKENS) as origin:
        async with a2a_caller(origin) as alice, a2a_caller(origin, "carol-token") as carol:
            waiting = await a2a_delete_waits(alice)
            cleared = await carol.skill("clear_selection")
            assert cleared.status.state == TaskState.TASK_STATE_COMPLETED
            done = await alice.answer(waiting, {"approve": True})
            assert done.status.state == TaskState.TASK_STATE_REJECTED
            assert status_text(done).startswith(
                "Refused: The application changed while a person decided on 'delete_todo'"
            )
        todos = (await a2a_context(origin, "alice-token"))["todos"]
        assert [t["title"] for t in todos] == ["Milk", "Eggs"]
    (entry,) = audited(audit, "delete_todo")
    assert (entry["decision"], entry["approval"]) == ("refused", "stale")


async def test_a2a_a_changed_selection_asks_again_and_only_that_answer_deletes(
    tmp_path: Path,
) -> None:
    audit = tmp_path / "audit.jsonl"
    async with served(TODO, audit, "--a2a", "--webmcp", *TOKENS) as origin:
        async with a2a_caller(origin) as alice, a2a_caller(origin, "carol-token") as carol:
            waiting = await a2a_delete_waits(alice)
            chose = await carol.skill("select_todo", {"id": "todo-2"})
            assert chose.status.state == TaskState.TASK_STATE_COMPLETED
            again = await alice.answer(waiting, {"approve": True})
            assert again.status.state == TaskState.TASK_STATE_INPUT_REQUIRED
            lines = status_text(again).splitlines()
            assert lines[1:3] == [
                "The application changed while you decided; this is the new preview.",
                'Delete the todo "Eggs"',
            ]
            done = await alice.answer(again, {"approve": True})
            assert done.status.state == TaskState.TASK_STATE_COMPLETED
        todos = (await a2a_context(origin, "alice-token"))["todos"]
        assert [t["title"] for t in todos] == ["Milk"]
    (entry,) = audited(audit, "delete_todo")
    assert (entry["approval"], entry["approval_asks"]) == ("approved", 2)
