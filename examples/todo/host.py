"""The todo application running on foldkit-agent's Program, with its agent runtime bound."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from foldkit_agent import AgentRuntime, AuditLog, Program, Running, agent

from .app import Model, update
from .contract import AppAgent, TodoAgent, principal


@asynccontextmanager
async def run_todo(
    *, audit: AuditLog | None = None, initial: Model | None = None
) -> AsyncIterator[tuple[Running[Model, Any], AgentRuntime[Model, Any]]]:
    """Run the todo application and bind its agent contract; yields ``(running, runtime)``."""
    program: Program[Model, Any] = Program(init=initial or Model(), update=update)
    async with program.run() as running:
        runtime = TodoAgent.bind(
            definition=AppAgent,
            host=running.host,
            audit=audit
            if audit is not None
            else agent.audit_log(capacity=1000, record_principal=lambda u: u.id),
            principal=principal,
        )
        try:
            yield running, runtime
        finally:
            runtime.close()


@asynccontextmanager
async def runtime() -> AsyncIterator[AgentRuntime[Model, Any]]:
    """What ``foldkit-agent serve examples.todo:runtime`` runs: the bound todo runtime."""
    async with run_todo() as (_running, rt):
        yield rt
