"""``drain``: stop accepting, let the calls in flight finish, abort and answer the rest."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from pydantic import BaseModel

from foldkit_agent import (
    AgentCancelledError,
    AgentRuntime,
    Host,
    Invocation,
    Message,
    agent,
    drain,
    drain_timeout,
    message_union,
    surface,
)
from tests.support.approval_app import HeldApprover, shelf
from tests.support.drain_app import Definition as HoldDefinition
from tests.support.drain_app import Hold


class Model(BaseModel, frozen=True):
    n: int = 0


class Pressed(Message):
    pass


Msg = message_union(Pressed)
App = surface.application(model=Model, message=Msg, initial=Model())
Press = agent.for_application(App)
Definition = Press.make(messages=Press.expose(Msg, {Pressed: "Press; the host takes its time"}))


class GatedHost:
    """A host whose ``dispatch`` returns only when the test opens the gate."""

    def __init__(self) -> None:
        self.gate: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self.received: list[Message] = []
        self.entered = asyncio.Event()

    def host(self) -> Host[Model, Message]:
        return Host(model=Model, dispatch=self.dispatch)

    async def dispatch(self, message: Message) -> None:
        self.received.append(message)
        self.entered.set()
        await asyncio.shield(self.gate)


def bound(host: GatedHost) -> AgentRuntime[Any, Any]:
    return Press.bind(definition=Definition, host=host.host(), audit=agent.audit_log())


async def test_a_drain_with_nothing_in_flight_returns_at_once() -> None:
    rt = bound(GatedHost())
    drained = await drain(rt, within=30)
    assert (drained.in_flight, drained.aborted, drained.left) == (0, 0, 0)


async def test_a_call_that_finishes_within_the_drain_is_answered_as_usual() -> None:
    gated = GatedHost()
    rt = bound(gated)
    call = asyncio.ensure_future(rt.call("pressed", {}, Invocation()))
    await gated.entered.wait()
    draining = asyncio.ensure_future(drain(rt, within=30))
    await asyncio.sleep(0)  # the drain has begun (stop_accepting is synchronous)
    assert rt.draining
    gated.gate.set_result(None)
    drained = await draining
    outcome = await call
    assert outcome.kind == "dispatched"
    assert (drained.in_flight, drained.aborted, drained.left) == (1, 0, 0)
    assert rt.audit is not None
    assert [(e.decision, e.outcome) for e in rt.audit.entries()] == [("dispatched", "ok")]


async def test_a_call_still_running_at_the_deadline_is_aborted_and_says_the_server_shut_down() -> (
    None
):
    gated = GatedHost()
    rt = bound(gated)
    call = asyncio.ensure_future(rt.call("pressed", {}, Invocation()))
    await gated.entered.wait()
    drained = await drain(rt, within=0)
    outcome = await call
    assert (drained.in_flight, drained.aborted, drained.left) == (1, 1, 0)
    assert outcome.kind == "unknown"  # the host was called: whether it applied is unknown
    assert outcome.data["_tag"] == "AgentCancelledError"
    assert "The server shut down" in outcome.text
    assert "nothing was rolled back" in outcome.text
    assert rt.audit is not None
    entries = rt.audit.entries()
    assert [(e.decision, e.outcome) for e in entries] == [("unknown", "AgentCancelledError")]


async def test_an_invocation_without_a_signal_can_still_be_aborted() -> None:
    gated = GatedHost()
    rt = bound(gated)
    call = asyncio.ensure_future(rt.messages.dispatch(Pressed, {}, Invocation(signal=None)))
    await gated.entered.wait()
    assert rt.abort_in_flight() == 1
    with pytest.raises(AgentCancelledError) as raised:
        await call
    assert raised.value.dispatched is None


async def test_a_call_that_arrives_during_a_drain_is_refused_before_anything_is_sent() -> None:
    gated = GatedHost()
    rt = bound(gated)
    rt.stop_accepting()
    outcome = await rt.call("pressed", {}, Invocation())
    assert outcome.kind == "refused"
    assert outcome.data["dispatched"] is False
    assert "shutting down" in outcome.text
    assert "nothing was sent" in outcome.text
    assert gated.received == []
    assert rt.audit is not None
    assert [(e.decision, e.outcome) for e in rt.audit.entries()] == [
        ("refused", "AgentCancelledError")
    ]


async def test_the_default_deadline_is_the_longest_completion_plus_a_margin() -> None:
    gated = GatedHost()
    assert drain_timeout(bound(gated)) == 5.0  # no completion: just the margin
    host = Host(model=Model, dispatch=gated.dispatch, observe=lambda _on: lambda: None)
    held = Hold.bind(definition=HoldDefinition, host=host)
    assert drain_timeout(held, bound(gated)) == 35.0  # hold waits up to 30 s


@pytest.mark.parametrize("bad", [-1, float("nan"), True])
async def test_a_drain_deadline_that_is_not_seconds_is_refused(bad: Any) -> None:
    with pytest.raises(ValueError, match="within"):
        await drain(bound(GatedHost()), within=bad)


def test_the_cancellation_json_is_the_same_in_a_shutdown() -> None:
    plain = AgentCancelledError(capability="x", dispatched=True)
    shut = AgentCancelledError(capability="x", dispatched=True, shutdown=True)
    assert set(plain.to_json()) == set(shut.to_json())
    assert plain.message != shut.message


async def test_a_drain_cut_short_aborts_and_answers_the_calls_before_its_deadline() -> None:
    gated = GatedHost()
    rt = bound(gated)
    call = asyncio.ensure_future(rt.call("pressed", {}, Invocation()))
    await gated.entered.wait()
    cut = asyncio.Event()
    draining = asyncio.ensure_future(drain(rt, within=3600, cut=cut))
    await asyncio.sleep(0)
    assert rt.draining
    assert not draining.done()
    cut.set()  # a second SIGTERM
    drained = await draining
    outcome = await call
    assert (drained.in_flight, drained.aborted, drained.left) == (1, 1, 0)
    assert outcome.kind == "unknown"
    assert "The server shut down" in outcome.text
    assert rt.audit is not None
    assert [(e.decision, e.outcome) for e in rt.audit.entries()] == [
        ("unknown", "AgentCancelledError")
    ]


async def test_a_call_waiting_for_its_approval_is_answered_when_the_drain_begins() -> None:
    approver = HeldApprover()
    async with shelf("milk") as (running, rt):
        call = asyncio.ensure_future(
            rt.call("remove_item", {"title": "milk"}, Invocation(approver=approver))
        )
        await approver.asked.wait()
        # a deadline nobody waits out: the waiting call is answered without it
        async with asyncio.timeout(60):  # a test that would otherwise wait out the hour
            drained = await drain(rt, within=3600)
        outcome = await call
        assert (drained.in_flight, drained.aborted, drained.left) == (1, 0, 0)
        assert outcome.kind == "refused"
        assert outcome.data["_tag"] == "AgentCancelledError"
        assert outcome.data["dispatched"] is False
        assert "nothing was sent" in outcome.text
        assert approver.cancelled == 1
        assert rt.audit is not None
        entries = rt.audit.entries()
        assert [(e.decision, e.outcome) for e in entries] == [("refused", "AgentCancelledError")]
        assert running.model().items == ("milk",)  # nothing removed
