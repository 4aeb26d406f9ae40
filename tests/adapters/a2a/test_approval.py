"""Approval over A2A with the official a2a-sdk client: the task waits in INPUT_REQUIRED.

A follow-up on the same task with a data part ``{"approve": true|false}`` answers it; another
caller cannot; a task nobody answers is refused by the approval timeout (DESIGN §11).
"""

from __future__ import annotations

import uuid
from typing import Any

import anyio
import pytest
from a2a.helpers import new_data_part, new_text_part
from a2a.types import (
    CancelTaskRequest,
    GetTaskRequest,
    Message,
    Role,
    SendMessageRequest,
    Task,
    TaskState,
)
from google.protobuf.json_format import MessageToDict

from foldkit_agent.adapters.a2a import EXTENSION_URI, a2a_app
from tests.support.a2a_lab import BearerBackend, a2a_client, skill_request
from tests.support.approval_app import shelf

BASE = "http://testserver"
S = TaskState


async def send(client: Any, request: SendMessageRequest) -> Task:
    with anyio.fail_after(10):
        events = [event async for event in client.send_message(request)]
    (event,) = events
    return event.task


def answer(task: Task, parts: list[Any]) -> SendMessageRequest:
    """A follow-up on ``task`` carrying ``parts``."""
    msg = Message(
        role=Role.ROLE_USER,
        message_id=str(uuid.uuid4()),
        task_id=task.id,
        context_id=task.context_id,
        parts=parts,
        extensions=[EXTENSION_URI],
    )
    return SendMessageRequest(message=msg)


def asked(task: Task) -> tuple[str, dict[str, Any]]:
    parts = task.status.message.parts
    text = next(p.text for p in parts if p.HasField("text"))
    data = next(MessageToDict(p.data) for p in parts if p.HasField("data"))
    return text, data


async def test_the_task_asks_and_an_approval_on_the_same_task_sends_the_message() -> None:
    async with shelf("milk", "eggs") as (running, rt):
        app = a2a_app(rt, name="shelf", version="1", base_url=BASE, authentication=BearerBackend())
        async with a2a_client(app, "alice-tok") as alice:
            waiting = await send(alice, skill_request("remove_item", {"title": "milk"}))
            assert waiting.status.state == S.TASK_STATE_INPUT_REQUIRED
            text, data = asked(waiting)
            assert text.startswith("Approve remove_item?")
            assert 'Change: removes items.0 (was "milk")' in text
            assert data["approval"]["message"] == {"_tag": "RemovedItem", "title": "milk"}
            assert data["approval"]["preview"] == [{"op": "remove", "path": "/items/0"}]
            assert running.applied == 0
            done = await send(alice, answer(waiting, [new_data_part({"approve": True})]))
        assert done.id == waiting.id
        assert done.status.state == S.TASK_STATE_COMPLETED
        assert running.host.model().items == ("eggs",)
        entry = rt.audit.entries()[-1]
        assert (entry.transport, entry.approval, entry.approved_by) == ("a2a", "approved", "alice")


@pytest.mark.parametrize(
    "parts",
    [
        pytest.param([new_data_part({"approve": False})], id="approve-false"),
        pytest.param([new_text_part("yes please")], id="text-is-not-an-answer"),
        pytest.param([new_data_part({"approve": "true"})], id="a-string-is-not-true"),
        # Exactly one part, exactly {"approve": true}: a client showing one part of several
        # must never show "declined" while the server approves.
        pytest.param(
            [new_data_part({"approve": False}), new_data_part({"approve": True})],
            id="false-then-true",
        ),
        pytest.param(
            [new_data_part({"approve": True}), new_data_part({"approve": False})],
            id="true-then-false",
        ),
        pytest.param(
            [new_data_part({"approve": True}), new_text_part("no, do not")], id="true-and-a-no"
        ),
        pytest.param(
            [new_data_part({"approve": True}), new_data_part({"approve": True})], id="true-twice"
        ),
        pytest.param([new_data_part({"approve": True, "x": 1})], id="another-field"),
        pytest.param([new_data_part({"approve": 1})], id="one-is-not-true"),
    ],
)
async def test_anything_but_approve_true_declines_and_sends_nothing(parts: list[Any]) -> None:
    async with shelf("milk") as (running, rt):
        app = a2a_app(rt, name="shelf", version="1", base_url=BASE, authentication=BearerBackend())
        async with a2a_client(app, "alice-tok") as alice:
            waiting = await send(alice, skill_request("remove_item", {"title": "milk"}))
            done = await send(alice, answer(waiting, parts))
        assert done.status.state == S.TASK_STATE_REJECTED
        _text, data = asked(done)
        assert (data["_tag"], data["reason"]) == ("AgentApprovalError", "declined")
        assert running.applied == 0
        assert rt.audit.entries()[-1].approval == "declined"


async def test_another_caller_cannot_answer_or_see_the_waiting_task() -> None:
    async with shelf("milk") as (running, rt):
        app = a2a_app(rt, name="shelf", version="1", base_url=BASE, authentication=BearerBackend())
        async with a2a_client(app, "alice-tok") as alice, a2a_client(app, "bob-tok") as bob:
            waiting = await send(alice, skill_request("remove_item", {"title": "milk"}))
            with pytest.raises(Exception) as info:
                await send(bob, answer(waiting, [new_data_part({"approve": True})]))
            assert (
                "TaskNotFound" in type(info.value).__name__
                or "not found" in str(info.value).lower()
            )
            assert running.applied == 0
            still = await alice.get_task(GetTaskRequest(id=waiting.id))
            assert still.status.state == S.TASK_STATE_INPUT_REQUIRED
            done = await send(alice, answer(waiting, [new_data_part({"approve": True})]))
        assert done.status.state == S.TASK_STATE_COMPLETED
        assert running.applied == 1
        assert rt.audit.entries()[-1].approved_by == "alice"


async def test_a_task_nobody_answers_ends_rejected_by_the_timeout_with_nothing_sent() -> None:
    async with shelf("milk", approval_timeout=0.05) as (running, rt):
        app = a2a_app(rt, name="shelf", version="1", base_url=BASE, authentication=BearerBackend())
        async with a2a_client(app, "alice-tok") as alice:
            waiting = await send(alice, skill_request("remove_item", {"title": "milk"}))
            assert waiting.status.state == S.TASK_STATE_INPUT_REQUIRED
            executor = app.state.a2a_handler.agent_executor
            with anyio.fail_after(10):
                await executor.settled()
            ended = await alice.get_task(GetTaskRequest(id=waiting.id))
        assert ended.status.state == S.TASK_STATE_REJECTED
        _text, data = asked(ended)
        assert data["reason"] == "timeout"
        assert running.applied == 0
        assert rt.audit.entries()[-1].approval == "timeout"


async def test_cancelling_a_waiting_task_cancels_with_nothing_sent() -> None:
    async with shelf("milk") as (running, rt):
        app = a2a_app(rt, name="shelf", version="1", base_url=BASE, authentication=BearerBackend())
        async with a2a_client(app, "alice-tok") as alice:
            waiting = await send(alice, skill_request("remove_item", {"title": "milk"}))
            with anyio.fail_after(10):
                cancelled = await alice.cancel_task(CancelTaskRequest(id=waiting.id))
            assert cancelled.status.state == S.TASK_STATE_CANCELED
            assert running.applied == 0
            entry = rt.audit.entries()[-1]
            assert (entry.decision, entry.outcome) == ("refused", "AgentCancelledError")
            assert rt.pending() == 0


async def test_without_a_follow_up_nothing_is_sent_and_an_anonymous_caller_is_asked_too() -> None:
    async with shelf("milk") as (running, rt):
        app = a2a_app(rt, name="shelf", version="1", base_url=BASE)
        async with a2a_client(app, None) as anyone:
            waiting = await send(anyone, skill_request("remove_item", {"title": "milk"}))
            assert waiting.status.state == S.TASK_STATE_INPUT_REQUIRED
            assert running.applied == 0
            done = await send(anyone, answer(waiting, [new_data_part({"approve": True})]))
        assert done.status.state == S.TASK_STATE_COMPLETED
        assert rt.audit.entries()[-1].approved_by == "a2a caller"
