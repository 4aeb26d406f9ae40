"""The todo app with an audit log that records every input (``include_input=True``), for
``foldkit-agent serve tests.support.recorded_app:runtime``: what the audit keeps of a hostile
input is then the server's memory."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from examples.todo import run_todo
from foldkit_agent import AgentRuntime, agent


@asynccontextmanager
async def runtime() -> AsyncIterator[AgentRuntime[Any, Any]]:
    async with run_todo(audit=agent.audit_log(include_input=True)) as (_running, rt):
        yield rt
