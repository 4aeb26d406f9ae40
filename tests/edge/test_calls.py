"""One call in flight for every transport (foldkit_agent.edge.calls): started on the runtime,
waited for with signs of life and approval, aborted through its signal when the wait is
cancelled, counted within the per-caller caps on calls in flight and calls waiting for a
person, and its caller's credentials read through a hook that may fail."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from foldkit_agent import Approval, Invocation, agent
from foldkit_agent.edge.approvals import ParkedApproval
from foldkit_agent.edge.callers import ANONYMOUS, CallerLimits
from foldkit_agent.edge.calls import (
    PARK,
    CallRequest,
    CallsInFlight,
    credentials_or_none,
    settle,
)
from foldkit_agent.edge.disconnect import WATCH
from foldkit_agent.runtime.outcome import Outcome, defect
from tests.support.approval_app import HeldApprover, shelf
from tests.support.audit_app import bind


async def test_a_started_call_answers_with_the_runtimes_outcome_and_is_audited_once() -> None:
    _host, rt = bind(agent.audit_log())
    signal = asyncio.Event()
    call = asyncio.ensure_future(rt.call("increment", {"by": 2}, Invocation(signal=signal)))
    outcome = await settle(call, signal)
    assert outcome is not None
    assert (outcome.ok, outcome.capability) == (True, "increment")
    assert rt.audit is not None
    assert [e.decision for e in rt.audit.entries()] == ["dispatched"]


async def test_a_refusal_is_an_outcome_not_an_exception() -> None:
    _host, rt = bind(agent.audit_log())
    signal = asyncio.Event()
    call = asyncio.ensure_future(rt.call("no_such", {}, Invocation(signal=signal)))
    outcome = await settle(call, signal)
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


# -- CallsInFlight: the one call path and its per-caller caps -----------------------------------

CAPS = CallerLimits(calls_per_caller=2, calls=3, waiting_per_caller=2, waiting=3)


def _request(caller: str, ask: Any = PARK, **kw: Any) -> CallRequest:
    return CallRequest("test", caller, ask=ask, owner=caller, **kw)


async def test_a_call_answers_with_its_outcome_and_gives_its_place_back() -> None:
    calls = CallsInFlight(CAPS)
    async with shelf("milk") as (_running, rt):
        outcome = await calls.run(rt, "rename_item", {"title": "milk", "to": "oat"}, _request("a"))
        assert isinstance(outcome, Outcome)
        assert (outcome.ok, outcome.capability) == (True, "rename_item")
        assert (len(calls.running), len(calls.waiting), len(calls)) == (0, 0, 0)


@pytest.mark.parametrize("scope", [None, {}, {WATCH: "not a watch"}])
async def test_a_call_on_a_request_the_guard_did_not_watch_runs_with_nothing_to_abort_it(
    scope: dict[str, Any] | None,
) -> None:
    calls = CallsInFlight(CAPS)
    async with shelf("milk") as (_running, rt):
        for name, args in [("rename_item", {"title": "milk", "to": "oat"}), ("no_such", {})]:
            outcome = await calls.run(rt, name, args, _request("a", scope=scope))
            assert isinstance(outcome, Outcome)
            assert outcome.capability == name
        assert (len(calls.running), len(calls)) == (0, 0)


async def test_a_parked_call_moves_from_in_flight_to_waiting_and_resumes_with_the_answer() -> None:
    calls = CallsInFlight(CAPS)
    async with shelf("milk") as (running, rt):
        got = await calls.run(rt, "remove_item", {"title": "milk"}, _request("principal:a"))
        assert isinstance(got, ParkedApproval)
        assert (calls.running.held_by("principal:a"), calls.waiting.held_by("principal:a")) == (
            0,
            1,
        )
        assert running.host.model().items == ("milk",)  # nothing sent before the answer
        assert await calls.resume(got.key, "principal:b", None, Approval(approved=True)) is None
        outcome = await calls.resume(got.key, "principal:a", "remove_item", Approval(approved=True))
        assert outcome is not None
        assert outcome.ok
        assert running.host.model().items == ()
        assert (len(calls.running), len(calls.waiting), len(calls.parked)) == (0, 0, 0)


async def test_a_caller_past_its_calls_waiting_for_a_person_is_refused_and_others_are_asked() -> (
    None
):
    calls = CallsInFlight(CAPS)
    async with shelf("milk") as (running, rt):
        for _ in range(2):
            got = await calls.run(rt, "remove_item", {"title": "milk"}, _request("principal:a"))
            assert isinstance(got, ParkedApproval)
        third = await calls.run(rt, "remove_item", {"title": "milk"}, _request("principal:a"))
        assert isinstance(third, Outcome)
        assert (third.kind, third.data["_tag"], third.data["reason"]) == (
            "refused",
            "AgentApprovalError",
            "unavailable",
        )
        assert "2" in third.text  # names the cap reached
        other = await calls.run(rt, "remove_item", {"title": "milk"}, _request("principal:b"))
        assert isinstance(other, ParkedApproval)  # another caller is still asked
        # the server's total (3) is reached now: a third caller is refused, naming it
        last = await calls.run(rt, "remove_item", {"title": "milk"}, _request(ANONYMOUS))
        assert isinstance(last, Outcome)
        assert last.data["reason"] == "unavailable"
        assert running.host.model().items == ("milk",)
        await calls.abort(1.0)
        assert (len(calls), len(calls.waiting), len(calls.parked)) == (0, 0, 0)


async def test_an_approver_on_the_request_counts_as_waiting_too() -> None:
    calls = CallsInFlight(CAPS)
    held = HeldApprover()
    both_asked = asyncio.Event()

    async def ask(request: Any) -> Approval:
        if len(held.requests) == 1:
            both_asked.set()
        return await held(request)

    async with shelf("milk") as (_running, rt):
        first = [
            asyncio.ensure_future(
                calls.run(rt, "remove_item", {"title": "milk"}, _request("principal:a", ask))
            )
            for _ in range(2)
        ]
        await both_asked.wait()  # set in the step that puts the second request to the person
        assert calls.waiting.held_by("principal:a") == 2
        third = await calls.run(rt, "remove_item", {"title": "milk"}, _request("principal:a", ask))
        assert isinstance(third, Outcome)
        assert third.data["reason"] == "unavailable"
        assert len(held.requests) == 2  # the third was never put to the person
        for fut in held.futures:
            fut.set_result(Approval(approved=False))
        answers = await asyncio.gather(*first)
        assert [a.data["reason"] for a in answers if isinstance(a, Outcome)] == ["declined"] * 2
        assert len(calls.waiting) == 0


async def test_a_caller_past_its_calls_in_flight_is_refused_unstarted_and_audited() -> None:
    calls = CallsInFlight(CAPS)
    async with shelf("milk") as (_running, rt):
        slow = [calls.running.take("principal:a") for _ in range(2)]  # two calls in flight
        refused = await calls.run(
            rt, "rename_item", {"title": "milk", "to": "x"}, _request("principal:a")
        )
        assert isinstance(refused, Outcome)
        assert (refused.kind, refused.data["code"]) == ("refused", "caller-limit")
        assert refused.text.startswith(
            "Refused: rename_item was not started: This caller already holds 2"
        )
        assert rt.audit is not None
        last = rt.audit.entries()[-1]
        assert (last.capability, last.decision, last.outcome) == (
            "rename_item",
            "refused",
            "AgentCapabilityUnavailableError",
        )
        served = await calls.run(
            rt, "rename_item", {"title": "milk", "to": "x"}, _request("principal:b")
        )
        assert isinstance(served, Outcome)
        assert served.ok
        for slot in slow:
            slot.release()


async def test_abort_ends_only_the_calls_of_the_transport_named() -> None:
    calls = CallsInFlight(CAPS)
    async with shelf("milk") as (_running, rt):
        mine = await calls.run(rt, "remove_item", {"title": "milk"}, _request("principal:a"))
        theirs = await calls.run(
            rt, "remove_item", {"title": "milk"}, CallRequest("other", "principal:b", ask=PARK)
        )
        assert isinstance(mine, ParkedApproval)
        assert isinstance(theirs, ParkedApproval)
        await calls.abort(1.0, "test")
        assert mine.task.done()
        assert not theirs.task.done()
        assert mine.task.result().data["_tag"] == "AgentCancelledError"
        await calls.abort(1.0)
        assert theirs.task.done()


@settings(max_examples=40, deadline=None)
@given(st.lists(st.sampled_from(["principal:a", "principal:b", ANONYMOUS]), max_size=12))
def test_a_call_is_parked_exactly_when_its_caller_and_the_server_are_below_their_caps(
    callers: list[str],
) -> None:
    async def scenario() -> None:
        calls = CallsInFlight(CAPS)
        async with shelf("milk") as (running, rt):
            held: dict[str, int] = {}
            for caller in callers:
                room = held.get(caller, 0) < CAPS.waiting_per_caller
                room = room and sum(held.values()) < CAPS.waiting
                got = await calls.run(rt, "remove_item", {"title": "milk"}, _request(caller))
                assert isinstance(got, ParkedApproval) == room
                if room:
                    held[caller] = held.get(caller, 0) + 1
                assert calls.waiting.held_by(caller) == held.get(caller, 0)
            assert running.host.model().items == ("milk",)  # nothing sent for any of them
            await calls.abort(1.0)
            assert len(calls.waiting) == 0

    asyncio.run(scenario())


async def test_a_signal_the_transport_gives_aborts_its_parked_call() -> None:
    calls = CallsInFlight(CAPS)
    signal = asyncio.Event()
    async with shelf("milk") as (running, rt):
        request = CallRequest("test", "principal:a", ask=PARK, signal=signal)
        got = await calls.run(rt, "remove_item", {"title": "milk"}, request)
        assert isinstance(got, ParkedApproval)
        signal.set()  # the transport's own cancel (A2A CancelTask)
        outcome = await calls.settle(got.task)
        assert (outcome.kind, outcome.data["_tag"]) == ("refused", "AgentCancelledError")
        assert running.host.model().items == ("milk",)
        assert (len(calls), len(calls.waiting)) == (0, 0)


async def test_a_reask_call_edited_by_its_person_is_parked_again_under_a_new_key() -> None:
    calls = CallsInFlight(CAPS)
    async with shelf("milk") as (running, rt):
        request = _request("principal:a", reask=True)
        got = await calls.run(rt, "note", {"text": "first"}, request)
        assert isinstance(got, ParkedApproval)
        edited = Approval(approved=True, input={"text": "second"})
        again = await calls.follow(got.key, "principal:a", "note", edited)
        assert isinstance(again, ParkedApproval)
        assert again.key != got.key  # a request_state answers one question only
        assert (again.request.asks, again.request.input) == (2, {"text": "second"})
        assert running.host.model().note == ""  # nothing sent before the second answer
        done = await calls.follow(again.key, "principal:a", "note", Approval(approved=True))
        assert isinstance(done, Outcome)
        assert done.ok
        await running.settled()
        assert running.host.model().note == "second"
        assert (len(calls.waiting), len(calls.parked)) == (0, 0)


async def test_a_call_answered_elsewhere_tells_its_own_caller_where_the_answer_led() -> None:
    calls = CallsInFlight(CAPS)
    async with shelf("milk") as (running, rt):
        got = await calls.run(rt, "remove_item", {"title": "milk"}, _request("principal:a"))
        assert isinstance(got, ParkedApproval)
        said = Approval(approved=False, by="ann", message="keep the milk")
        assert calls.answer(got.key, "principal:a", None, said) is got  # the console's answer
        # the caller's own later answer is not used: the first answer counts
        assert await calls.follow(got.key, "principal:b", None, Approval(approved=True)) is None
        told = await calls.follow(got.key, "principal:a", None, Approval(approved=True))
        assert isinstance(told, Outcome)
        assert (told.kind, told.data["reason"]) == ("refused", "declined")
        assert "They said: 'keep the milk'." in told.text
        assert running.host.model().items == ("milk",)
        assert await calls.follow(got.key, "principal:a", None, Approval(approved=True)) is None
