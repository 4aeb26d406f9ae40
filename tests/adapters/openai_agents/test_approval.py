"""``confirm`` capabilities through the OpenAI Agents SDK (DESIGN §11): ``needs_approval``
interrupts the run; approving resumes it and sends the very Message the person saw."""

from __future__ import annotations

import json
from typing import Any

from agents import Agent, RunConfig, Runner
from agents.testing import ModelCall, ModelStep, ScriptedModel, assistant_message, function_call

from foldkit_agent.adapters.openai_agents import tools
from tests.support.inproc import AddedNote, Approving, RemovedNote, run_notes

NO_TRACES = RunConfig(tracing_disabled=True)


def script(name: str, args: dict[str, Any]) -> tuple[ScriptedModel, list[str]]:
    """A model that calls one tool, then says what it read back."""
    read: list[str] = []

    def answer(call: ModelCall) -> Any:
        last = call.input[-1] if isinstance(call.input, list) else {}
        read.append(str(last.get("output")) if isinstance(last, dict) else "")
        return [assistant_message("done")]

    model = ScriptedModel(
        [[function_call(name, args, call_id="call-1")], ModelStep.respond(answer)]
    )
    return model, read


async def test_a_confirm_call_interrupts_the_run_and_an_approval_sends_the_message() -> None:
    model, read = script("remove_note", {"index": 0})
    async with run_notes() as (running, rt, sent):
        every = tools(rt, credentials="alice")
        copilot = Agent(name="copilot", model=model, tools=every)
        first = await Runner.run(copilot, "remove the first note", run_config=NO_TRACES)
        (item,) = first.interruptions
        request = every.approval_request(item)
        assert request is not None
        assert every.approval_request("call-1") is request  # or by its call id
        assert every.approval_request("another-call") is None
        assert request.message == RemovedNote(index=0)
        assert request.preview == [{"op": "remove", "path": "/notes/0"}]
        assert running.host.model().notes == ("buy milk", "call mom")
        assert rt.audit.entries() == []
        assert sent == []

        state = first.to_state()
        state.approve(item)
        await Runner.run(copilot, state, run_config=NO_TRACES)
        await running.settled()
        notes = running.host.model().notes
        (entry,) = rt.audit.entries()
    assert notes == ("call mom",)
    assert sent == [RemovedNote(index=0)]  # the Message the person was shown, sent once
    assert (entry.transport, entry.decision, entry.approval) == (
        "openai-agents",
        "dispatched",
        "approved",
    )
    assert json.loads(read[-1])["status"] == "dispatched"


async def test_a_rejected_call_sends_nothing_and_is_audited_as_declined() -> None:
    model, _read = script("remove_note", {"index": 0})
    async with run_notes() as (running, rt, sent):
        copilot = Agent(name="copilot", model=model, tools=tools(rt))
        first = await Runner.run(copilot, "remove the first note", run_config=NO_TRACES)
        (item,) = first.interruptions
        state = first.to_state()
        state.reject(item)
        await Runner.run(copilot, state, run_config=NO_TRACES)
        await running.settled()
        notes = running.host.model().notes
        (entry,) = rt.audit.entries()
    assert sent == []  # the rejected Message never reached update
    assert notes == ("buy milk", "call mom")
    assert (entry.outcome, entry.approval) == ("AgentApprovalError", "declined")


async def test_a_call_the_confirm_predicate_lets_through_runs_without_interruption() -> None:
    model, read = script("add_note", {"text": "short"})
    async with run_notes() as (running, rt, sent):
        copilot = Agent(name="copilot", model=model, tools=tools(rt))
        result = await Runner.run(copilot, "add a short note", run_config=NO_TRACES)
        await running.settled()
        notes = running.host.model().notes
        (entry,) = rt.audit.entries()
    assert result.interruptions == []
    assert notes[-1] == "short"
    assert sent == [AddedNote(text="short")]
    assert entry.approval is None
    assert json.loads(read[-1])["status"] == "dispatched"


async def test_an_approver_given_to_the_tools_is_asked_during_the_call() -> None:
    approve = Approving("alice")
    model, _read = script("remove_note", {"index": 1})
    async with run_notes() as (running, rt, sent):
        every = tools(rt, approver=approve)
        assert all(t.needs_approval is False for t in every)
        copilot = Agent(name="copilot", model=model, tools=every)
        result = await Runner.run(copilot, "remove the second note", run_config=NO_TRACES)
        await running.settled()
        notes = running.host.model().notes
        (entry,) = rt.audit.entries()
    assert result.interruptions == []
    assert [r.message for r in approve.asked] == [RemovedNote(index=1)]
    assert sent == [RemovedNote(index=1)]
    assert notes == ("buy milk",)
    assert (entry.approval, entry.approved_by) == ("approved", "alice")
