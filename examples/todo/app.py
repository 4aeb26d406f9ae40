"""The todo application: Model, Messages and update, written without any agent in mind."""

from __future__ import annotations

import asyncio
from typing import Any

from pydantic import BaseModel

from foldkit_agent import Message, message_union, surface

SAVE_DELAY = 0.05
"""Seconds the pretend backend takes to save a todo."""


# MODEL


class Todo(BaseModel, frozen=True):
    id: str
    title: str
    completed: bool = False
    saved: bool = False


class Model(BaseModel, frozen=True):
    todos: tuple[Todo, ...] = ()
    selected_todo_id: str | None = None
    next_id: int = 1


# MESSAGE


class RequestedCreateTodo(Message):
    title: str
    request_id: str | None = None


class SavedTodo(Message):
    id: str
    request_id: str | None = None


class FailedToSaveTodo(Message):
    id: str
    reason: str
    request_id: str | None = None


class RequestedRenameTodo(Message):
    id: str
    title: str


class ToggledTodo(Message):
    id: str


class SelectedTodo(Message):
    id: str


class ClearedSelection(Message):
    pass


class RequestedDeleteTodo(Message):
    id: str


class ReceivedTodos(Message):
    todos: tuple[Todo, ...]


TodoMessage = message_union(
    RequestedCreateTodo,
    SavedTodo,
    FailedToSaveTodo,
    RequestedRenameTodo,
    ToggledTodo,
    SelectedTodo,
    ClearedSelection,
    RequestedDeleteTodo,
    ReceivedTodos,
)


# COMMAND


def save_todo(todo: Todo, duplicate: bool, request_id: str | None) -> Any:
    """Pretend to save ``todo`` remotely; a duplicate title is refused by the 'server'."""

    async def run() -> Message:
        await asyncio.sleep(SAVE_DELAY)
        if duplicate:
            return FailedToSaveTodo(
                id=todo.id, reason="a todo with this title already exists", request_id=request_id
            )
        return SavedTodo(id=todo.id, request_id=request_id)

    return run


# UPDATE


def _replace(model: Model, todo_id: str, **changes: Any) -> Model:
    todos = tuple(t.model_copy(update=changes) if t.id == todo_id else t for t in model.todos)
    return model.model_copy(update={"todos": todos})


def update(model: Model, message: Message) -> Model | tuple[Model, list[Any]]:
    match message:
        case RequestedCreateTodo(title=title, request_id=request_id):
            todo = Todo(id=f"todo-{model.next_id}", title=title)
            duplicate = any(t.title.casefold() == todo.title.casefold() for t in model.todos)
            next_model = model.model_copy(
                update={"todos": (*model.todos, todo), "next_id": model.next_id + 1}
            )
            return next_model, [save_todo(todo, duplicate, request_id)]
        case SavedTodo(id=todo_id):
            return _replace(model, todo_id, saved=True)
        case FailedToSaveTodo(id=todo_id):
            todos = tuple(t for t in model.todos if t.id != todo_id)
            selected = None if model.selected_todo_id == todo_id else model.selected_todo_id
            return model.model_copy(update={"todos": todos, "selected_todo_id": selected})
        case RequestedRenameTodo(id=todo_id, title=title):
            return _replace(model, todo_id, title=title)
        case ToggledTodo(id=todo_id):
            todo = next((t for t in model.todos if t.id == todo_id), None)
            return model if todo is None else _replace(model, todo_id, completed=not todo.completed)
        case SelectedTodo(id=todo_id):
            if not any(t.id == todo_id for t in model.todos):
                return model
            return model.model_copy(update={"selected_todo_id": todo_id})
        case ClearedSelection():
            return model.model_copy(update={"selected_todo_id": None})
        case RequestedDeleteTodo(id=todo_id):
            todos = tuple(t for t in model.todos if t.id != todo_id)
            selected = None if model.selected_todo_id == todo_id else model.selected_todo_id
            return model.model_copy(update={"todos": todos, "selected_todo_id": selected})
        case ReceivedTodos(todos=todos):
            return model.model_copy(update={"todos": todos})
        case _:
            return model


App = surface.application(model=Model, message=TodoMessage, initial=Model(), update=update)
