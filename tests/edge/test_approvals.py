"""Calls waiting for a person across requests (``ParkedApprovals``), as
:class:`~foldkit_agent.edge.calls.CallsInFlight` parks them: a call runs until it ends or asks
a person, is parked under its key, and resumes with the answer; past a cap it is refused."""

from __future__ import annotations

from foldkit_agent import Approval
from foldkit_agent.edge.approvals import ParkedApproval
from foldkit_agent.edge.callers import CallerLimits
from foldkit_agent.edge.calls import PARK, CallRequest, CallsInFlight
from tests.support.inproc import run_notes


def _parking(owner: str | None, key: str) -> CallRequest:
    caller = "anonymous" if owner is None else f"principal:{owner}"
    return CallRequest("test", caller, ask=PARK, owner=owner, key=key)


async def test_a_call_that_asks_a_person_is_parked_and_resumes_with_the_answer() -> None:
    calls = CallsInFlight()
    async with run_notes() as (running, rt, _sent):
        got = await calls.run(rt, "remove_note", {"index": 0}, _parking("alice", "k1"))
        assert isinstance(got, ParkedApproval)
        assert "k1" in calls.parked
        assert running.host.model().notes == ("buy milk", "call mom")  # nothing sent yet
        assert calls.answer("k1", "bob", "remove_note", Approval(approved=True)) is None
        waiting = calls.answer("k1", "alice", "remove_note", Approval(approved=True, by="alice"))
        assert waiting is got
        outcome = await calls.settle(waiting.task)
        await running.settled()
        assert (outcome.ok, running.host.model().notes) == (True, ("call mom",))
        assert "k1" not in calls.parked


async def test_a_call_that_asks_nobody_returns_its_outcome_unparked() -> None:
    calls = CallsInFlight()
    async with run_notes() as (_running, rt, _sent):
        got = await calls.run(rt, "add_note", {"text": "short"}, _parking(None, "k1"))
    assert not isinstance(got, ParkedApproval)
    assert got.kind == "dispatched"
    assert len(calls.parked) == 0


async def test_a_call_past_the_servers_cap_is_refused_as_unavailable_naming_it() -> None:
    calls = CallsInFlight(CallerLimits(waiting_per_caller=1, waiting=1))
    async with run_notes() as (running, rt, _sent):
        first = await calls.run(rt, "remove_note", {"index": 0}, _parking("alice", "a1"))
        got = await calls.run(rt, "remove_note", {"index": 0}, _parking("bob", "b1"))
        notes = running.host.model().notes
        entries = rt.audit.entries()
        await calls.abort(1.0)
    assert isinstance(first, ParkedApproval)
    assert not isinstance(got, ParkedApproval)
    assert (got.kind, got.data["reason"]) == ("refused", "unavailable")
    assert notes == ("buy milk", "call mom")
    assert entries[-1].approval == "unavailable"
    assert "Too many calls are waiting for a person's approval on this server (1" in got.text


async def test_a_caller_at_its_cap_of_parked_calls_is_told_its_cap_and_others_still_park() -> None:
    calls = CallsInFlight(CallerLimits(waiting_per_caller=1))
    async with run_notes() as (running, rt, _sent):
        first = await calls.run(rt, "remove_note", {"index": 0}, _parking("alice", "a1"))
        second = await calls.run(rt, "remove_note", {"index": 0}, _parking("alice", "a2"))
        other = await calls.run(rt, "remove_note", {"index": 0}, _parking("bob", "b1"))
        notes = running.host.model().notes
        assert isinstance(first, ParkedApproval)
        assert isinstance(other, ParkedApproval)
        await calls.abort(1.0)
    assert not isinstance(second, ParkedApproval)
    assert (second.kind, second.data["reason"]) == ("refused", "unavailable")
    assert second.text.startswith(
        "Refused: "
        "Too many calls of yours are waiting for a person's approval (1, the most one caller "
        "may have waiting), so 'remove_note' cannot ask one; nothing was sent."
    )
    assert notes == ("buy milk", "call mom")
