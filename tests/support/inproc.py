"""What the in-process framework tests share: the todo app's users and one scripted errand.

Each framework's tests drive the todo example (``examples.todo``) through the same errand —
create a todo, select it, clear the selection — and check that the model was offered, at each
step, exactly what the application made available.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from pydantic import BaseModel

from examples.todo import User
from foldkit_agent import (
    AgentRuntime,
    Approval,
    ApprovalRequest,
    Message,
    Program,
    Running,
    agent,
    message_union,
    projection,
    surface,
)

ALICE = User(id="alice", can_delete=True)
"""May delete todos."""

BOB = User(id="bob")
"""May not delete todos."""

EVERY = (
    "create_todo",
    "rename_todo",
    "toggle_todo",
    "select_todo",
    "clear_selection",
    "delete_todo",
)
"""The todo contract's capabilities, in declaration order."""

ERRAND: tuple[tuple[str, dict[str, Any]], ...] = (
    ("create_todo", {"title": "Milk"}),
    ("select_todo", {"id": "todo-1"}),
    ("clear_selection", {}),
)
"""One call per model step."""

OFFERED_DURING_ERRAND = [list(EVERY[:1]), list(EVERY[:4]), list(EVERY), list(EVERY[:4])]
"""What is available before each step of :data:`ERRAND`, and after its last."""


# -- a contract with approval: notes a person must approve removing ---------------------------


class Notes(BaseModel, frozen=True):
    notes: tuple[str, ...] = ("buy milk", "call mom")


class RemovedNote(Message):
    index: int


class AddedNote(Message):
    text: str


NoteMessage = message_union(RemovedNote, AddedNote)


def _update(model: Notes, message: Message) -> Notes:
    if isinstance(message, RemovedNote):
        kept = tuple(n for i, n in enumerate(model.notes) if i != message.index)
        return model.model_copy(update={"notes": kept})
    if isinstance(message, AddedNote):
        return model.model_copy(update={"notes": (*model.notes, message.text)})
    return model


NotesApp = surface.application(model=Notes, message=NoteMessage, initial=Notes(), update=_update)

NOTES = agent.make(
    context=projection.pick(NotesApp.model.notes),
    messages=agent.expose(
        NoteMessage,
        {
            RemovedNote: agent.variant(
                name="remove_note", description="Remove a note", confirm=True
            ),
            AddedNote: agent.variant(
                name="add_note",
                description="Add a note; a long one needs approval",
                confirm=lambda request: len(request.input.text) > 10,
            ),
        },
    ),
)
"""``remove_note`` always asks a person; ``add_note`` only for a text over 10 characters."""


@asynccontextmanager
async def run_notes() -> AsyncIterator[
    tuple[Running[Notes, Any], AgentRuntime[Notes, Any], list[Message]]
]:
    """The notes app on a Program (which can simulate, so approvals carry a preview), its
    runtime, and every Message applied to the Model, in order (a preview's simulation is not
    one)."""
    sent: list[Message] = []
    async with Program(init=Notes(), update=_update).run() as running:
        running.observe(sent.append)
        rt = agent.bind(
            definition=NOTES,
            host=running.host,
            audit=agent.audit_log(capacity=100, record_principal=lambda p: p),
            principal=lambda invocation: invocation.credentials,
        )
        try:
            yield running, rt, sent
        finally:
            rt.close()


class Approving:
    """An approver that answers yes as ``by`` and keeps what it was asked."""

    def __init__(self, by: str) -> None:
        self.by = by
        self.asked: list[ApprovalRequest] = []

    async def __call__(self, request: ApprovalRequest) -> Approval:
        self.asked.append(request)
        return Approval(approved=True, by=self.by)


async def declining(request: ApprovalRequest) -> Approval:
    return Approval(approved=False, by="alice")
