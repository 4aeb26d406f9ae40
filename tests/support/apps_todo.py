"""The todo application with a person-only capability in its view (MCP Apps).

``AppOnly`` exposes ``selected_todo`` to everyone and ``clear_selection`` only to a person in
the view (``agent.view(app_only=[ClearedSelection])``); ``runtime`` is what
``foldkit-agent serve tests.support.apps_todo:runtime`` runs.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator
from contextlib import asynccontextmanager
from typing import Any

from examples.todo import TodoAgent, TodoMessage, run_todo
from examples.todo.app import App, ClearedSelection, Model, SelectedTodo
from foldkit_agent import AgentRuntime, agent, projection

AppOnly = TodoAgent.make(
    context=projection.pick(App.model.todos, App.model.selected_todo_id),
    messages=TodoAgent.expose(
        TodoMessage,
        {
            SelectedTodo: "Select a todo",
            ClearedSelection: TodoAgent.variant(
                name="clear_selection", description="Clear the current selection"
            ),
        },
    ),
    view=agent.view(title="Selection", app_only=[ClearedSelection]),
)


@asynccontextmanager
async def runtime() -> AsyncGenerator[AgentRuntime[Model, Any]]:
    """The todo application bound to :data:`AppOnly`."""
    async with run_todo() as (running, _rt):
        rt = TodoAgent.bind(definition=AppOnly, host=running.host)
        try:
            yield rt
        finally:
            rt.close()
