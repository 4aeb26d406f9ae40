"""The confirm step: a person approves the very Message that is then dispatched (DESIGN §11)."""

from __future__ import annotations

import asyncio
from datetime import timedelta
from typing import Any

import pytest

from foldkit_agent import (
    AgentApprovalError,
    AgentAuthorizationError,
    AgentCancelledError,
    AgentCapabilityUnavailableError,
    AgentContractError,
    AgentInvalidInputError,
    Approval,
    ApprovalRequest,
    Host,
    Invocation,
    Program,
    agent,
    projection,
    summarize,
)
from tests.support.approval_app import (
    App,
    Contract,
    HeldApprover,
    Model,
    Msg,
    RemovedItem,
    ScriptedApprover,
    Shelf,
    shelf,
    update,
)
from tests.support.hosts import RecordingHost


async def test_an_approved_call_dispatches_exactly_the_message_the_person_saw() -> None:
    approver = ScriptedApprover(Approval(approved=True, by="alice"))
    async with shelf("milk", "eggs") as (running, rt):
        seen: list[Any] = []
        running.host.observe(seen.append)
        result = await rt.messages.dispatch(
            "remove_item", {"title": "milk"}, Invocation(approver=approver)
        )
        assert [r.message for r in approver.requests] == [RemovedItem(title="milk")]
        assert seen == [approver.requests[0].message]
        assert seen[0] is approver.requests[0].message is result.message
        assert running.host.model().items == ("eggs",)
        entry = rt.audit.entries()[-1]
        assert (entry.decision, entry.outcome, entry.approval, entry.approved_by) == (
            "dispatched",
            "ok",
            "approved",
            "alice",
        )


async def test_the_request_carries_the_input_and_a_preview_of_the_change() -> None:
    approver = ScriptedApprover(Approval(approved=True))
    async with shelf("milk", "eggs") as (_running, rt):
        await rt.messages.dispatch("remove_item", {"title": "eggs"}, Invocation(approver=approver))
    (request,) = approver.requests
    assert request.capability == "remove_item"
    assert request.title == "remove_item"
    assert request.description == "Remove an item from the shelf"
    assert request.input == {"title": "eggs"}
    assert request.preview == [{"op": "remove", "path": "/items/1"}]
    assert request.summary == 'removes items.1 (was "eggs")'


async def test_a_declined_call_is_refused_and_sends_nothing() -> None:
    approver = ScriptedApprover(Approval(approved=False, by="alice"))
    async with shelf("milk") as (running, rt):
        with pytest.raises(AgentApprovalError) as info:
            await rt.messages.dispatch(
                "remove_item", {"title": "milk"}, Invocation(approver=approver)
            )
        assert info.value.reason == "declined"
        assert running.applied == 0
        assert running.host.model().items == ("milk",)
        entry = rt.audit.entries()[-1]
        assert (entry.decision, entry.outcome, entry.approval, entry.approved_by) == (
            "refused",
            "AgentApprovalError",
            "declined",
            None,
        )
        outcome = summarize(info.value)
        assert (outcome.kind, outcome.data["reason"]) == ("refused", "declined")


async def test_without_an_approver_the_call_fails_closed_as_unavailable() -> None:
    async with shelf("milk") as (running, rt):
        with pytest.raises(AgentApprovalError) as info:
            await rt.messages.dispatch("remove_item", {"title": "milk"})
        assert info.value.reason == "unavailable"
        assert "cannot ask" in info.value.message
        assert running.applied == 0
        assert rt.audit.entries()[-1].approval == "unavailable"


async def test_an_unanswered_request_times_out_cancels_the_question_and_sends_nothing() -> None:
    approver = HeldApprover()
    async with shelf("milk", approval_timeout=0.05) as (running, rt):
        with pytest.raises(AgentApprovalError) as info:
            await rt.messages.dispatch(
                "remove_item", {"title": "milk"}, Invocation(approver=approver)
            )
        assert (info.value.reason, info.value.timeout) == ("timeout", 0.05)
        assert approver.cancelled == 1
        assert approver.futures[0].cancelled()
        assert running.applied == 0
        assert rt.audit.entries()[-1].approval == "timeout"
        assert rt.pending() == 0


async def test_setting_the_signal_while_waiting_cancels_with_nothing_dispatched() -> None:
    approver = HeldApprover()
    signal = asyncio.Event()
    async with shelf("milk") as (running, rt):
        call = asyncio.ensure_future(
            rt.messages.dispatch(
                "remove_item", {"title": "milk"}, Invocation(approver=approver, signal=signal)
            )
        )
        await approver.asked.wait()
        signal.set()
        with pytest.raises(AgentCancelledError) as info:
            await call
        assert info.value.dispatched is False
        assert approver.cancelled == 1
        assert running.applied == 0
        entry = rt.audit.entries()[-1]
        assert (entry.decision, entry.outcome, entry.approval) == (
            "refused",
            "AgentCancelledError",
            None,
        )


async def test_cancelling_the_waiting_task_reraises_after_auditing_and_sends_nothing() -> None:
    approver = HeldApprover()
    async with shelf("milk") as (running, rt):
        call = asyncio.ensure_future(
            rt.messages.dispatch("remove_item", {"title": "milk"}, Invocation(approver=approver))
        )
        await approver.asked.wait()
        call.cancel()
        with pytest.raises(asyncio.CancelledError):
            await call
        assert approver.cancelled == 1
        assert running.applied == 0
        entry = rt.audit.entries()[-1]
        assert (entry.decision, entry.outcome) == ("refused", "AgentCancelledError")
        assert rt.pending() == 0


async def test_an_answer_after_the_timeout_sends_nothing() -> None:
    approver = HeldApprover()
    async with shelf("milk", approval_timeout=0.05) as (running, rt):
        with pytest.raises(AgentApprovalError):
            await rt.messages.dispatch(
                "remove_item", {"title": "milk"}, Invocation(approver=approver)
            )
        assert approver.futures[0].done()  # cancelled: a late answer has nowhere to go
        await running.settled()
        assert running.applied == 0


@pytest.mark.parametrize(
    "answer",
    [
        pytest.param(lambda r: (_ for _ in ()).throw(ConnectionError("gone")), id="raises"),
        pytest.param(lambda r: True, id="a-bare-bool"),
        pytest.param(lambda r: {"approved": True}, id="a-dict"),
        pytest.param(lambda r: Approval(approved=1), id="approved-not-True"),  # type: ignore[arg-type]
    ],
)
async def test_an_approver_that_fails_or_answers_oddly_never_approves(answer: Any) -> None:
    approver = ScriptedApprover(answer)
    async with shelf("milk") as (running, rt):
        with pytest.raises(AgentApprovalError) as info:
            await rt.messages.dispatch(
                "remove_item", {"title": "milk"}, Invocation(approver=approver)
            )
        assert info.value.reason in {"unavailable", "declined"}
        assert running.applied == 0


async def test_refusals_before_the_confirm_step_never_ask_a_person() -> None:
    approver = ScriptedApprover(Approval(approved=True))
    async with shelf() as (_running, rt):
        with pytest.raises(AgentCapabilityUnavailableError):
            await rt.messages.dispatch(
                "remove_item", {"title": "milk"}, Invocation(approver=approver)
            )
    async with shelf("milk") as (_running, rt):
        with pytest.raises(AgentInvalidInputError):
            await rt.messages.dispatch("remove_item", {"title": 5}, Invocation(approver=approver))
    assert approver.requests == []


async def test_authorization_runs_before_anyone_is_asked() -> None:
    d = Shelf.make(
        context=projection.pick(App.model.items),
        messages=Shelf.expose(
            {
                RemovedItem: Shelf.variant(
                    description="Remove", authorize=lambda r: agent.Deny("no"), confirm=True
                )
            }
        ),
    )
    approver = ScriptedApprover(Approval(approved=True))
    host = RecordingHost(Model(items=("milk",)))
    rt = agent.bind(definition=d, host=host, principal=lambda inv: None)
    with pytest.raises(AgentAuthorizationError):
        await rt.messages.dispatch(RemovedItem, {"title": "milk"}, Invocation(approver=approver))
    assert approver.requests == []
    assert host.dispatched == []


async def test_a_predicate_asks_only_for_the_calls_it_picks() -> None:
    approver = ScriptedApprover(Approval(approved=False))
    async with shelf() as (running, rt):
        await rt.messages.dispatch("add_item", {"title": "tea"}, Invocation(approver=approver))
        assert approver.requests == []
        assert rt.audit.entries()[-1].approval is None
        with pytest.raises(AgentApprovalError):
            await rt.messages.dispatch("add_item", {"title": "!tea"}, Invocation(approver=approver))
        assert [r.input for r in approver.requests] == [{"title": "!tea"}]
        assert running.host.model().items == ("tea",)


@pytest.mark.parametrize("kind", ["async", "raises"])
async def test_an_async_predicate_is_awaited_and_one_that_raises_asks_a_person(kind: str) -> None:
    async def async_yes(request: Any) -> bool:
        return True

    def broken(request: Any) -> bool:
        raise KeyError("oops")

    d = Shelf.make(
        context=projection.pick(App.model.items),
        messages=Shelf.expose(
            {
                RemovedItem: Shelf.variant(
                    description="Remove", confirm=async_yes if kind == "async" else broken
                )
            }
        ),
    )
    host = RecordingHost(Model(items=("milk",)))
    rt = agent.bind(definition=d, host=host)
    with pytest.raises(AgentApprovalError) as info:
        await rt.messages.dispatch(RemovedItem, {"title": "milk"})
    assert info.value.reason == "unavailable"
    assert host.dispatched == []


async def test_a_host_that_cannot_simulate_asks_without_a_preview() -> None:
    approver = ScriptedApprover(Approval(approved=True))
    host = RecordingHost(Model(items=("milk",)))
    rt = agent.bind(definition=Contract, host=host)
    await rt.messages.dispatch("remove_item", {"title": "milk"}, Invocation(approver=approver))
    assert (approver.requests[0].preview, approver.requests[0].summary) == (None, None)
    assert host.dispatched == [RemovedItem(title="milk")]
    # the preview reads no second snapshot; the answer reads one, to bind it to its Model
    assert host.model_reads == 2


async def test_a_confirmed_call_with_a_completion_contract_completes_after_approval() -> None:
    d = Shelf.make(
        context=projection.pick(App.model.items),
        messages=Shelf.expose(
            {
                RemovedItem: Shelf.variant(
                    description="Remove",
                    confirm=True,
                    completion=agent.when(
                        projection=projection.pick(App.model.items),
                        predicate=lambda value, request: request.title not in value["items"],
                        timeout=1.0,
                    ),
                )
            }
        ),
    )
    approver = ScriptedApprover(Approval(approved=True, by="bob"))
    async with Program(init=Model(items=("milk",)), update=update).run() as running:
        rt = agent.bind(definition=d, host=running.host, audit=agent.audit_log())
        result = await rt.messages.dispatch(
            RemovedItem, {"title": "milk"}, Invocation(approver=approver)
        )
        assert result.completion is not None
        assert result.completion.status == "completed"
        assert rt.audit is not None
        assert rt.audit.entries()[-1].approved_by == "bob"


def test_bind_refuses_an_approval_timeout_that_is_not_positive() -> None:
    host = Host(model=Model, dispatch=lambda m: None)
    for bad in (0, -1, float("nan"), True, "5"):
        with pytest.raises(AgentContractError, match="approval_timeout"):
            agent.bind(definition=Contract, host=host, approval_timeout=bad)  # type: ignore[arg-type]
    rt = agent.bind(definition=Contract, host=host, approval_timeout=timedelta(minutes=1))
    assert rt.approval_timeout == 60.0
    assert agent.bind(definition=Contract, host=host).approval_timeout == 300.0


async def test_concurrent_requests_are_answered_independently() -> None:
    approver = HeldApprover()
    async with shelf("a", "b", "c") as (running, rt):
        calls = [
            asyncio.ensure_future(
                rt.messages.dispatch("remove_item", {"title": t}, Invocation(approver=approver))
            )
            for t in ("a", "b", "c")
        ]
        while len(approver.futures) < 3:
            approver.asked.clear()
            await approver.asked.wait()
        by_title = {
            r.message.title: f for r, f in zip(approver.requests, approver.futures, strict=True)
        }  # type: ignore[attr-defined]
        by_title["b"].set_result(Approval(approved=True))
        by_title["a"].set_result(Approval(approved=False))
        by_title["c"].set_result(Approval(approved=True))
        results = await asyncio.gather(*calls, return_exceptions=True)
        assert isinstance(results[0], AgentApprovalError)
        assert [type(r).__name__ for r in results[1:]] == ["DispatchResult", "DispatchResult"]
        assert running.host.model().items == ("a",)


def test_approval_requests_are_plain_values() -> None:
    request = ApprovalRequest(
        capability="c",
        title="c",
        description="d",
        input={},
        message=Msg.Noted(text="x"),
        preview=[],
    )
    assert request.summary is None
