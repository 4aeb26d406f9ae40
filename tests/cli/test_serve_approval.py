"""Approval of the todo example's ``delete_todo`` on a real ``foldkit-agent serve`` (issue 17).

``delete_todo`` is ``confirm=True``. Over MCP the official client's elicitation callback is
the person (approve, decline, cancel, and a client that declared no callback at all); over
A2A the task waits in ``INPUT_REQUIRED`` for the SDK client's follow-up, which no other
caller can give. Every answer is checked against the Model afterwards, through the
application's own context.
"""

from __future__ import annotations

import json
import uuid
from contextlib import AbstractAsyncContextManager
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


def served(*args: str) -> AbstractAsyncContextManager[str]:
    """``foldkit-agent serve examples.todo:runtime ARGS`` on a free port; yields its origin."""
    return serve_process("examples.todo:runtime", *args)


TOKENS = ("--token", "alice-token=alice;todos:delete", "--token", "carol-token=carol;todos:delete")
MODES = ["legacy", "auto"]  # the handshake era, and 2026-07-28 (InputRequiredResult)


class Person:
    """The elicitation callback: the person at the MCP client, answering ``reply``."""

    def __init__(self, reply: types.ElicitResult) -> None:
        self.reply = reply
        self.asked: list[str] = []

    async def __call__(self, _context: Any, params: Any) -> types.ElicitResult:
        assert isinstance(params, types.ElicitRequestFormParams)
        self.asked.append(params.message)
        return self.reply


def mcp_client(origin: str, token: str, mode: str, person: Person | None) -> Client:
    http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"}, timeout=30)
    transport = streamable_http_client(f"{origin}/mcp", http_client=http)
    if person is None:
        return Client(transport, mode=mode)
    return Client(transport, mode=mode, elicitation_callback=person)


async def titles(client: Client) -> list[str]:
    """The todo titles, as the application's context resource shows them now."""
    contents = (await client.read_resource("agent://context")).contents[0]
    return [t["title"] for t in json.loads(getattr(contents, "text", "{}"))["todos"]]


async def two_todos_first_selected(client: Client) -> None:
    for title in ("Milk", "Eggs"):
        assert (await client.call_tool("create_todo", {"title": title})).is_error is False
    assert (await client.call_tool("select_todo", {"id": "todo-1"})).is_error is False


@pytest.mark.parametrize("mode", MODES)
async def test_mcp_an_approved_elicitation_deletes_what_it_previewed(mode: str) -> None:
    person = Person(types.ElicitResult(action="accept", content={"approve": True}))
    async with served("--mcp", "http", *TOKENS) as origin:
        async with mcp_client(origin, "alice-token", mode, person) as alice:
            await two_todos_first_selected(alice)
            result = await alice.call_tool("delete_todo", {})
            assert result.is_error is False, result
            assert await titles(alice) == ["Eggs"]
    (shown,) = person.asked
    assert shown.splitlines()[0] == 'Approve "Delete selected todo" (delete_todo)?'
    assert shown.splitlines()[1] == 'Delete the todo "Milk"'  # its describe= sentence
    assert "_tag" not in shown
    change = next(line for line in shown.splitlines() if line.startswith("Change: "))
    assert "removes todos.0" in change
    assert '"title": "Milk"' in change


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize(
    "reply",
    [
        types.ElicitResult(action="accept", content={"approve": False}),
        types.ElicitResult(action="decline"),
        types.ElicitResult(action="cancel"),
    ],
    ids=["approve-false", "decline", "cancel"],
)
async def test_mcp_a_decline_or_cancel_deletes_nothing(
    mode: str, reply: types.ElicitResult
) -> None:
    person = Person(reply)
    async with served("--mcp", "http", *TOKENS) as origin:
        async with mcp_client(origin, "alice-token", mode, person) as alice:
            await two_todos_first_selected(alice)
            result = await alice.call_tool("delete_todo", {})
            assert result.is_error is True
            assert result.structured_content is not None
            assert result.structured_content["_tag"] == "AgentApprovalError"
            assert result.structured_content["reason"] == "declined"
            assert await titles(alice) == ["Milk", "Eggs"]
    assert len(person.asked) == 1


@pytest.mark.parametrize("mode", MODES)
async def test_mcp_a_client_that_cannot_elicit_is_told_no_person_can_be_asked(mode: str) -> None:
    async with served("--mcp", "http", *TOKENS) as origin:
        async with mcp_client(origin, "alice-token", mode, None) as alice:
            await two_todos_first_selected(alice)
            result = await alice.call_tool("delete_todo", {})
            assert result.is_error is True
            assert result.structured_content is not None
            assert result.structured_content["reason"] == "unavailable"
            text = result.content[0]
            assert isinstance(text, types.TextContent)
            assert "cannot ask" in text.text
            assert "nothing was sent" in text.text
            assert await titles(alice) == ["Milk", "Eggs"]


# -- A2A: INPUT_REQUIRED, with the official SDK client ------------------------------------------


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

    async def answer(self, task: Task, approve: bool) -> Task:
        msg = Message(
            role=Role.ROLE_USER,
            message_id=str(uuid.uuid4()),
            task_id=task.id,
            context_id=task.context_id,
            parts=[new_data_part({"approve": approve})],
            extensions=[EXTENSION_URI],
        )
        return await self.send(SendMessageRequest(message=msg))


class A2ASession:
    def __init__(self, origin: str) -> None:
        self.origin = origin
        self._open: list[tuple[httpx.AsyncClient, Any]] = []

    async def caller(self, token: str) -> A2ACaller:
        hc = httpx.AsyncClient(headers={"Authorization": f"Bearer {token}"}, timeout=30)
        card = await A2ACardResolver(hc, self.origin).get_agent_card()
        client = await create_client(
            card, client_config=ClientConfig(httpx_client=hc, streaming=False)
        )
        self._open.append((hc, client))
        return A2ACaller(client)

    async def titles(self) -> list[str]:
        """The todos, as the page's signed-in person reads them."""
        async with httpx.AsyncClient(base_url=self.origin, timeout=30) as hc:
            signed = await hc.post("/console/sign-in", json={"token": "alice-token"})
            assert signed.status_code == 200, signed.text
            context = (await hc.get("/agent/context")).json()["context"]
        return [t["title"] for t in context["todos"]]

    async def close(self) -> None:
        for hc, client in self._open:
            await client.close()
            await hc.aclose()


async def a2a_todos_with_first_selected(alice: A2ACaller) -> Task:
    """Two todos, the first selected, and ``delete_todo`` asked: the task that waits."""
    for title in ("Milk", "Eggs"):
        done = await alice.skill("create_todo", {"title": title})
        assert done.status.state == TaskState.TASK_STATE_COMPLETED
    done = await alice.skill("select_todo", {"id": "todo-1"})
    assert done.status.state == TaskState.TASK_STATE_COMPLETED
    waiting = await alice.skill("delete_todo")
    assert waiting.status.state == TaskState.TASK_STATE_INPUT_REQUIRED
    text = next(p.text for p in waiting.status.message.parts if p.HasField("text"))
    assert text.splitlines()[0] == 'Approve "Delete selected todo" (delete_todo)?'
    assert "removes todos.0" in text
    return waiting


@pytest.mark.parametrize(
    ("approve", "state", "left"),
    [
        (True, TaskState.TASK_STATE_COMPLETED, ["Eggs"]),
        (False, TaskState.TASK_STATE_REJECTED, ["Milk", "Eggs"]),
    ],
    ids=["approve", "decline"],
)
async def test_a2a_the_task_waits_in_input_required_for_the_callers_answer(
    approve: bool, state: TaskState, left: list[str]
) -> None:
    async with served("--a2a", "--webmcp", *TOKENS) as origin:
        session = A2ASession(origin)
        try:
            alice = await session.caller("alice-token")
            waiting = await a2a_todos_with_first_selected(alice)
            assert await session.titles() == ["Milk", "Eggs"]  # nothing sent while it waits
            done = await alice.answer(waiting, approve)
            assert done.status.state == state
            assert await session.titles() == left
        finally:
            await session.close()


async def test_a2a_another_caller_cannot_answer_the_waiting_task() -> None:
    async with served("--a2a", "--webmcp", *TOKENS) as origin:
        session = A2ASession(origin)
        try:
            alice = await session.caller("alice-token")
            carol = await session.caller("carol-token")  # may delete todos too, but not answer
            waiting = await a2a_todos_with_first_selected(alice)
            with pytest.raises(Exception) as info:
                await carol.answer(waiting, True)
            assert (
                "TaskNotFound" in type(info.value).__name__
                or "not found" in str(info.value).lower()
            )
            assert await session.titles() == ["Milk", "Eggs"]
            done = await alice.answer(waiting, True)
            assert done.status.state == TaskState.TASK_STATE_COMPLETED
            assert await session.titles() == ["Eggs"]
        finally:
            await session.close()
