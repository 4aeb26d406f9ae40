"""``serve --a2a --a2a-task-store``: A2A tasks in SQLite or PostgreSQL outlive the server.

A call answered before a ``kill -9`` is found by ``GetTask`` on the restarted server, in its
terminal state with its artifact, without the request's input; another caller's token never
reads it, before or after the restart.
"""

from __future__ import annotations

import contextlib
from typing import Any

import anyio
import pytest
from a2a.types import CancelTaskRequest, GetTaskRequest, ListTasksRequest, Role, TaskState
from a2a.utils.errors import TaskNotFoundError
from google.protobuf.json_format import MessageToDict
from typer.testing import CliRunner

from foldkit_agent.cli import app
from tests.support.a2a_lab import skill_request
from tests.support.serving import a2a_client, serving

TOKENS = ("--token", "alice-token=alice", "--token", "bob-token=bob")


async def last_task(client: Any, request: Any) -> Any:
    events = [event async for event in client.send_message(request)]
    tasks = [event.task for event in events if event.HasField("task")]
    assert tasks, events
    return tasks[-1]


async def test_a_finished_task_outlives_kill_9_and_stays_its_callers(a2a_task_store: str) -> None:
    args = ("--a2a", *TOKENS, "--a2a-task-store", a2a_task_store)
    async with serving(*args) as server:
        async with a2a_client(server.origin, "alice-token") as alice:
            done = await last_task(alice, skill_request("create_todo", {"title": "Milk"}))
            assert done.status.state == TaskState.TASK_STATE_COMPLETED
        async with a2a_client(server.origin, "bob-token") as bob:
            with pytest.raises(TaskNotFoundError):
                await bob.get_task(GetTaskRequest(id=done.id))
        await server.kill()
    async with serving(*args) as server:
        async with a2a_client(server.origin, "alice-token") as alice:
            found = await alice.get_task(GetTaskRequest(id=done.id))
            assert found.status.state == TaskState.TASK_STATE_COMPLETED
            assert [MessageToDict(a) for a in found.artifacts] == [
                MessageToDict(a) for a in done.artifacts
            ]
            assert found.artifacts[0].name == "result"
            asked = [m for m in found.history if m.role == Role.ROLE_USER]
            assert asked
            assert all(not m.parts for m in asked)  # the input is not kept
            listed = await alice.list_tasks(ListTasksRequest())
            assert [t.id for t in listed.tasks] == [done.id]
        async with a2a_client(server.origin, "bob-token") as bob:
            with pytest.raises(TaskNotFoundError):
                await bob.get_task(GetTaskRequest(id=done.id))
            assert list((await bob.list_tasks(ListTasksRequest())).tasks) == []


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (["--mcp", "http", "--a2a-task-store", "sqlite:t.db"], "keeps A2A tasks: add --a2a"),
        (["--a2a", "--a2a-task-store", "mysql:x"], "an A2A task store is sqlite:PATH"),
        (["--a2a", "--a2a-task-store", "sqlite::memory:"], "needs a file"),
        (
            ["--a2a", "--a2a-task-store", "postgres:host=/nonexistent dbname=tasks"],
            "--a2a-task-store: cannot open the PostgreSQL database",
        ),
    ],
)
def test_a_wrong_task_store_is_one_clear_line(args: list[str], said: str) -> None:
    result = CliRunner().invoke(app, ["serve", "examples.todo:runtime", *args])
    assert result.exit_code == 2
    assert said in result.output


async def test_f21_cancelling_a_task_left_working_by_kill_9_says_its_outcome_is_unknown(
    a2a_task_store: str,
) -> None:
    args = ("--a2a", *TOKENS, "--a2a-task-store", a2a_task_store)
    drain = "tests.support.drain_app:runtime"
    async with serving(*args, target=drain) as server:
        async with (
            a2a_client(server.origin, "alice-token") as alice,
            anyio.create_task_group() as tg,
        ):

            async def hold() -> None:
                with contextlib.suppress(Exception):  # its server is killed under it
                    await last_task(alice, skill_request("hold", {}))

            tg.start_soon(hold)
            task_id = (await server.line("holding ")).split()[-1]  # the task id
            with anyio.fail_after(30):  # its WORKING status is in the table
                while True:
                    with contextlib.suppress(TaskNotFoundError):
                        found = await alice.get_task(GetTaskRequest(id=task_id))
                        if found.status.state == TaskState.TASK_STATE_WORKING:
                            break
                    await anyio.sleep(0.05)
            await server.kill()
    async with serving(*args, target=drain) as server:
        async with a2a_client(server.origin, "alice-token") as alice:
            left = await alice.get_task(GetTaskRequest(id=task_id))
            assert left.status.state == TaskState.TASK_STATE_WORKING  # nobody runs it now
            cancelled = await alice.cancel_task(CancelTaskRequest(id=task_id))
            assert cancelled.status.state == TaskState.TASK_STATE_CANCELED
            text = next(p.text for p in cancelled.status.message.parts if p.HasField("text"))
            assert "the server that ran it stopped" in text
            assert "whether its Message was sent is unknown" in text
            stored = await alice.get_task(GetTaskRequest(id=task_id))
            assert stored.status.state == TaskState.TASK_STATE_CANCELED
            asked = [m for m in stored.history if m.role == Role.ROLE_USER]
            assert asked
            assert all(not m.parts for m in asked)  # the input is not kept
