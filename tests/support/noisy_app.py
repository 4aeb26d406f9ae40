"""A todo app that prints to standard output at import, at start-up and in ``update``.

``foldkit-agent serve tests.support.noisy_app:runtime --mcp stdio`` must keep all of it off
the wire (issue 19): over stdio, standard output carries only JSON-RPC frames.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from examples.todo import run_todo
from foldkit_agent import AgentRuntime

print("noisy_app: imported")  # what a careless module does


@asynccontextmanager
async def runtime() -> AsyncIterator[AgentRuntime[Any, Any]]:
    print("noisy_app: starting the application")
    async with run_todo() as (running, rt):

        def shout(_change: Any) -> None:
            print("noisy_app: something changed")

        unsubscribe = rt.watch(shout)
        try:
            yield rt
        finally:
            unsubscribe()
            print("noisy_app: stopped", running.model().next_id)
