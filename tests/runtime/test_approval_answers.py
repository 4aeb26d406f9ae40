"""Answers bound to their Model, and decisions beyond yes/no (DESIGN §11, §15).

The notes board: ``delete_selected`` (confirm) deletes the selected note, built by
``to_message`` from the snapshot; ``add_note`` (confirm) takes a title the person may edit.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import BaseModel

from foldkit_agent import (
    AgentApprovalError,
    AgentInvalidInputError,
    Approval,
    ApprovalRequest,
    Invocation,
    Message,
    Program,
    agent,
    message_union,
    projection,
    surface,
)


class Note(BaseModel, frozen=True):
    id: str
    title: str


class Board(BaseModel, frozen=True):
    notes: tuple[Note, ...] = ()
    selected: str | None = None


class Selected(Message):
    id: str | None


class Deleted(Message):
    id: str


class Renamed(Message):
    id: str
    title: str


class Added(Message):
    title: str


class DeletedSelected(Message):
    """Names no note: the update deletes whichever is selected when it runs."""


Msg = message_union(Selected, Deleted, Renamed, Added, DeletedSelected)


def update(board: Board, msg: Any) -> Board:
    if isinstance(msg, Selected):
        return board.model_copy(update={"selected": msg.id})
    if isinstance(msg, Deleted):
        notes = tuple(n for n in board.notes if n.id != msg.id)
        return Board(notes=notes, selected=None)
    if isinstance(msg, Renamed):
        notes = tuple(n.model_copy(update={"title": msg.title}) if n.id == msg.id else n
                      for n in board.notes)  # fmt: skip
        return board.model_copy(update={"notes": notes})
    if isinstance(msg, DeletedSelected):
        notes = tuple(n for n in board.notes if n.id != board.selected)
        return Board(notes=notes, selected=None)
    if isinstance(msg, Added):
        note = Note(id=f"n{len(board.notes) + 1}", title=msg.title)
        return board.model_copy(update={"notes": (*board.notes, note)})
    return board


App = surface.application(model=Board, message=Msg, initial=Board(), update=update)
Notes = agent.for_application(App)


class NoInput(BaseModel):
    pass


def _selected_title(board: Board) -> str:
    return next(n.title for n in board.notes if n.id == board.selected)


Contract = Notes.make(
    context=projection.pick(App.model.notes),
    messages=Notes.expose(
        {
            Deleted: Notes.variant(
                name="delete_selected",
                description="Delete the selected note",
                available=lambda board: board.selected is not None,
                input=NoInput,
                to_message=lambda _, ctx: Deleted(id=ctx.model.selected),
                confirm=True,
                describe=lambda request: f'Delete the note "{_selected_title(request.model)}"',
            ),
            Added: Notes.variant(name="add_note", description="Add a note", confirm=True),
            DeletedSelected: Notes.variant(
                name="delete_selection",
                description="Delete the selected note (no sentence of its own)",
                available=lambda board: board.selected is not None,
                confirm=True,
            ),
        }
    ),
)

START = Board(notes=(Note(id="n1", title="milk"), Note(id="n2", title="eggs")), selected="n1")

Person = Callable[[ApprovalRequest, Any], Awaitable[Approval]]


async def _run(name: str, payload: Any, person: Person) -> tuple[Any, Any, list[ApprovalRequest]]:
    """Call ``name`` with ``person`` answering (given the request and the running program)."""
    asked: list[ApprovalRequest] = []
    program = Program(init=START, update=update, message=Msg)
    async with program.run() as running:
        rt = agent.bind(definition=Contract, host=running.host, audit=agent.audit_log())

        async def approver(request: ApprovalRequest) -> Approval:
            asked.append(request)
            return await person(request, running)

        outcome = await rt.call(name, payload, Invocation(approver=approver))
        assert rt.audit is not None
        (entry,) = rt.audit.entries()
        return outcome, (running.model(), entry), asked


async def test_approving_after_the_capability_went_away_sends_nothing_and_is_stale() -> None:
    """F31: select a note, call delete_selected, clear the selection, approve: nothing sent."""

    async def person(request: ApprovalRequest, running: Any) -> Approval:
        running.dispatch(Selected(id=None))
        return Approval(approved=True, by="ann")

    outcome, (board, entry), asked = await _run("delete_selected", {}, person)
    assert outcome.ok is False
    assert outcome.data["reason"] == "stale"
    assert "nothing was sent" in outcome.text
    assert [n.id for n in board.notes] == ["n1", "n2"]
    assert len(asked) == 1
    assert (entry.decision, entry.approval, entry.approval_asks) == ("refused", "stale", 1)
    assert entry.approval_text == 'Delete the note "milk"'


async def test_a_changed_preview_asks_again_and_only_that_answer_sends() -> None:
    answers = iter([True, True])

    async def person(request: ApprovalRequest, running: Any) -> Approval:
        if request.asks == 1:
            running.dispatch(Renamed(id="n1", title="oat milk"))
        return Approval(approved=next(answers), by="ann")

    outcome, (board, entry), asked = await _run("delete_selected", {}, person)
    assert outcome.ok is True
    assert [n.id for n in board.notes] == ["n2"]
    assert [r.asks for r in asked] == [1, 2]
    assert asked[1].sentence == 'Delete the note "oat milk"'
    assert asked[1].text().splitlines()[1].startswith("The application changed while you")
    assert (entry.approval, entry.approval_asks) == ("approved", 2)  # re-asked


async def test_another_note_selected_meanwhile_asks_again_though_the_message_names_none() -> None:
    """The same Message and a removal at another position of the same list: the person saw
    "eggs" go, and approving must not delete "milk" instead."""
    answers = iter(["select eggs, approve", "approve"])

    async def person(request: ApprovalRequest, running: Any) -> Approval:
        if next(answers) == "select eggs, approve":
            running.dispatch(Selected(id="n2"))
        return Approval(approved=True, by="ann")

    outcome, (board, entry), asked = await _run("delete_selection", {}, person)
    assert [r.summary for r in asked] == [
        'removes notes.0 (was {"id": "n1", "title": "milk"})',
        'removes notes.1 (was {"id": "n2", "title": "eggs"})',
    ]
    assert outcome.ok is True
    assert [n.title for n in board.notes] == ["milk"]  # what the second answer was shown
    assert (entry.approval, entry.approval_asks) == ("approved", 2)


async def test_a_second_change_refuses_the_call_as_stale() -> None:
    async def person(request: ApprovalRequest, running: Any) -> Approval:
        running.dispatch(Renamed(id="n1", title=f"milk {request.asks}"))
        return Approval(approved=True)

    outcome, (board, entry), _asked = await _run("delete_selected", {}, person)
    assert outcome.data["reason"] == "stale"
    assert len(board.notes) == 2
    assert (entry.approval, entry.approval_asks) == ("stale", 2)


async def test_an_unrelated_change_keeps_the_approval() -> None:
    async def person(request: ApprovalRequest, running: Any) -> Approval:
        running.dispatch(Added(title="bread"))  # the preview of deleting n1 is the same
        return Approval(approved=True)

    outcome, (board, entry), _asked = await _run("delete_selected", {}, person)
    assert outcome.ok is True
    assert [n.id for n in board.notes] == ["n2", "n3"]
    assert (entry.approval, entry.approval_asks) == ("approved", 1)


async def test_a_decline_with_a_message_reaches_the_agent_in_its_refusal() -> None:
    async def person(request: ApprovalRequest, running: Any) -> Approval:
        return Approval(approved=False, message="Keep milk;\u202e delete eggs instead\n")

    outcome, (board, entry), _ = await _run("delete_selected", {}, person)
    assert outcome.data["reason"] == "declined"
    assert outcome.data["said"] == "Keep milk; delete eggs instead"
    assert "They said: 'Keep milk; delete eggs instead'" in outcome.text
    assert len(board.notes) == 2
    assert entry.approval == "declined"


async def test_an_edited_input_is_decoded_previewed_asked_again_and_applied_once() -> None:
    async def person(request: ApprovalRequest, running: Any) -> Approval:
        if request.asks == 1:
            return Approval(approved=True, input={"title": "oat milk"})
        return Approval(approved=True, by="ann")

    outcome, (board, entry), asked = await _run("add_note", {"title": "milk"}, person)
    assert outcome.ok is True
    assert [n.title for n in board.notes] == ["milk", "eggs", "oat milk"]
    assert asked[1].fields == (("Title", "oat milk"),)
    assert asked[1].summary is not None
    assert "oat milk" in asked[1].summary
    assert (entry.approval, entry.approval_asks) == ("approved", 2)


@settings(max_examples=40, deadline=None)
@given(
    edit=st.one_of(
        st.fixed_dictionaries({"title": st.integers()}),
        st.fixed_dictionaries({"title": st.text(max_size=5)}, optional={"x": st.integers()}),
        st.lists(st.integers(), max_size=2),
    ),
)
def test_property_an_edited_input_is_revalidated_and_invalid_never_sends(edit: Any) -> None:
    async def person(request: ApprovalRequest, running: Any) -> Approval:
        if request.asks == 1:
            return Approval(approved=True, input=edit)
        return Approval(approved=True)

    valid = isinstance(edit, dict) and set(edit) == {"title"} and isinstance(edit["title"], str)
    outcome, (board, _entry), _ = asyncio.run(_run("add_note", {"title": "milk"}, person))
    if valid:
        assert outcome.ok is True
        assert board.notes[-1].title == edit["title"]
    else:
        assert outcome.ok is False
        assert outcome.data["_tag"] == AgentInvalidInputError.tag
        assert len(board.notes) == 2


@settings(max_examples=40, deadline=None)
@given(
    answers=st.lists(
        st.sampled_from(["approve", "decline", "clear", "rename"]), min_size=1, max_size=3
    )
)
def test_property_a_declined_or_stale_call_never_sends(answers: list[str]) -> None:
    script = iter(answers)

    async def person(request: ApprovalRequest, running: Any) -> Approval:
        step = next(script, "approve")
        if step == "clear":
            running.dispatch(Selected(id=None))
        elif step == "rename":
            running.dispatch(Renamed(id="n1", title=f"milk {request.asks}"))
        return Approval(approved=step != "decline", message="no")

    outcome, (board, entry), _ = asyncio.run(_run("delete_selected", {}, person))
    sent = len(board.notes) == 1
    assert sent is outcome.ok
    if not outcome.ok:
        assert outcome.data["_tag"] == AgentApprovalError.tag
        assert outcome.data["reason"] in {"declined", "stale"}
        assert entry.decision == "refused"


@settings(max_examples=40, deadline=None)
@given(selections=st.lists(st.sampled_from(["n1", "n2", None]), min_size=1, max_size=3))
def test_property_an_approved_call_removes_only_the_note_its_last_question_showed(
    selections: list[str | None],
) -> None:
    """Whatever is selected while the person decides, a note is deleted only as the last
    question asked previewed it (a Message that names no note included)."""
    script = iter(selections)

    async def person(request: ApprovalRequest, running: Any) -> Approval:
        chosen = next(script, "keep")
        if chosen != "keep":
            running.dispatch(Selected(id=chosen))
        return Approval(approved=True, by="ann")

    outcome, (board, _entry), asked = asyncio.run(_run("delete_selection", {}, person))
    gone = {n.title for n in START.notes} - {n.title for n in board.notes}
    if outcome.ok:
        (title,) = gone
        assert f'"title": "{title}"' in (asked[-1].summary or "")
    else:
        assert gone == set()
        assert outcome.data["reason"] == "stale"
