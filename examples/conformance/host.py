"""The conformance app running on foldkit-agent's Program, with its contract bound."""

from __future__ import annotations

from collections.abc import AsyncGenerator
from contextlib import asynccontextmanager
from typing import Any

from foldkit_agent import AgentRuntime, Program

from .app import ConformanceMessage, Model, update
from .contract import ConformanceAgent, Fixtures


@asynccontextmanager
async def runtime() -> AsyncGenerator[AgentRuntime[Model, Any]]:
    """What ``foldkit-agent serve examples.conformance:runtime`` runs (see ``make conformance``)."""
    program: Program[Model, Any] = Program(init=Model(), update=update, message=ConformanceMessage)
    async with program.run() as running:
        rt = Fixtures.bind(definition=ConformanceAgent, host=running.host)
        try:
            yield rt
        finally:
            rt.close()
