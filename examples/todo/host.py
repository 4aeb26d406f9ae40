"""The todo application running on foldkit-agent's Program, with its agent runtime bound."""

from __future__ import annotations

import asyncio
import contextlib
import os
from collections.abc import AsyncGenerator
from contextlib import asynccontextmanager
from typing import Any

from foldkit_agent import AgentRuntime, AuditLog, Program, Running, agent

from .app import Model, TodoMessage, load_todos, update, with_store
from .contract import AppAgent, TodoAgent, principal
from .store import DEFAULT_TENANT, STORE_ENV, TodoStore, open_store

SETTLE_AT_EXIT = 5.0
"""Seconds the saves still running at exit get to reach the store."""


@asynccontextmanager
async def run_todo(
    *,
    audit: AuditLog | None = None,
    initial: Model | None = None,
    store: TodoStore | str | None = None,
    tenant: str = DEFAULT_TENANT,
) -> AsyncGenerator[tuple[Running[Model, Any], AgentRuntime[Model, Any]]]:
    """Run the todo application and bind its agent contract; yields ``(running, runtime)``.

    Args:
        audit: the runtime's audit log (default: 1000 entries in memory, principal by id).
        initial: the Model to start from, before the saved todos arrive.
        store: where the app saves: a :class:`~examples.todo.store.TodoStore`, or what
            :func:`~examples.todo.store.open_store` takes (a SQLite path, ``":memory:"``, a
            PostgreSQL DSN); a store opened here is closed at exit. ``None``: nowhere (the
            todos live in the Model only, and a save just takes ``SAVE_DELAY``).
        tenant: whose todos to open when ``store`` is a string.

    The saved todos are loaded before the runtime is yielded, through the app's own
    ``ReceivedTodos`` Message (a Command at init), so an agent's first call sees them.
    """
    if isinstance(store, str):
        todo_store, owned = await open_store(store, tenant=tenant), True
    else:
        todo_store, owned = store, False
    try:
        program: Program[Model, Any] = (
            Program(init=initial or Model(), update=update, message=TodoMessage)
            if todo_store is None  # the Model is all there is
            else Program(
                init=(initial or Model(), [load_todos(todo_store)]),
                update=with_store(todo_store),
                message=TodoMessage,
            )
        )
        async with program.run() as running:
            await running.settled()  # the saved todos have arrived
            runtime = TodoAgent.bind(
                definition=AppAgent,
                host=running.host,
                audit=audit
                if audit is not None
                else agent.audit_log(capacity=1000, principal=lambda u: u.id),
                principal=principal,
            )
            try:
                yield running, runtime
            finally:
                runtime.close()
                if todo_store is not None:
                    with contextlib.suppress(TimeoutError):
                        async with asyncio.timeout(SETTLE_AT_EXIT):
                            await running.settled()  # the last saves reach the store
    finally:
        if owned and todo_store is not None:
            await todo_store.close()


@asynccontextmanager
async def runtime(tenant: str = DEFAULT_TENANT) -> AsyncGenerator[AgentRuntime[Model, Any]]:
    """What ``foldkit-agent serve examples.todo:runtime`` runs: the bound todo runtime.

    Its todos live where the environment variable ``FOLDKIT_TODO_STORE`` says (a SQLite path
    or a PostgreSQL DSN; unset: in memory). With ``serve --tenant-from``, ``tenant`` is the
    caller's tenant and each tenant has its own todos in the same database.
    """
    async with run_todo(store=os.environ.get(STORE_ENV) or None, tenant=tenant) as (_r, rt):
        yield rt
