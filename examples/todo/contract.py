"""What an agent may see and do in the todo application."""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import BaseModel, Field, StringConstraints

from foldkit_agent import Invocation, agent, projection

from .app import (
    App,
    ClearedSelection,
    FailedToSaveTodo,
    Model,
    RequestedCreateTodo,
    RequestedDeleteTodo,
    RequestedRenameTodo,
    SavedTodo,
    SelectedTodo,
    TodoMessage,
    ToggledTodo,
)


class User(BaseModel, frozen=True):
    """Who is calling, as the transport authenticated them."""

    id: str
    can_delete: bool = False


def principal(invocation: Invocation) -> User | None:
    """The caller, derived only from what the transport authenticated.

    A :class:`User` passed in-app is taken as is; an MCP access token maps its subject (or
    client id) to a user, who may delete when the token carries the ``todos:delete`` scope.
    No credentials, no principal.
    """
    creds = invocation.credentials
    if isinstance(creds, User):
        return creds
    subject = getattr(creds, "subject", None) or getattr(creds, "client_id", None)
    if not isinstance(subject, str) or not subject:
        return None
    scopes = getattr(creds, "scopes", None) or ()
    return User(id=subject, can_delete="todos:delete" in scopes)


_BLANK = r"\x00-\x20\x7f-\xa0\u1680\u2000-\u200a\u2028-\u2029\u202f\u205f\u3000\ufeff"
"""Control characters and every character a JSON Schema, Python or Rust regex calls space."""

_CONTROL = r"\x00-\x1f\x7f-\x9f"
"""Control characters (Unicode's Cc: C0, DEL and C1), refused anywhere in a title."""

TITLE_PATTERN = rf"^[^{_BLANK}]([^{_CONTROL}]*[^{_BLANK}])?$"
"""A title neither starts nor ends with a space, and has no control character anywhere (a NUL
is refused here, rather than by the database when the todo is saved).

Written so that every regex dialect reads it alike (escapes, not ``\\s``, for the ends), so the
schema an agent is shown is exactly the rule applied; nothing is stripped behind its back."""

Title = Annotated[str, StringConstraints(min_length=1, max_length=200, pattern=TITLE_PATTERN)]
"""A todo title: 1 to 200 characters, no leading or trailing space, no control character
(stored as sent)."""


class CreateTodoInput(BaseModel):
    title: Title = Field(description="What needs doing, with no leading or trailing space")


class RenameTodoInput(BaseModel):
    id: str = Field(description="The id of the todo to rename, as listed in the context")
    title: Title = Field(description="The new title, with no leading or trailing space")


class TodoId(BaseModel):
    id: str = Field(description="The id of a todo, as listed in the context")


class NoInput(BaseModel):
    pass


def _existing(model: Model, todo_id: str) -> str:
    """``todo_id`` if the Model has that todo; otherwise the call is refused as invalid input."""
    if not any(t.id == todo_id for t in model.todos):
        raise agent.InputRejected("no todo has this id; read the context for the ids", path="id")
    return todo_id


def _create(inp: CreateTodoInput, ctx: Any) -> RequestedCreateTodo:
    return RequestedCreateTodo(title=inp.title, request_id=ctx.invocation.id)


def _delete_selected(_: NoInput, ctx: Any) -> RequestedDeleteTodo:
    model: Model = ctx.model
    assert model.selected_todo_id is not None  # `available` approved this very snapshot
    return RequestedDeleteTodo(id=model.selected_todo_id)


def _describe_delete(request: Any) -> str:
    """The sentence the person approving a delete reads: which todo, by its title."""
    model: Model = request.model
    todo = next((t for t in model.todos if t.id == model.selected_todo_id), None)
    return f'Delete the todo "{todo.title}"' if todo is not None else "Delete the selected todo"


def _may_delete(request: Any) -> bool | agent.Deny:
    user: User | None = request.principal
    if user is None:
        return agent.Deny("sign in to delete todos")
    if not user.can_delete:
        return agent.Deny(f"{user.id} may not delete todos")
    return True


def _renamed(value: dict[str, Any], request: RenameTodoInput) -> bool:
    return any(t.id == request.id and t.title == request.title for t in value["todos"])


Todos = projection.pick(App.model.todos)

TodoAgent = agent.for_application(App).with_principal(User)

AppAgent = TodoAgent.make(
    context=projection.pick(App.model.todos, App.model.selected_todo_id),
    messages=TodoAgent.expose(
        TodoMessage,
        {
            RequestedCreateTodo: TodoAgent.variant(
                name="create_todo",
                title="Create todo",
                # adds a todo and saves it to the app's own backend; a repeat adds another
                destructive=False,
                open_world=False,
                description="Create a new todo. Completes once the todo is saved.",
                input=CreateTodoInput,
                to_message=_create,
                completion=agent.Completion(
                    success=SavedTodo,
                    failure=FailedToSaveTodo,
                    correlate=agent.by_invocation_id("request_id"),
                    timeout=5.0,
                ),
            ),
            RequestedRenameTodo: TodoAgent.variant(
                name="rename_todo",
                title="Rename todo",
                # overwrites the old title; renaming to the same title again changes nothing
                destructive=True,
                idempotent=True,
                open_world=False,
                description="Rename an existing todo. Completes when the list shows the new title.",
                available=lambda model: len(model.todos) > 0,
                input=RenameTodoInput,
                to_message=lambda inp, ctx: RequestedRenameTodo(
                    id=_existing(ctx.model, inp.id), title=inp.title
                ),
                completion=agent.when(projection=Todos, predicate=_renamed, timeout=2.0),
            ),
            ToggledTodo: TodoAgent.variant(
                name="toggle_todo",
                title="Toggle todo",
                # flips a flag that the next toggle flips back: nothing is lost, but a
                # repeat undoes the first call
                destructive=False,
                open_world=False,
                description="Mark a todo done, or not done again.",
                available=lambda model: len(model.todos) > 0,
                input=TodoId,
                to_message=lambda inp, ctx: ToggledTodo(id=_existing(ctx.model, inp.id)),
            ),
            SelectedTodo: TodoAgent.variant(
                name="select_todo",
                title="Select todo",
                destructive=False,
                idempotent=True,
                open_world=False,
                description="Select a todo, as a person clicking it would.",
                available=lambda model: len(model.todos) > 0,
                input=TodoId,
                to_message=lambda inp, ctx: SelectedTodo(id=_existing(ctx.model, inp.id)),
            ),
            ClearedSelection: TodoAgent.variant(
                name="clear_selection",
                title="Clear selection",
                destructive=False,
                idempotent=True,
                open_world=False,
                description="Clear the current selection.",
                available=lambda model: model.selected_todo_id is not None,
            ),
            RequestedDeleteTodo: TodoAgent.variant(
                name="delete_todo",
                title="Delete selected todo",
                # a repeat would delete whichever todo is selected by then
                destructive=True,
                open_world=False,
                description=(
                    "Delete the selected todo. Only users allowed to delete may do this, and a "
                    "person approves each delete first, shown which todo it removes."
                ),
                available=lambda model: model.selected_todo_id is not None,
                input=NoInput,
                to_message=_delete_selected,
                authorize=_may_delete,
                confirm=True,
                describe=_describe_delete,
            ),
        },
    ),
    resources=[
        TodoAgent.resource(
            "todos",
            description="Every todo with its id, title, and whether it is done and saved.",
            projection=Todos,
        ),
    ],
    # MCP Apps hosts render it beside the chat: the todos, and a form per capability
    view=agent.view(title="Todos"),
)
