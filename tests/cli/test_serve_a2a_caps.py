"""Per-caller caps on calls in flight and on calls parked for approval, as A2A callers meet
them on a real ``foldkit-agent serve`` with two bearer tokens and the official ``a2a-sdk``
client.

Calls in flight: ``tests.support.drain_app``'s ``hold`` is applied at once (``holding <id>`` on
standard error) and completes when the process gets SIGUSR1. Parked approvals: the todo
example's ``delete_todo`` is ``confirm=True``, so each call waits in ``INPUT_REQUIRED``.
"""

from __future__ import annotations

import asyncio
import json
import signal
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack, asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import httpx
from a2a.client import A2ACardResolver, ClientConfig, create_client
from a2a.types import CancelTaskRequest, Task, TaskState

from tests.support.a2a_lab import skill_request
from tests.support.serving import Lines, serve_process

TOKENS = ("--token", "alice-token=alice;todos:delete", "--token", "bob-token=bob;todos:delete")


class Caller:
    """One A2A caller with its own bearer token (the SDK client, non-streaming, blocking)."""

    def __init__(self, client: Any) -> None:
        self.client = client

    async def skill(self, name: str, args: dict[str, Any] | None = None) -> Task:
        request = skill_request(name, {} if args is None else args)
        events = [ev async for ev in self.client.send_message(request)]
        tasks = [ev.task for ev in events if ev.HasField("task")]
        assert tasks, events
        return tasks[-1]

    async def cancel(self, task: Task) -> Task:
        return await self.client.cancel_task(CancelTaskRequest(id=task.id))


@asynccontextmanager
async def callers(origin: str, *tokens: str) -> AsyncIterator[list[Caller]]:
    async with AsyncExitStack() as stack:
        made: list[Caller] = []
        for token in tokens:
            hc = httpx.AsyncClient(headers={"Authorization": f"Bearer {token}"}, timeout=60)
            await stack.enter_async_context(hc)
            card = await A2ACardResolver(hc, origin).get_agent_card()
            config = ClientConfig(httpx_client=hc, streaming=False)
            client = await create_client(card, client_config=config)
            stack.push_async_callback(client.close)
            made.append(Caller(client))
        yield made


def status_text(task: Task) -> str:
    return next(p.text for p in task.status.message.parts if p.HasField("text"))


def audit_entries(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


async def test_an_a2a_caller_at_its_cap_of_calls_in_flight_is_rejected_naming_it_audited_as_itself(
    tmp_path: Path,
) -> None:
    audit = tmp_path / "audit.jsonl"
    errors = Lines()
    procs: list[asyncio.subprocess.Process] = []
    held: list[Task] = []

    async def hold(caller: Caller) -> None:
        held.append(await caller.skill("hold"))

    async with (
        serve_process(
            "tests.support.drain_app:runtime",
            "--a2a",
            *TOKENS,
            "--max-calls-per-caller",
            "2",
            "--audit",
            f"jsonl:{audit}",
            stderr=errors,
            process=procs,
        ) as origin,
        callers(origin, "alice-token", "bob-token") as (alice, bob),
    ):
        async with anyio.create_task_group() as tg:
            tg.start_soon(hold, alice)
            tg.start_soon(hold, alice)
            await errors.wait_for_many("holding ", 2)  # both of alice's calls are running
            refused = await alice.skill("hold")
            assert refused.status.state == TaskState.TASK_STATE_REJECTED
            text = status_text(refused)
            assert "already holds 2 calls in flight" in text
            assert "per-caller cap 2" in text
            assert "Nothing was sent" in text
            tg.start_soon(hold, bob)  # bob is not held back by alice's calls
            await errors.wait_for_many("holding ", 3)
            procs[0].send_signal(signal.SIGUSR1)  # let every held call complete
        assert [t.status.state for t in held] == [TaskState.TASK_STATE_COMPLETED] * 3
        again = await alice.skill("hold")  # alice's calls ended: she may call again
        assert again.status.state == TaskState.TASK_STATE_COMPLETED
    entries = audit_entries(audit)
    refusals = [e for e in entries if e["decision"] == "refused"]
    assert [(e["capability"], e["transport"], e["outcome"]) for e in refusals] == [
        ("hold", "a2a", "AgentCapabilityUnavailableError")
    ]
    # issue 21: the refusal names its caller, and its invocation id is its task id
    assert [(e["principal"], e["invocation_id"]) for e in refusals] == [("alice", refused.id)]
    assert sum(1 for e in entries if e["decision"] != "refused") == 4


async def test_a_cancelled_a2a_call_gives_its_place_back() -> None:
    errors = Lines()
    async with (
        serve_process(
            "tests.support.drain_app:runtime",
            "--a2a",
            *TOKENS,
            "--max-calls-per-caller",
            "1",
            stderr=errors,
        ) as origin,
        callers(origin, "alice-token") as (alice,),
    ):
        async with anyio.create_task_group() as tg:
            first: list[Task] = []

            async def hold() -> None:
                first.append(await alice.skill("hold"))

            tg.start_soon(hold)
            line = await errors.wait_for("holding ")
            task_id = line.split()[-1]  # the invocation id is the task id
            assert (await alice.skill("hold")).status.state == TaskState.TASK_STATE_REJECTED
            cancelled = await alice.client.cancel_task(CancelTaskRequest(id=task_id))
            assert cancelled.status.state == TaskState.TASK_STATE_CANCELED
        assert [t.status.state for t in first] == [TaskState.TASK_STATE_CANCELED]
        async with anyio.create_task_group() as tg:
            tg.start_soon(hold)
            await errors.wait_for_many("holding ", 2)  # her place came back: it runs
            tg.cancel_scope.cancel()


async def test_an_a2a_caller_at_its_cap_of_parked_approvals_is_told_the_cap() -> None:
    # --drain-timeout 0: the calls left waiting for a person are answered at once on SIGTERM.
    async with (
        serve_process("examples.todo:runtime", "--a2a", *TOKENS, "--drain-timeout", "0") as origin,
        callers(origin, "alice-token", "bob-token") as (alice, bob),
    ):
        made = await alice.skill("create_todo", {"title": "Milk"})
        assert made.status.state == TaskState.TASK_STATE_COMPLETED
        chosen = await alice.skill("select_todo", {"id": "todo-1"})
        assert chosen.status.state == TaskState.TASK_STATE_COMPLETED
        waiting = [await alice.skill("delete_todo") for _ in range(16)]
        assert {t.status.state for t in waiting} == {TaskState.TASK_STATE_INPUT_REQUIRED}
        refused = await alice.skill("delete_todo")
        assert refused.status.state == TaskState.TASK_STATE_REJECTED
        text = status_text(refused)
        assert "Too many calls of yours are waiting for a person's approval (16" in text
        assert "Answer or cancel one of your waiting calls" in text
        assert "nothing was sent" in text
        others = await bob.skill("delete_todo")  # bob still gets a person asked
        assert others.status.state == TaskState.TASK_STATE_INPUT_REQUIRED
        cancelled = await alice.cancel(waiting[0])
        assert cancelled.status.state == TaskState.TASK_STATE_CANCELED
        parked_again = await alice.skill("delete_todo")
        assert parked_again.status.state == TaskState.TASK_STATE_INPUT_REQUIRED
