"""The todo application: Model, Messages and update, written without any agent in mind."""

from __future__ import annotations

import asyncio
import logging
from functools import partial
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel

from foldkit_agent import Message, message_union, surface

if TYPE_CHECKING:
    from .store import TodoStore

_log = logging.getLogger("examples.todo")

SAVE_DELAY = 0.05
"""Seconds the pretend backend takes to save a todo when the app runs without a store."""


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


def save_todo(store: TodoStore | None, todo: Todo, duplicate: bool, request_id: str | None) -> Any:
    """Save ``todo`` to ``store`` (or pretend to, without one); a duplicate title is refused."""

    async def run() -> Message:
        if duplicate:
            await asyncio.sleep(SAVE_DELAY if store is None else 0)
            return FailedToSaveTodo(
                id=todo.id, reason="a todo with this title already exists", request_id=request_id
            )
        try:
            if store is None:
                await asyncio.sleep(SAVE_DELAY)
            elif not await store.create(todo):
                return FailedToSaveTodo(
                    id=todo.id,
                    reason=f"the id {todo.id} is already taken by a todo saved elsewhere; "
                    "reload the todos resource and create it again",
                    request_id=request_id,
                )
        except Exception:  # the driver's text is the server's to read, never the agent's
            _log.warning("saving %s failed", todo.id, exc_info=True)
            return FailedToSaveTodo(
                id=todo.id,
                reason="the todo could not be saved (the store failed); try again",
                request_id=request_id,
            )
        return SavedTodo(id=todo.id, request_id=request_id)

    return run


def write_todo(store: TodoStore | None, todo: Todo | None) -> list[Any]:
    """Store a changed todo (renamed or toggled). Nothing to do without a store, nor for a
    todo whose first save has not answered yet (``SavedTodo`` writes it as it is by then)."""
    if store is None or todo is None or not todo.saved:
        return []

    async def run() -> None:
        await store.save(todo)

    return [run]


def delete_todo(store: TodoStore | None, todo_id: str) -> list[Any]:
    """Remove a deleted todo from the store; nothing to do without a store."""
    if store is None:
        return []

    async def run() -> None:
        await store.delete(todo_id)

    return [run]


def load_todos(store: TodoStore) -> Any:
    """Read the saved todos; the app receives them as :class:`ReceivedTodos` (nothing when
    none were saved)."""

    async def run() -> Message | None:
        todos = await store.load()
        return ReceivedTodos(todos=todos) if todos else None

    return run


# UPDATE


def _replace(model: Model, todo_id: str, **changes: Any) -> Model:
    todos = tuple(t.model_copy(update=changes) if t.id == todo_id else t for t in model.todos)
    return model.model_copy(update={"todos": todos})


def _find(model: Model, todo_id: str) -> Todo | None:
    return next((t for t in model.todos if t.id == todo_id), None)


def _then(model: Model, commands: list[Any]) -> Model | tuple[Model, list[Any]]:
    return (model, commands) if commands else model


def _next_id(todos: tuple[Todo, ...], at_least: int) -> int:
    numbers = [int(t.id[5:]) for t in todos if t.id.startswith("todo-") and t.id[5:].isdigit()]
    return max([at_least, *(n + 1 for n in numbers)])


def update(
    model: Model, message: Message, store: TodoStore | None = None
) -> Model | tuple[Model, list[Any]]:
    """The todo app's transitions; ``store`` is where its Commands save (``None``: nowhere,
    a save only takes :data:`SAVE_DELAY`). :func:`with_store` binds one."""
    match message:
        case RequestedCreateTodo(title=title, request_id=request_id):
            todo = Todo(id=f"todo-{model.next_id}", title=title)
            duplicate = any(t.title.casefold() == todo.title.casefold() for t in model.todos)
            next_model = model.model_copy(
                update={"todos": (*model.todos, todo), "next_id": model.next_id + 1}
            )
            return next_model, [save_todo(store, todo, duplicate, request_id)]
        case SavedTodo(id=todo_id):
            saved = _replace(model, todo_id, saved=True)  # renamed or toggled meanwhile? write
            return _then(saved, write_todo(store, _find(saved, todo_id)))
        case FailedToSaveTodo(id=todo_id):
            todos = tuple(t for t in model.todos if t.id != todo_id)
            selected = None if model.selected_todo_id == todo_id else model.selected_todo_id
            return model.model_copy(update={"todos": todos, "selected_todo_id": selected})
        case RequestedRenameTodo(id=todo_id, title=title):
            renamed = _replace(model, todo_id, title=title)
            return _then(renamed, write_todo(store, _find(renamed, todo_id)))
        case ToggledTodo(id=todo_id):
            todo = _find(model, todo_id)
            if todo is None:
                return model
            toggled = _replace(model, todo_id, completed=not todo.completed)
            return _then(toggled, write_todo(store, _find(toggled, todo_id)))
        case SelectedTodo(id=todo_id):
            if not any(t.id == todo_id for t in model.todos):
                return model
            return model.model_copy(update={"selected_todo_id": todo_id})
        case ClearedSelection():
            return model.model_copy(update={"selected_todo_id": None})
        case RequestedDeleteTodo(id=todo_id):
            todos = tuple(t for t in model.todos if t.id != todo_id)
            selected = None if model.selected_todo_id == todo_id else model.selected_todo_id
            next_model = model.model_copy(update={"todos": todos, "selected_todo_id": selected})
            return _then(next_model, delete_todo(store, todo_id))
        case ReceivedTodos(todos=todos):
            next_id = _next_id(todos, model.next_id)
            return model.model_copy(update={"todos": todos, "next_id": next_id})
        case _:
            return model


def with_store(store: TodoStore) -> Any:
    """``update`` whose Commands save to ``store`` (what :func:`~examples.todo.run_todo` runs)."""
    return partial(update, store=store)


App = surface.application(model=Model, message=TodoMessage, initial=Model(), update=update)
