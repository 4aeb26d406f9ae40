"""``ParkedApprovals.start``: run a call until it ends or asks a person, then park it."""

from __future__ import annotations

from typing import Any

from foldkit_agent import Approval, Invocation
from foldkit_agent.edge.approvals import ParkedApproval, ParkedApprovals
from tests.support.inproc import run_notes


async def test_a_call_that_asks_a_person_is_parked_and_resumes_with_the_answer() -> None:
    parked = ParkedApprovals()
    async with run_notes() as (running, rt, _sent):
        got = await parked.start(
            "k1",
            "remove_note",
            "alice",
            lambda approver: rt.call("remove_note", {"index": 0}, Invocation(approver=approver)),
        )
        assert isinstance(got, ParkedApproval)
        assert "k1" in parked
        assert running.host.model().notes == ("buy milk", "call mom")  # nothing sent yet
        waiting = parked.take("k1", "alice", "remove_note")
        assert waiting is got
        assert waiting.decide(Approval(approved=True, by="alice"))
        outcome = await waiting.task
        await running.settled()
        assert (outcome.ok, running.host.model().notes) == (True, ("call mom",))
        assert "k1" not in parked


async def test_a_call_that_asks_nobody_returns_its_outcome_unparked() -> None:
    parked = ParkedApprovals()
    async with run_notes() as (_running, rt, _sent):
        got = await parked.start(
            "k1",
            "add_note",
            None,
            lambda approver: rt.call("add_note", {"text": "short"}, Invocation(approver=approver)),
        )
    assert not isinstance(got, ParkedApproval)
    assert got.kind == "dispatched"
    assert len(parked) == 0


async def test_a_call_that_cannot_be_parked_is_refused_as_unavailable() -> None:
    parked = ParkedApprovals(total=0)
    async with run_notes() as (running, rt, _sent):
        got = await parked.start(
            "k1",
            "remove_note",
            None,
            lambda approver: rt.call("remove_note", {"index": 0}, Invocation(approver=approver)),
        )
        notes = running.host.model().notes
        (entry,) = rt.audit.entries()
    assert not isinstance(got, ParkedApproval)
    assert (got.kind, got.data["reason"]) == ("refused", "unavailable")
    assert notes == ("buy milk", "call mom")
    assert entry.approval == "unavailable"
    assert "Too many calls are waiting for a person's approval on this server (0" in got.text


async def test_a_caller_at_its_cap_of_parked_calls_is_told_its_cap_and_others_still_park() -> None:
    parked = ParkedApprovals(per_caller=1)

    def remove(approver: Any) -> Any:
        return rt.call("remove_note", {"index": 0}, Invocation(approver=approver))

    async with run_notes() as (running, rt, _sent):
        first = await parked.start("a1", "remove_note", "alice", remove)
        second = await parked.start("a2", "remove_note", "alice", remove)
        other = await parked.start("b1", "remove_note", "bob", remove)
        notes = running.host.model().notes
        for waiting in (first, other):
            assert isinstance(waiting, ParkedApproval)
            waiting.task.cancel()
    assert not isinstance(second, ParkedApproval)
    assert (second.kind, second.data["reason"]) == ("refused", "unavailable")
    assert second.text.startswith(
        "Too many calls of yours are waiting for a person's approval (1, the most one caller "
        "may have waiting), so 'remove_note' cannot ask one; nothing was sent."
    )
    assert notes == ("buy milk", "call mom")
