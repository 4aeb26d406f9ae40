"""The field check's application: two todos, ``select_todo`` always offered and
``delete_todo`` only once a todo is selected (its ``available_when`` says so).

``foldkit-agent serve tests.support.field_todo:runtime --mcp http`` serves it with the
command's defaults; an agent run selects ``t1`` and then deletes it. Nothing in it asks a
person or a principal, so what the run shows is the listing: whether a capability that
becomes available mid-run can be found by an agent loop that listed its tools once.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator
from contextlib import asynccontextmanager
from typing import Any

from pydantic import BaseModel

from foldkit_agent import AgentRuntime, Message, Program, agent, message_union, projection, surface


class Todo(BaseModel, frozen=True):
    id: str
    title: str


class Model(BaseModel, frozen=True):
    todos: tuple[Todo, ...] = (Todo(id="t1", title="Milk"), Todo(id="t2", title="Bread"))
    selected_todo_id: str | None = None


class SelectedTodo(Message):
    id: str


class DeletedSelected(Message):
    pass


FieldMessage = message_union(SelectedTodo, DeletedSelected)


def update(model: Model, message: Message) -> Model:
    match message:
        case SelectedTodo(id=todo_id) if any(t.id == todo_id for t in model.todos):
            return model.model_copy(update={"selected_todo_id": todo_id})
        case DeletedSelected():
            kept = tuple(t for t in model.todos if t.id != model.selected_todo_id)
            return Model(todos=kept)
        case _:
            return model


App = surface.application(model=Model, message=FieldMessage, initial=Model(), update=update)
FieldAgent = agent.for_application(App)

SELECTED = "a todo is selected (select_todo)"

FieldContract = FieldAgent.make(
    context=projection.pick(App.model.todos, App.model.selected_todo_id),
    messages=FieldAgent.expose(
        FieldMessage,
        {
            SelectedTodo: FieldAgent.variant(
                name="select_todo",
                description="Select a todo by its id.",
                idempotent=True,
                destructive=False,
                open_world=False,
            ),
            DeletedSelected: FieldAgent.variant(
                name="delete_todo",
                description="Delete the selected todo.",
                available=lambda model: model.selected_todo_id is not None,
                available_when=SELECTED,
                destructive=True,
                open_world=False,
            ),
        },
    ),
)


@asynccontextmanager
async def runtime() -> AsyncGenerator[AgentRuntime[Model, Any]]:
    """What ``serve tests.support.field_todo:runtime`` runs."""
    program: Program[Model, Any] = Program(init=Model(), update=update, message=FieldMessage)
    async with program.run() as running:
        rt = FieldAgent.bind(definition=FieldContract, host=running.host)
        try:
            yield rt
        finally:
            rt.close()
