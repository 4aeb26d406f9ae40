"""The todo application with a contract whose capabilities declare OAuth scopes.

``create_todo`` needs :data:`WRITE`; ``clear_selection`` needs nothing. The principal is
the verified token's subject and scopes, as the todo example reads them.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from examples.todo.app import App, ClearedSelection, Model, RequestedCreateTodo, TodoMessage
from examples.todo.contract import CreateTodoInput, TodoAgent, principal
from foldkit_agent import AgentRuntime, Program, agent

WRITE = "email"
"""The scope ``create_todo`` needs. One of the test issuer's standard scopes on purpose:
Canaille's access tokens carry no ``jti`` and only the claims of standard scopes, so a token
stepped up to a custom scope within the same second as the first is the same string (and so
the same introspection answer); one stepped up to ``email`` carries the email claim."""

ScopedAgent = TodoAgent.make(
    messages=TodoAgent.expose(
        TodoMessage,
        {
            RequestedCreateTodo: TodoAgent.variant(
                name="create_todo",
                description="Create a new todo.",
                input=CreateTodoInput,
                to_message=lambda inp, _ctx: RequestedCreateTodo(title=inp.title),
                scopes=[WRITE],
            ),
            ClearedSelection: TodoAgent.variant(
                name="clear_selection", description="Clear the current selection."
            ),
        },
    )
)
del App  # the builder above is the app's own


@asynccontextmanager
async def scoped_todo(tenant: str | None = None) -> AsyncIterator[AgentRuntime[Model, Any]]:
    """A running todo app bound to :data:`ScopedAgent`; the runtime sees who called. Each
    ``tenant`` (``serve --tenant-from``) gets its own app."""
    del tenant  # a new app per call is already the tenant's own
    from examples.todo.app import update

    program: Program[Model, Any] = Program(init=Model(), update=update, message=TodoMessage)
    async with program.run() as running:
        runtime = TodoAgent.bind(
            definition=ScopedAgent,
            host=running.host,
            audit=agent.audit_log(capacity=100, principal=lambda u: u.id if u else None),
            principal=principal,
        )
        try:
            yield runtime
        finally:
            runtime.close()
