"""One call in flight at a network adapter (foldkit_agent.edge.calls): started on the runtime,
waited for with signs of life and approval, aborted through its signal when the wait is
cancelled, and its caller's credentials read through a hook that may fail."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from foldkit_agent import Invocation, agent
from foldkit_agent.edge.calls import credentials_or_none, settle, start_call
from foldkit_agent.runtime.outcome import Outcome, defect
from tests.support.audit_app import bind


async def test_a_started_call_answers_with_the_runtimes_outcome_and_is_audited_once() -> None:
    _host, rt = bind(agent.audit_log())
    signal = asyncio.Event()
    call = start_call(rt, "increment", {"by": 2}, Invocation(signal=signal))
    outcome = await settle(call, signal)
    assert outcome is not None
    assert (outcome.ok, outcome.capability) == (True, "increment")
    assert rt.audit is not None
    assert [e.decision for e in rt.audit.entries()] == ["dispatched"]


async def test_a_refusal_is_an_outcome_not_an_exception() -> None:
    _host, rt = bind(agent.audit_log())
    signal = asyncio.Event()
    outcome = await settle(start_call(rt, "no_such", {}, Invocation(signal=signal)), signal)
    assert outcome is not None
    assert (outcome.kind, outcome.data["_tag"]) == ("refused", "AgentUnknownCapabilityError")


async def test_settle_returns_none_once_the_call_asked_for_approval_and_leaves_it_running() -> None:
    loop = asyncio.get_running_loop()
    call: asyncio.Future[Outcome] = loop.create_future()
    asked: asyncio.Future[Any] = loop.create_future()
    asked.set_result(("request", "answer"))
    assert await settle(call, asyncio.Event(), asked) is None
    assert not call.done()
    call.set_result(defect("x"))
    assert await settle(call, asyncio.Event()) == defect("x")


async def test_cancelling_the_wait_sets_the_signal_and_waits_for_the_calls_own_answer() -> None:
    signal = asyncio.Event()
    answered: list[str] = []

    async def the_call() -> Outcome:
        await signal.wait()
        await asyncio.sleep(0)  # the runtime records its answer after the signal
        answered.append("cancelled")
        return defect("x")

    call = asyncio.ensure_future(the_call())
    waiting = asyncio.ensure_future(settle(call, signal))
    await asyncio.sleep(0)
    waiting.cancel()
    with pytest.raises(asyncio.CancelledError):
        await waiting
    assert waiting.cancelled()
    assert signal.is_set()
    assert answered == ["cancelled"]  # answered before the cancellation propagated
    assert call.done()


async def test_credentials_come_from_a_sync_or_async_hook_and_a_failing_hook_is_nobody() -> None:
    async def async_hook(ctx: str) -> str:
        return ctx.upper()

    def failing(ctx: str) -> str:
        raise RuntimeError("the session store is down")

    assert await credentials_or_none(lambda ctx: f"user:{ctx}", "alice") == "user:alice"
    assert await credentials_or_none(async_hook, "bob") == "BOB"
    assert await credentials_or_none(failing, "carol") is None
