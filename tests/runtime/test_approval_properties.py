"""Property: whatever the interleaving of approvals, declines, timeouts and cancellations,
only approved calls reach ``update``, each exactly once (DESIGN §11)."""

from __future__ import annotations

import asyncio

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from foldkit_agent import (
    AgentApprovalError,
    AgentCancelledError,
    Approval,
    DispatchResult,
    Invocation,
    Message,
    Program,
)
from tests.support.approval_app import Contract, HeldApprover, Model, Shelf, update

FATES = ("approve", "decline", "timeout", "late", "signal", "cancel", "raise")
"""``late``: nobody answers in time, then an approval arrives after the timeout."""

TIMEOUT_FATES = {"timeout", "late"}


async def _run(fates: list[str], order: list[int], yields: list[int]) -> None:
    applied: list[Message] = []
    async with Program(init=Model(), update=update).run() as running:
        # What update applied (simulating a preview runs update too, but applies nothing).
        running.host.observe(applied.append)
        # Calls destined to time out use a runtime with a short timeout; every other call
        # waits for its scripted answer and can never time out first.
        patient = Shelf.bind(definition=Contract, host=running.host, approval_timeout=300)
        hasty = Shelf.bind(definition=Contract, host=running.host, approval_timeout=0.01)
        approvers = [HeldApprover() for _ in fates]
        signals = [asyncio.Event() for _ in fates]
        calls = [
            asyncio.ensure_future(
                (hasty if fate in TIMEOUT_FATES else patient).messages.dispatch(
                    "note",
                    {"text": f"call-{i}"},
                    Invocation(approver=approvers[i], signal=signals[i]),
                )
            )
            for i, fate in enumerate(fates)
        ]
        for i in order:
            await approvers[i].asked.wait()
            fut = approvers[i].futures[0]
            fate = fates[i]
            if fate == "approve":
                fut.set_result(Approval(approved=True, by=f"p{i}"))
            elif fate == "decline":
                fut.set_result(Approval(approved=False))
            elif fate == "signal":
                signals[i].set()
            elif fate == "cancel":
                calls[i].cancel()
            elif fate == "raise":
                fut.set_exception(ConnectionError("the person's client went away"))
            elif fate == "late":
                await asyncio.wait({calls[i]})
                if not fut.done():
                    fut.set_result(Approval(approved=True))
            for _ in range(yields[i]):
                await asyncio.sleep(0)
        results = await asyncio.gather(*calls, return_exceptions=True)
        await running.settled()

        approved = [f"call-{i}" for i, fate in enumerate(fates) if fate == "approve"]
        assert sorted(m.text for m in applied) == sorted(approved)  # type: ignore[attr-defined]
        for i, (fate, result) in enumerate(zip(fates, results, strict=True)):
            if fate == "approve":
                assert isinstance(result, DispatchResult)
                assert result.message is approvers[i].requests[0].message
            elif fate == "decline":
                assert isinstance(result, AgentApprovalError)
                assert result.reason == "declined"
            elif fate in TIMEOUT_FATES:
                assert isinstance(result, AgentApprovalError)
                assert result.reason == "timeout"
            elif fate == "signal":
                assert isinstance(result, AgentCancelledError)
                assert result.dispatched is False
            elif fate == "cancel":
                assert isinstance(result, asyncio.CancelledError)
            else:
                assert isinstance(result, AgentApprovalError)
                assert result.reason == "unavailable"
        assert patient.pending() == hasty.pending() == 0


@st.composite
def schedules(draw: st.DrawFn) -> tuple[list[str], list[int], list[int]]:
    fates = draw(st.lists(st.sampled_from(FATES), min_size=1, max_size=8))
    order = draw(st.permutations(range(len(fates))))
    yields = draw(st.lists(st.integers(0, 3), min_size=len(fates), max_size=len(fates)))
    return fates, list(order), yields


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(schedules())
def test_only_approved_calls_reach_update_and_each_exactly_once(
    schedule: tuple[list[str], list[int], list[int]],
) -> None:
    asyncio.run(_run(*schedule))


def test_the_property_covers_every_fate() -> None:
    asyncio.run(_run(list(FATES), list(range(len(FATES))), [0] * len(FATES)))
