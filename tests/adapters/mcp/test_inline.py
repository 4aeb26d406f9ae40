"""Which path a 2026-era ``tools/call`` over HTTP takes (``adapters/mcp/inline.py``).

A call that needs no mid-call notifications is answered in one JSON response, counted in
``app.state.mcp_inline``; a call that carries a ``progressToken``, may wait (a completion
contract, ``confirm``), comes from a handshake-era client or reaches a server with a
``resolve`` target takes the SDK's streaming path. Served over real sockets (``run_http``, as
``serve`` does) to the official ``mcp`` client.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator
from contextlib import asynccontextmanager
from typing import Any

import anyio
import httpx
import pytest

from foldkit_agent.adapters.mcp import http_app, mcp_server
from foldkit_agent.adapters.mcp.inline import is_inline
from foldkit_agent.edge import HttpOptions
from tests.support.mcp_helpers import over_http
from tests.support.paths_app import runtime
from tests.support.paths_calls import call, progress_then_open
from tests.support.serving import served


@asynccontextmanager
async def serving(**kw: Any) -> AsyncGenerator[tuple[Any, Any]]:
    async with runtime() as rt:
        yield (
            rt,
            http_app(
                rt, name="paths", version="1", options=HttpOptions(progress_interval=0.05), **kw
            ),
        )


async def test_a_plain_call_from_the_official_client_is_answered_inline() -> None:
    async with serving() as (rt, app), over_http(app, "auto") as client:
        result = await client.call_tool("bump", {"by": 2})
        assert result.structured_content is not None
        assert result.structured_content["status"] == "dispatched"
        assert app.state.mcp_inline.answered == 1
        assert rt.context()["bumps"] == 2


async def test_a_call_that_may_wait_streams_and_still_completes() -> None:
    async with serving() as (rt, app), over_http(app, "auto") as client:
        async with anyio.create_task_group() as tg:
            answers: list[Any] = []

            async def wait() -> None:
                answers.append(await client.call_tool("wait_for_gate", {}))

            closed = anyio.Event()
            stop = rt.host.observe(
                lambda m: closed.set() if type(m).__name__ == "ClosedGate" else None
            )
            tg.start_soon(wait)
            with anyio.fail_after(10):
                await closed.wait()  # the call's Message was applied: it is waiting now
            stop()
            opened = await client.call_tool("open_gate", {})
            assert not opened.is_error
        (answer,) = answers
        assert answer.structured_content["status"] == "completed"
        assert app.state.mcp_inline.answered == 1  # open_gate only


async def test_a_call_with_a_progress_token_streams_its_progress() -> None:
    async with serving() as (_rt, app), served(app) as origin, httpx.AsyncClient() as http:
        rest = await progress_then_open(http, f"{origin}/mcp")
        assert any('"status":"completed"' in line for line in rest), rest
        assert app.state.mcp_inline.answered == 1  # open_gate only


MODERN_POST = {
    "type": "http",
    "method": "POST",
    "path": "/mcp",
    "headers": [(b"mcp-protocol-version", b"2026-07-28")],
}
"""A 2026-era POST to the endpoint, as the guard hands it on."""


def inline(server: Any, message: dict[str, Any]) -> bool:
    """Whether the HTTP app of ``server`` answers ``message`` on the inline path."""
    return is_inline(server.tools, "/mcp")(MODERN_POST, message)


@pytest.mark.parametrize(
    ("name", "meta"),
    [
        ("approve_bump", {}),  # confirm=True: may wait for a person
        ("wait_for_gate", {}),  # a completion contract
        ("bump", {"progressToken": 3}),  # asked for progress
    ],
)
async def test_what_may_wait_or_asked_for_progress_is_not_inline(
    name: str, meta: dict[str, Any]
) -> None:
    async with runtime() as rt:
        server = mcp_server(rt, name="paths", version="1")
        assert not inline(server, call(name, {"by": 1}, meta))
        assert inline(server, call("bump", {"by": 1}))
        assert inline(server, call("no_such_tool", {}))  # refused at once


async def test_a_server_with_a_resolve_target_never_answers_inline() -> None:
    async with runtime() as rt:
        server = mcp_server(lambda _ctx: rt, name="paths", version="1")
        assert not inline(server, call("bump", {"by": 1}))


async def test_a_handshake_era_client_is_never_answered_inline() -> None:
    async with serving() as (rt, app), over_http(app, "legacy") as client:
        result = await client.call_tool("bump", {"by": 1})
        assert not result.is_error
        assert app.state.mcp_inline.answered == 0
        assert rt.context()["bumps"] == 1
