"""The A2A task store is bounded by default (count, per caller, age) and can be replaced."""

from __future__ import annotations

from typing import Any

import anyio
from a2a.server.context import ServerCallContext
from a2a.server.tasks import InMemoryTaskStore
from a2a.types import GetTaskRequest, Message, Role, Task, TaskState, TaskStatus

from foldkit_agent.adapters.a2a import BoundedTaskStore, a2a_app
from foldkit_agent.adapters.a2a.tasks import MAX_OWNER, tenant_owner
from foldkit_agent.edge.tenants import PATH_TENANT_KEY
from tests.support.a2a_lab import BASE, a2a_client, call_context, lab_runtime, skill_request


def _task(task_id: str, state: TaskState, request: str = "x") -> Task:
    task = Task(id=task_id, context_id="c", status=TaskStatus(state=state))
    task.history.append(
        Message(role=Role.ROLE_USER, message_id=f"m-{task_id}", parts=[{"text": request}])
    )
    return task


class _Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


async def test_past_its_count_the_store_evicts_finished_tasks_first() -> None:
    store = BoundedTaskStore(max_tasks=3)
    alice = call_context("alice")
    await store.save(_task("running", TaskState.TASK_STATE_WORKING), alice)
    for n in range(5):
        await store.save(_task(f"done-{n}", TaskState.TASK_STATE_COMPLETED), alice)
    assert len(store) == 3
    assert await store.get("running", alice) is not None  # older, but still running
    assert await store.get("done-0", alice) is None
    assert await store.get("done-4", alice) is not None
    assert store.evicted == 3


async def test_one_caller_past_its_share_evicts_only_its_own_tasks() -> None:
    store = BoundedTaskStore(max_tasks=100, max_per_caller=2)
    alice, bob = call_context("alice"), call_context("bob")
    await store.save(_task("bob-1", TaskState.TASK_STATE_COMPLETED), bob)
    for n in range(10):
        await store.save(_task(f"alice-{n}", TaskState.TASK_STATE_REJECTED), alice)
    assert len(store) == 3
    assert await store.get("bob-1", bob) is not None
    assert await store.get("alice-9", alice) is not None
    assert await store.get("alice-9", bob) is None  # scoped to its owner, as the SDK's store


async def test_a_task_not_updated_for_max_age_is_evicted() -> None:
    clock = _Clock()
    store = BoundedTaskStore(max_age=60, clock=clock)
    alice = call_context("alice")
    await store.save(_task("old", TaskState.TASK_STATE_INPUT_REQUIRED), alice)
    clock.now = 61
    await store.save(_task("new", TaskState.TASK_STATE_WORKING), alice)
    assert await store.get("old", alice) is None
    assert await store.get("new", alice) is not None
    assert len(store) == 1


async def test_a_finished_task_keeps_no_part_of_the_request() -> None:
    store = BoundedTaskStore()
    alice = call_context("alice")
    await store.save(_task("t", TaskState.TASK_STATE_WORKING, "x" * 1000), alice)
    running = await store.get("t", alice)
    assert running is not None
    assert running.history[0].parts[0].text == "x" * 1000
    await store.save(_task("t", TaskState.TASK_STATE_REJECTED, "x" * 1000), alice)
    finished = await store.get("t", alice)
    assert finished is not None
    assert [len(m.parts) for m in finished.history] == [0]
    assert finished.status.state == TaskState.TASK_STATE_REJECTED


async def test_after_many_large_refused_calls_the_store_holds_at_most_its_cap() -> None:
    store = BoundedTaskStore(max_tasks=10)
    big = {"by": "not a number", "code": "x" * 900_000}  # refused: `by` is not an integer
    async with lab_runtime() as (rt, _host, _running):
        app = a2a_app(rt, name="lab", version="1", base_url=BASE, task_store=store)
        assert app.state.a2a_task_store is store
        async with a2a_client(app) as client:
            last: Any = None
            for _ in range(30):
                with anyio.fail_after(10):
                    async for event in client.send_message(skill_request("added", big)):
                        last = event
            task = await client.get_task(GetTaskRequest(id=last.task.id))
    assert len(store) == 10
    assert store.evicted == 20
    assert task.status.state == TaskState.TASK_STATE_REJECTED
    assert all(not m.parts for m in task.history if m.role == Role.ROLE_USER)
    assert task.ByteSize() < 10_000  # the 900 kB input is not kept


class _CountingStore(InMemoryTaskStore):
    def __init__(self) -> None:
        super().__init__()
        self.saved: list[str] = []

    async def save(self, task: Task, context: ServerCallContext) -> None:
        self.saved.append(task.id)
        await super().save(task, context)


async def test_a_task_store_passed_in_is_the_one_used() -> None:
    store = _CountingStore()
    async with lab_runtime() as (rt, _host, running):
        app = a2a_app(rt, name="lab", version="1", base_url=BASE, task_store=store)
        async with a2a_client(app) as client:
            with anyio.fail_after(10):
                events = [e async for e in client.send_message(skill_request("added", {"by": 2}))]
            task = await client.get_task(GetTaskRequest(id=events[-1].task.id))
        assert running.host.model().total == 2
    assert task.status.state == TaskState.TASK_STATE_COMPLETED
    assert task.id in store.saved


def test_a_task_owner_is_its_caller_within_the_paths_tenant() -> None:
    outside = call_context("alice")
    assert tenant_owner(outside) == "alice"
    inside = call_context("alice")
    inside.state[PATH_TENANT_KEY] = "acme"
    assert tenant_owner(inside) == "4:acme/alice"
    # the length keeps (tenant "a/b", user "c") apart from (tenant "a", user "b/c")
    first, second = call_context("c"), call_context("b/c")
    first.state[PATH_TENANT_KEY], second.state[PATH_TENANT_KEY] = "a/b", "a"
    assert tenant_owner(first) != tenant_owner(second)
    long = call_context("u" * 300)
    long.state[PATH_TENANT_KEY] = "acme"
    owner = tenant_owner(long)
    assert owner.startswith("sha256:")
    assert len(owner) <= MAX_OWNER
