"""A runtime factory that binds the todo contract without ``principal=``: ``bind`` raises a
contract error once ``serve`` opens it (not at import)."""

from __future__ import annotations

from collections.abc import AsyncGenerator
from contextlib import asynccontextmanager
from typing import Any

from examples.todo import AppAgent, Model, TodoAgent, TodoMessage, update
from foldkit_agent import AgentRuntime, Program


@asynccontextmanager
async def runtime() -> AsyncGenerator[AgentRuntime[Model, Any]]:
    """What ``foldkit-agent serve tests.support.unbound_app:runtime`` fails to open."""
    async with Program(init=Model(), update=update, message=TodoMessage).run() as running:
        yield TodoAgent.bind(definition=AppAgent, host=running.host)
