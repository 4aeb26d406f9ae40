"""``confirm`` capabilities through pydantic-ai (DESIGN §11): deferred tool requests, or an
approver asked in the run. The Message a person approves is the Message dispatched."""

from __future__ import annotations

from typing import Any

from pydantic_ai import Agent, DeferredToolRequests, DeferredToolResults, RunContext, ToolReturnPart
from pydantic_ai.capabilities import HandleDeferredToolCalls
from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart, ToolCallPart
from pydantic_ai.models.function import AgentInfo, FunctionModel

from foldkit_agent.adapters.pydantic_ai import toolset
from tests.support.inproc import AddedNote, Approving, RemovedNote, declining, run_notes


class Script:
    """Calls one tool, then says what it read back."""

    def __init__(self, name: str, args: dict[str, Any]) -> None:
        self.call = ToolCallPart(name, args, tool_call_id="call-1")
        self.read: list[ToolReturnPart] = []

    def __call__(self, messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        last = messages[-1]
        returns = [p for p in getattr(last, "parts", []) if isinstance(p, ToolReturnPart)]
        if not returns:
            return ModelResponse(parts=[self.call])
        self.read.extend(returns)
        return ModelResponse(parts=[TextPart(f"{returns[0].outcome}")])


def agent_for(script: Script, tools: Any) -> Agent[None, str | DeferredToolRequests]:
    return Agent(FunctionModel(script), output_type=[str, DeferredToolRequests], toolsets=[tools])


async def test_a_confirm_call_is_deferred_with_the_message_and_sent_once_approved() -> None:
    script = Script("remove_note", {"index": 0})
    async with run_notes() as (running, rt, sent):
        tools = toolset(rt, credentials="alice")
        copilot = agent_for(script, tools)
        first = await copilot.run("remove the first note")
        assert isinstance(first.output, DeferredToolRequests)
        (pending,) = first.output.approvals
        asked = first.output.metadata[pending.tool_call_id]
        assert asked["message"] == {"_tag": "RemovedNote", "index": 0}
        assert asked["preview"] == [{"op": "remove", "path": "/notes/0"}]
        assert "remove_note" in asked["text"]
        assert running.host.model().notes == ("buy milk", "call mom")  # nothing sent yet
        assert rt.audit.entries() == []  # the call is still waiting, not yet decided
        assert sent == []

        results = DeferredToolResults(
            approvals={pending.tool_call_id: True},
            metadata={pending.tool_call_id: {"approved_by": "bob"}},
        )
        second = await copilot.run(
            message_history=first.all_messages(), deferred_tool_results=results
        )
        await running.settled()
        notes = running.host.model().notes
        (entry,) = rt.audit.entries()
    assert second.output == "success"
    assert notes == ("call mom",)
    assert sent == [RemovedNote(index=0)]  # the Message the person was shown, sent once
    assert (entry.capability, entry.decision, entry.approval, entry.approved_by) == (
        "remove_note",
        "dispatched",
        "approved",
        "bob",
    )
    assert (entry.transport, entry.principal) == ("pydantic-ai", "alice")


async def test_a_denied_call_sends_nothing_and_is_audited_as_declined() -> None:
    script = Script("remove_note", {"index": 0})
    async with run_notes() as (running, rt, sent):
        copilot = agent_for(script, toolset(rt, credentials="alice"))
        first = await copilot.run("remove the first note")
        assert isinstance(first.output, DeferredToolRequests)
        (pending,) = first.output.approvals
        results = DeferredToolResults(approvals={pending.tool_call_id: False})
        second = await copilot.run(
            message_history=first.all_messages(), deferred_tool_results=results
        )
        await running.settled()
        (entry,) = rt.audit.entries()
        notes = running.host.model().notes
    assert second.output == "denied"
    assert sent == []  # the declined Message never reached update
    assert notes == ("buy milk", "call mom")
    assert (entry.decision, entry.outcome, entry.approval) == (
        "refused",
        "AgentApprovalError",
        "declined",
    )


async def test_an_approver_given_to_the_toolset_is_asked_in_the_run() -> None:
    approve = Approving("alice")
    script = Script("remove_note", {"index": 1})
    async with run_notes() as (running, rt, sent):
        copilot = agent_for(script, toolset(rt, credentials="alice", approver=approve))
        result = await copilot.run("remove the second note")
        await running.settled()
        (entry,) = rt.audit.entries()
        notes = running.host.model().notes
    assert result.output == "success"
    (request,) = approve.asked
    assert request.message == RemovedNote(index=1)
    assert sent == [RemovedNote(index=1)]
    assert notes == ("buy milk",)
    assert (entry.approval, entry.approved_by) == ("approved", "alice")


async def test_a_declining_approver_is_a_tool_failure_in_our_words() -> None:
    script = Script("remove_note", {"index": 0})
    async with run_notes() as (running, rt, sent):
        copilot = agent_for(script, toolset(rt, approver=declining))
        await copilot.run("remove the first note")
        notes = running.host.model().notes
    (failure,) = script.read
    assert failure.outcome == "failed"
    assert str(failure.content).startswith("Refused: A person declined the call to 'remove_note'")
    assert sent == []
    assert notes == ("buy milk", "call mom")


async def test_a_call_the_confirm_predicate_lets_through_is_not_deferred() -> None:
    script = Script("add_note", {"text": "short"})
    async with run_notes() as (running, rt, sent):
        result = await agent_for(script, toolset(rt)).run("add a short note")
        await running.settled()
        notes = running.host.model().notes
        (entry,) = rt.audit.entries()
    assert result.output == "success"
    assert notes[-1] == "short"
    assert sent == [AddedNote(text="short")]
    assert entry.approval is None


async def test_the_predicate_defers_what_it_says_needs_a_person() -> None:
    script = Script("add_note", {"text": "a much longer note"})
    async with run_notes() as (_running, rt, _sent):
        first = await agent_for(script, toolset(rt)).run("add a long note")
    assert isinstance(first.output, DeferredToolRequests)
    assert [c.tool_name for c in first.output.approvals] == ["add_note"]


def handling(script: Script, tools: Any, handle: Any) -> Agent[None, str]:
    """An agent whose deferred calls ``handle`` answers within the run."""
    return Agent(
        FunctionModel(script),
        toolsets=[tools],
        capabilities=[HandleDeferredToolCalls(handler=handle)],
    )


async def test_handle_deferred_tool_calls_answers_in_the_run_and_an_approval_sends_once() -> None:
    shown: list[str] = []

    async def handle(ctx: RunContext[None], requests: DeferredToolRequests) -> DeferredToolResults:
        shown.extend(requests.metadata[c.tool_call_id]["text"] for c in requests.approvals)
        return requests.build_results(approve_all=True)

    script = Script("remove_note", {"index": 0})
    async with run_notes() as (running, rt, sent):
        copilot = handling(script, toolset(rt, credentials="alice"), handle)
        result = await copilot.run("remove the first note")
        await running.settled()
        (entry,) = rt.audit.entries()
    assert result.output == "success"
    assert len(shown) == 1
    assert "remove_note" in shown[0]
    assert sent == [RemovedNote(index=0)]
    assert (entry.decision, entry.approval, entry.transport) == (
        "dispatched",
        "approved",
        "pydantic-ai",
    )


async def test_handle_deferred_tool_calls_declining_in_the_run_never_reaches_update() -> None:
    async def handle(ctx: RunContext[None], requests: DeferredToolRequests) -> DeferredToolResults:
        return DeferredToolResults(approvals={c.tool_call_id: False for c in requests.approvals})

    script = Script("remove_note", {"index": 0})
    async with run_notes() as (running, rt, sent):
        copilot = handling(script, toolset(rt, credentials="alice"), handle)
        result = await copilot.run("remove the first note")
        await running.settled()
        (entry,) = rt.audit.entries()
    assert result.output == "denied"
    assert sent == []
    assert (entry.outcome, entry.approval) == ("AgentApprovalError", "declined")
