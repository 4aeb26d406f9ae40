"""The A2A call context (``foldkit_agent.adapters.a2a.auth.ContextBuilder``): it carries the
request's disconnect watch, so a call whose client goes away before its answer is aborted."""

from __future__ import annotations

import asyncio
from typing import Any

from starlette.requests import Request

from foldkit_agent.adapters.a2a.auth import ContextBuilder
from foldkit_agent.edge.disconnect import CLIENT_GONE, WATCH, Watch


async def test_a_call_context_carries_the_watch_so_a_client_gone_aborts_its_call() -> None:
    left = asyncio.Event()

    async def receive() -> dict[str, Any]:
        await left.wait()
        return {"type": "http.disconnect"}

    async def send(_message: Any) -> None:
        return None

    scope: dict[str, Any] = {"type": "http", "method": "POST", "path": "/", "headers": []}
    watching = Watch(b"{}", receive, send, scope)
    ctx = ContextBuilder().build(Request(scope))
    assert ctx.state[WATCH] is watching
    assert CLIENT_GONE not in ctx.state  # the watch is the one way a call learns of it

    signal = asyncio.Event()
    ctx.state[WATCH].carries_call(signal)  # what CallsInFlight.run does when the call starts
    left.set()
    await watching.tail
    assert signal.is_set()
    watching.close()


def test_a_request_that_did_not_pass_the_guard_gives_its_call_no_watch() -> None:
    scope: dict[str, Any] = {"type": "http", "method": "POST", "path": "/", "headers": []}
    assert WATCH not in ContextBuilder().build(Request(scope)).state
