"""The todo example over A2A in-process, and reading what its tasks answered."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import anyio
from a2a.types import GetTaskRequest, StreamResponse, Task, TaskState
from google.protobuf.json_format import MessageToDict

from examples.todo import runtime as todo_runtime
from foldkit_agent import AgentRuntime
from foldkit_agent.adapters.a2a import a2a_app
from tests.support.a2a_lab import BearerBackend, skill_request

BASE = "http://testserver"
S = TaskState


@asynccontextmanager
async def todo_app(**kwargs: Any) -> AsyncIterator[tuple[Any, AgentRuntime[Any, Any]]]:
    async with todo_runtime() as rt:
        yield (
            a2a_app(
                rt,
                name="todo",
                version="1.2.3",
                base_url=BASE,
                authentication=BearerBackend(),
                **kwargs,
            ),
            rt,
        )


async def call(
    client: Any, skill: str | None, args: Any = None, **kw: Any
) -> tuple[Task, list[StreamResponse]]:
    """Send one skill call; return the final task (as GetTask sees it) and the events seen."""
    events: list[StreamResponse] = []
    with anyio.fail_after(10):
        async for ev in client.send_message(skill_request(skill, args, **kw)):
            events.append(ev)
        task_id = (
            events[0].task.id if events[0].HasField("task") else events[0].status_update.task_id
        )
        task = await client.get_task(GetTaskRequest(id=task_id))
    return task, events


def status_parts(task: Task) -> tuple[str, dict[str, Any]]:
    parts = task.status.message.parts
    text = next(p.text for p in parts if p.HasField("text"))
    data = next(MessageToDict(p.data) for p in parts if p.HasField("data"))
    return text, data


def artifact_data(task: Task) -> dict[str, Any]:
    (artifact,) = task.artifacts
    (part,) = artifact.parts
    return MessageToDict(part.data)
