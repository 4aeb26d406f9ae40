"""One capability per A2A task, through the official a2a-sdk client in-process: one call per
outcome kind, streaming and non-streaming, integers from doubles, extra fields, the principal
from the transport and cancellation.
"""

from __future__ import annotations

import asyncio
import uuid
from typing import Any

import anyio
import httpx
import pytest
from a2a.helpers import new_data_part
from a2a.types import (
    CancelTaskRequest,
    GetTaskRequest,
    Role,
    SendMessageConfiguration,
    SendMessageRequest,
)
from a2a.types import Message as A2AMessage
from google.protobuf.json_format import MessageToDict

from examples.todo import runtime as todo_runtime
from foldkit_agent import AgentRuntime
from foldkit_agent.adapters.a2a import (
    CARD_PATH,
    EXTENSION_URI,
    JSONRPC_PATH,
    a2a_app,
)
from tests.support.a2a_lab import (
    LabWaitAgent,
    a2a_client,
    lab_runtime,
    skill_request,
)
from tests.support.a2a_todo import BASE, S, artifact_data, call, status_parts, todo_app

# ---------------------------------------------------------------------------------------------
# outcomes (F03)

GET_TASK = {"jsonrpc": "2.0", "id": 1, "method": "GetTask", "params": {"id": "t"}}


@pytest.mark.parametrize("streaming", [False, True])
async def test_success_completes_with_a_data_artifact(streaming: bool) -> None:
    async with todo_app() as (app, rt):
        async with a2a_client(app, "bob-tok", streaming=streaming) as client:
            task, events = await call(client, "create_todo", {"title": "Read the guide"})
        assert task.status.state == S.TASK_STATE_COMPLETED
        data = artifact_data(task)
        assert data["status"] == "completed"
        assert data["capability"] == "create_todo"
        assert data["invocation_id"] == task.id
        assert data["result"]["_tag"] == "SavedTodo"
        assert [t["title"] for t in rt.context()["todos"]] == ["Read the guide"]  # type: ignore[index]
        assert rt.audit is not None
        (entry,) = rt.audit.entries()
        assert (entry.transport, entry.capability, entry.decision) == (
            "a2a",
            "create_todo",
            "dispatched",
        )
    if streaming:
        kinds = [ev.WhichOneof("payload") for ev in events]
        assert kinds[0] == "task"
        assert "artifact_update" in kinds
        assert events[-1].status_update.status.state == S.TASK_STATE_COMPLETED
    else:
        assert len(events) == 1
        assert events[0].task.status.state == S.TASK_STATE_COMPLETED


async def test_skill_named_in_message_metadata_also_works() -> None:
    async with todo_app() as (app, _rt):
        async with a2a_client(app) as client:
            task, _ = await call(client, "create_todo", {"title": "Tea"}, where="message")
    assert task.status.state == S.TASK_STATE_COMPLETED


@pytest.mark.parametrize("streaming", [False, True])
async def test_unavailable_is_rejected_with_the_error_json(streaming: bool) -> None:
    async with todo_app() as (app, rt):
        async with a2a_client(app, "alice-tok", streaming=streaming) as client:
            task, events = await call(client, "delete_todo", {})
        assert task.status.state == S.TASK_STATE_REJECTED
        text, data = status_parts(task)
        assert "not available" in text
        assert data["_tag"] == "AgentCapabilityUnavailableError"
        assert data["capability"] == "delete_todo"
        assert data["status"] == "refused"
        assert not task.artifacts
        assert rt.audit is not None
        assert rt.audit.entries()[-1].decision == "refused"
    last = events[-1]
    state = last.task.status.state if last.HasField("task") else last.status_update.status.state
    assert state == S.TASK_STATE_REJECTED


async def test_invalid_input_and_extra_fields_are_rejected_and_nothing_is_dispatched() -> None:
    """F04: extra keys, top level and nested, are refused naming them and the accepted ones."""
    async with todo_app() as (app, rt):
        async with a2a_client(app) as client:
            extra, _ = await call(client, "create_todo", {"title": "Milk", "line_range": [1, 2]})
            wrong, _ = await call(client, "create_todo", {"title": 5})
            missing, _ = await call(client, "create_todo", {})
        async with lab_runtime() as (lab, _b, _r):
            lab_app = a2a_app(lab, name="lab", version="1", base_url=BASE)
            async with a2a_client(lab_app) as client:
                nested, _ = await call(
                    client, "added", {"by": 1, "items": [{"qty": 1, "colour": "red"}]}
                )
            assert lab.context() is None
            assert lab.audit is not None
            assert [e.decision for e in lab.audit.entries()] == ["refused"]
        for task in (extra, wrong, missing, nested):
            assert task.status.state == S.TASK_STATE_REJECTED
            _text, data = status_parts(task)
            assert data["_tag"] == "AgentInvalidInputError"
        text, data = status_parts(extra)
        assert "line_range" in text
        assert data["issues"] == [{"path": "line_range", "problem": "unexpected field"}]
        assert data["accepted"] == ["title"]
        _text, data = status_parts(nested)
        assert data["issues"][0]["path"] == "items.0.colour"
        assert rt.context()["todos"] == []  # type: ignore[index]


async def test_unauthenticated_and_unauthorized_calls_are_rejected() -> None:
    """F18: the principal comes from the transport; no credentials means no principal."""
    async with todo_app() as (app, rt):
        await rt.messages.dispatch("create_todo", {"title": "Milk"})
        await rt.messages.dispatch("select_todo", {"id": "todo-1"})
        async with a2a_client(app) as anonymous, a2a_client(app, "bob-tok") as bob:
            nobody, _ = await call(anonymous, "delete_todo", {})
            forged, _ = await call(anonymous, "delete_todo", {"principal": "alice"})
            denied, _ = await call(bob, "delete_todo", {})
        for task in (nobody, denied):
            assert task.status.state == S.TASK_STATE_REJECTED
            assert status_parts(task)[1]["_tag"] == "AgentAuthorizationError"
        assert "sign in" in status_parts(nobody)[0]
        assert "bob may not delete" in status_parts(denied)[0]
        assert status_parts(forged)[1]["_tag"] == "AgentInvalidInputError"
        assert len(rt.context()["todos"]) == 1  # type: ignore[index]
        async with a2a_client(app, "alice-tok") as alice:
            waiting, _ = await call(alice, "delete_todo", {})
            # delete_todo is confirm=True: alice's task asks her, and her answer sends it
            assert waiting.status.state == S.TASK_STATE_INPUT_REQUIRED
            assert len(rt.context()["todos"]) == 1  # type: ignore[index]
            answer = A2AMessage(
                role=Role.ROLE_USER,
                message_id=str(uuid.uuid4()),
                task_id=waiting.id,
                context_id=waiting.context_id,
                parts=[new_data_part({"approve": True})],
                extensions=[EXTENSION_URI],
            )
            with anyio.fail_after(10):
                async for _ev in alice.send_message(SendMessageRequest(message=answer)):
                    pass
                done = await alice.get_task(GetTaskRequest(id=waiting.id))
        assert done.status.state == S.TASK_STATE_COMPLETED
        assert rt.context()["todos"] == []  # type: ignore[index]


async def test_a_bad_token_gets_a_generic_401() -> None:
    async with todo_app() as (app, _rt):
        async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url=BASE) as hc:
            forged = {"Authorization": "Bearer forged-tok"}
            r = await hc.post(JSONRPC_PATH, json=GET_TASK, headers=forged)
    assert r.status_code == 401
    assert "forged" not in r.text


@pytest.mark.parametrize("streaming", [False, True])
async def test_completion_failure_is_failed(streaming: bool) -> None:
    async with todo_app() as (app, _rt):
        async with a2a_client(app, streaming=streaming) as client:
            first, _ = await call(client, "create_todo", {"title": "Milk"})
            dup, _ = await call(client, "create_todo", {"title": "milk"})
    assert first.status.state == S.TASK_STATE_COMPLETED
    assert dup.status.state == S.TASK_STATE_FAILED
    text, data = status_parts(dup)
    assert "FailedToSaveTodo" in text
    assert data["status"] == "failed"
    assert data["result"]["_tag"] == "FailedToSaveTodo"


@pytest.mark.parametrize("streaming", [False, True])
async def test_timeout_is_failed_and_says_the_outcome_is_unknown(streaming: bool) -> None:
    """F14 over A2A: a FAILED task whose text says unknown, not failed."""
    async with lab_runtime() as (lab, _b, _r):
        app = a2a_app(lab, name="lab", version="1", base_url=BASE)
        async with a2a_client(app, streaming=streaming) as client:
            task, _ = await call(client, "wait_quick", {})
        assert task.status.state == S.TASK_STATE_FAILED
        text, data = status_parts(task)
        assert "outcome is unknown" in text
        assert data["_tag"] == "AgentCompletionTimeoutError"
        assert data["status"] == "unknown"
        assert lab.pending() == 0


@pytest.mark.parametrize("streaming", [False, True])
async def test_a_defect_is_failed_with_a_generic_message(streaming: bool) -> None:
    async with lab_runtime() as (lab, breakable, _r):
        app = a2a_app(lab, name="lab", version="1", base_url=BASE)
        async with a2a_client(app, streaming=streaming) as client:
            breakable.broken = True
            task, events = await call(client, "added", {"by": 1})
    assert task.status.state == S.TASK_STATE_FAILED
    text, data = status_parts(task)
    assert data["status"] == "defect"
    assert "unexpectedly" in text
    wire = str([MessageToDict(e) for e in events]) + str(MessageToDict(task))
    assert "secret-detail" not in wire
    assert "RuntimeError" not in wire
    assert "/srv/app" not in wire


async def test_a_card_resolver_that_raises_is_a_generic_503() -> None:
    def resolve(_ctx: Any) -> AgentRuntime[Any, Any]:
        raise RuntimeError("tenant db password=hunter2")

    app = a2a_app(resolve, name="todo", version="1", base_url=BASE)
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url=BASE) as hc:
        r = await hc.get(CARD_PATH)
    assert r.status_code == 503
    assert "hunter2" not in r.text


async def test_concurrent_calls_each_dispatch_once() -> None:
    """F23 over A2A: 10 concurrent calls apply exactly 10 Messages."""
    async with lab_runtime() as (lab, _b, running):
        app = a2a_app(lab, name="lab", version="1", base_url=BASE)
        async with a2a_client(app) as client:
            states: list[int] = []

            async def one() -> None:
                task, _ = await call(client, "added", {"by": 1})
                states.append(task.status.state)

            async with anyio.create_task_group() as tg:
                for _ in range(10):
                    tg.start_soon(one)
        await running.settled()
        assert states == [S.TASK_STATE_COMPLETED] * 10
        assert running.host.model().total == 10


async def test_a_resolver_that_raises_is_a_generic_failure() -> None:
    async with todo_runtime() as rt:
        calls = 0

        def resolve(_ctx: Any) -> AgentRuntime[Any, Any]:
            nonlocal calls
            calls += 1
            if calls > 1:  # the card resolves once; the call breaks
                raise RuntimeError("tenant db password=hunter2")
            return rt

        app = a2a_app(resolve, name="todo", version="1", base_url=BASE)
        async with a2a_client(app) as client:
            task, _ = await call(client, "create_todo", {"title": "x"})
    assert task.status.state == S.TASK_STATE_FAILED
    assert "hunter2" not in str(MessageToDict(task))


# ---------------------------------------------------------------------------------------------
# numbers


async def test_integers_arrive_as_doubles_and_are_restored_where_the_schema_says_integer() -> None:
    async with lab_runtime() as (lab, _b, running):
        app = a2a_app(lab, name="lab", version="1", base_url=BASE)
        async with a2a_client(app) as client:
            task, _ = await call(
                client,
                "added",
                {"by": 2, "factor": 2, "sizes": [1, 2], "items": [{"qty": 3}], "code": "7"},
            )
            half, _ = await call(client, "added", {"by": 2.5})
            text, _ = await call(client, "added", {"by": "2"})
        assert task.status.state == S.TASK_STATE_COMPLETED
        await running.settled()
        model = running.host.model()
        assert model.total == 2
        assert model.last == {
            "_tag": "Added",
            "by": 2,
            "factor": 2.0,
            "sizes": [1, 2],
            "items": [{"qty": 3, "label": ""}],
            "code": "7",
        }
        for refused in (half, text):
            assert refused.status.state == S.TASK_STATE_REJECTED
            assert status_parts(refused)[1]["issues"][0]["path"] == "by"


# ---------------------------------------------------------------------------------------------
# cancellation (F15)


async def test_cancel_task_aborts_the_waiting_invocation() -> None:
    async with lab_runtime(LabWaitAgent) as (lab, _b, running):
        seen = asyncio.Event()
        running.host.observe(lambda m: seen.set() if type(m).__name__ == "Waited" else None)
        app = a2a_app(lab, name="lab", version="1", base_url=BASE)
        async with a2a_client(app) as client:
            req = skill_request("wait_long", {})
            req.configuration.CopyFrom(SendMessageConfiguration(return_immediately=True))
            with anyio.fail_after(10):
                events = [ev async for ev in client.send_message(req)]
                task_id = events[0].task.id
                await seen.wait()  # the Message was dispatched; the call now waits for completion
                assert lab.pending() == 1
                cancelled = await client.cancel_task(CancelTaskRequest(id=task_id))
                final = await client.get_task(GetTaskRequest(id=task_id))
        assert cancelled.status.state == S.TASK_STATE_CANCELED
        assert final.status.state == S.TASK_STATE_CANCELED
        text, data = status_parts(final)
        assert data["_tag"] == "AgentCancelledError"
        assert data["dispatched"] is True
        assert "nothing was rolled back" in text
        assert lab.pending() == 0
        assert lab.audit is not None
        (entry,) = lab.audit.entries()
        assert entry.decision == "unknown"
