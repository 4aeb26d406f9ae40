"""``SqlTaskStore``: the SDK's database task store, bounded like the in-memory one, keeping no
request input in a finished task, and never letting one owner's save take another's task."""

from __future__ import annotations

import pytest
from a2a.types import Message, Role, Task, TaskState, TaskStatus
from google.protobuf.timestamp_pb2 import Timestamp

from foldkit_agent.adapters.a2a import ForeignTaskError, SqlTaskStore
from tests.support.a2a_lab import call_context

ALICE = call_context("alice")
BOB = call_context("bob")


def _task(task_id: str, state: TaskState, *, ago: int = 0, request: str = "x") -> Task:
    now = Timestamp()
    now.GetCurrentTime()  # at the call: the store ages tasks against the wall clock
    at = Timestamp(seconds=now.seconds - ago)
    task = Task(id=task_id, context_id="c", status=TaskStatus(state=state, timestamp=at))
    task.history.append(
        Message(role=Role.ROLE_USER, message_id=f"m-{task_id}", parts=[{"text": request}])
    )
    return task


async def test_past_its_count_the_table_loses_its_oldest_finished_tasks_first(
    a2a_task_store: str,
) -> None:
    async with SqlTaskStore(a2a_task_store, max_tasks=3) as store:
        await store.save(_task("running", TaskState.TASK_STATE_WORKING, ago=100), ALICE)
        for n in range(5):
            await store.save(_task(f"done-{n}", TaskState.TASK_STATE_COMPLETED, ago=50 - n), ALICE)
        assert await store.get("running", ALICE) is not None  # the oldest, but still running
        assert [await store.get(f"done-{n}", ALICE) is not None for n in range(5)] == [
            False, False, False, True, True,
        ]  # fmt: skip
        assert store.evicted == 3


async def test_one_caller_past_its_share_loses_only_its_own_tasks(a2a_task_store: str) -> None:
    async with SqlTaskStore(a2a_task_store, max_per_caller=2) as store:
        await store.save(_task("bob-1", TaskState.TASK_STATE_COMPLETED, ago=100), BOB)
        for n in range(6):
            await store.save(_task(f"alice-{n}", TaskState.TASK_STATE_REJECTED, ago=50 - n), ALICE)
        assert await store.get("bob-1", BOB) is not None
        assert await store.get("alice-5", ALICE) is not None
        assert await store.get("alice-3", ALICE) is None
        assert await store.get("alice-5", BOB) is None  # scoped to its owner


async def test_a_task_not_updated_for_max_age_is_deleted(a2a_task_store: str) -> None:
    async with SqlTaskStore(a2a_task_store, max_age=60) as store:
        await store.save(_task("old", TaskState.TASK_STATE_INPUT_REQUIRED, ago=120), ALICE)
        await store.save(_task("new", TaskState.TASK_STATE_WORKING), ALICE)
        assert await store.get("old", ALICE) is None
        assert await store.get("new", ALICE) is not None


async def test_a_finished_task_is_stored_without_the_request(a2a_task_store: str) -> None:
    async with SqlTaskStore(a2a_task_store) as store:
        await store.save(_task("t", TaskState.TASK_STATE_WORKING, request="x" * 1000), ALICE)
        running = await store.get("t", ALICE)
        assert running is not None
        assert running.history[0].parts[0].text == "x" * 1000
        await store.save(_task("t", TaskState.TASK_STATE_COMPLETED, request="x" * 1000), ALICE)
        finished = await store.get("t", ALICE)
        assert finished is not None
        assert [len(m.parts) for m in finished.history] == [0]
        assert finished.status.state == TaskState.TASK_STATE_COMPLETED


async def test_a_save_of_another_owners_task_id_is_refused_and_changes_nothing(
    a2a_task_store: str,
) -> None:
    async with SqlTaskStore(a2a_task_store) as store:
        await store.save(_task("t", TaskState.TASK_STATE_WORKING), ALICE)
        with pytest.raises(ForeignTaskError):
            await store.save(_task("t", TaskState.TASK_STATE_CANCELED), BOB)
        kept = await store.get("t", ALICE)
        assert kept is not None
        assert kept.status.state == TaskState.TASK_STATE_WORKING
        assert await store.get("t", BOB) is None


def test_a_spec_it_cannot_read_is_refused_with_the_forms_it_takes() -> None:
    with pytest.raises(ValueError, match=r"sqlite:PATH .* postgres:DSN"):
        SqlTaskStore("redis://x")
