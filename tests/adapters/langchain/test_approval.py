"""``confirm`` capabilities through LangChain tools (DESIGN §11): the application's approver is
asked during the call; without one the call fails closed."""

from __future__ import annotations

from langchain_core.messages import ToolMessage

from foldkit_agent.adapters.langchain import tools
from tests.support.inproc import Approving, RemovedNote, declining, run_notes

REMOVE_FIRST = {"name": "remove_note", "args": {"index": 0}, "id": "1", "type": "tool_call"}


async def test_the_approver_is_asked_with_the_message_and_its_answer_is_honoured() -> None:
    approve = Approving("alice")
    async with run_notes() as (running, rt, sent):
        by_name = {t.name: t for t in tools(rt, credentials="alice", approver=approve)}
        answer = await by_name["remove_note"].ainvoke(REMOVE_FIRST)
        await running.settled()
        notes = running.host.model().notes
        (entry,) = rt.audit.entries()
    (request,) = approve.asked
    assert request.message == RemovedNote(index=0)
    assert request.preview == [{"op": "remove", "path": "/notes/0"}]
    assert isinstance(answer, ToolMessage)
    assert answer.status == "success"
    assert notes == ("call mom",)
    assert sent == [RemovedNote(index=0)]
    assert (entry.transport, entry.approval, entry.approved_by) == (
        "langchain",
        "approved",
        "alice",
    )


async def test_a_declined_call_is_an_error_tool_message_and_sends_nothing() -> None:
    async with run_notes() as (running, rt, sent):
        by_name = {t.name: t for t in tools(rt, approver=declining)}
        answer = await by_name["remove_note"].ainvoke(REMOVE_FIRST)
        notes = running.host.model().notes
        (entry,) = rt.audit.entries()
    assert isinstance(answer, ToolMessage)
    assert answer.status == "error"
    assert str(answer.content).startswith("Refused: A person declined the call to 'remove_note'")
    assert sent == []  # the declined Message never reached update
    assert notes == ("buy milk", "call mom")
    assert entry.approval == "declined"


async def test_without_an_approver_a_confirm_call_fails_closed() -> None:
    async with run_notes() as (running, rt, sent):
        by_name = {t.name: t for t in tools(rt)}
        answer = await by_name["remove_note"].ainvoke(REMOVE_FIRST)
        notes = running.host.model().notes
        (entry,) = rt.audit.entries()
    assert isinstance(answer, ToolMessage)
    assert answer.status == "error"
    assert "needs a person's approval" in str(answer.content)
    assert sent == []
    assert notes == ("buy milk", "call mom")
    assert entry.approval == "unavailable"
