"""Per-caller caps on MCP over HTTP: handshake-era sessions and open streams, two callers.

Caller A at its cap is refused (429, a JSON-RPC error naming the cap) while caller B still
gets in; a session the SDK ends for idleness gives its slot back; anonymous callers are one
bucket, so they never take what authenticated callers need.
"""

from __future__ import annotations

import json
from collections.abc import AsyncGenerator
from contextlib import AsyncExitStack, asynccontextmanager
from typing import Any

import httpx
from mcp.server.auth.provider import AccessToken
from mcp_types.version import LATEST_HANDSHAKE_VERSION

from examples.todo import run_todo
from foldkit_agent.adapters.mcp import StaticTokenVerifier, http_app
from foldkit_agent.adapters.mcp._sdk import open_session_ids
from foldkit_agent.edge import CallerLimits, HttpOptions
from tests.support.hostile import MODERN_META, until
from tests.support.mcp_helpers import INITIALIZE
from tests.support.serving import served

VERIFIER = StaticTokenVerifier(
    {
        f"{who}-token": AccessToken(token=f"{who}-token", client_id="t", scopes=[], subject=who)
        for who in ("alice", "bob")
    }
)


def _headers(token: str | None, **more: str) -> dict[str, str]:
    headers = {"Accept": "application/json, text/event-stream", **more}
    if token is not None:
        headers["Authorization"] = f"Bearer {token}"
    return headers


LISTEN = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "subscriptions/listen",
    "params": {"_meta": MODERN_META, "notifications": {"toolsListChanged": True}},
}


@asynccontextmanager
async def serving(**caps: Any) -> AsyncGenerator[tuple[httpx.AsyncClient, Any]]:
    """An MCP app whose per-caller caps are ``CallerLimits(**caps)``."""
    options = HttpOptions(caps=CallerLimits(**caps))
    async with run_todo() as (_running, rt):
        app = http_app(rt, name="t", version="1", token_verifier=VERIFIER, options=options)
        async with served(app) as origin, httpx.AsyncClient(base_url=origin, timeout=10) as hc:
            yield hc, app


async def _initialize(hc: httpx.AsyncClient, token: str | None) -> httpx.Response:
    return await hc.post("/mcp", json=INITIALIZE, headers=_headers(token))


async def test_a_caller_at_its_session_cap_is_refused_and_another_caller_still_gets_in() -> None:
    async with serving(sessions_per_caller=2) as (hc, app):
        for _ in range(2):
            opened = await _initialize(hc, "alice-token")
            assert opened.status_code == 200
            assert opened.headers["mcp-session-id"]
        refused = await _initialize(hc, "alice-token")
        assert refused.status_code == 429
        assert refused.headers["retry-after"] == "5"
        error = refused.json()["error"]
        assert "per-caller cap 2" in error["message"]
        assert "MCP sessions" in error["message"]
        bob = await _initialize(hc, "bob-token")
        assert bob.status_code == 200
        assert len(app.state.mcp_sessions) == 3


async def test_a_session_ended_by_its_idle_timeout_frees_its_slot() -> None:
    async with serving(sessions_per_caller=1, session_idle_timeout=0.3) as (hc, app):
        first = await _initialize(hc, "alice-token")
        assert first.status_code == 200
        manager = app.state.mcp_server.session_manager
        await until(lambda: first.headers["mcp-session-id"] not in open_session_ids(manager))
        again = await _initialize(hc, "alice-token")
        assert again.status_code == 200


async def test_a_deleted_session_frees_its_slot() -> None:
    async with serving(sessions_per_caller=1) as (hc, _app):
        first = await _initialize(hc, "alice-token")
        session = first.headers["mcp-session-id"]
        version = {"mcp-session-id": session, "mcp-protocol-version": LATEST_HANDSHAKE_VERSION}
        deleted = await hc.delete("/mcp", headers=_headers("alice-token", **version))
        assert deleted.status_code == 200
        assert (await _initialize(hc, "alice-token")).status_code == 200


async def test_the_server_wide_session_cap_is_a_503_naming_it() -> None:
    async with serving(sessions_per_caller=5, sessions=2) as (hc, _app):
        assert (await _initialize(hc, "alice-token")).status_code == 200
        assert (await _initialize(hc, "bob-token")).status_code == 200
        refused = await _initialize(hc, "bob-token")
        assert refused.status_code == 503
        assert "cap 2" in refused.json()["error"]["message"]


def _modern(token: str | None) -> dict[str, str]:
    return _headers(
        token, **{"MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "subscriptions/listen"}
    )


@asynccontextmanager
async def _listening(hc: httpx.AsyncClient, token: str | None) -> AsyncGenerator[int]:
    """Open a ``subscriptions/listen`` stream; yield its status while it stays open."""
    async with hc.stream("POST", "/mcp", json=LISTEN, headers=_modern(token)) as response:
        yield response.status_code


async def test_a_caller_at_its_stream_cap_is_refused_and_another_caller_still_listens() -> None:
    async with serving(streams_per_caller=2) as (hc, app), AsyncExitStack() as stack:
        for _ in range(2):
            assert await stack.enter_async_context(_listening(hc, "alice-token")) == 200
        refused = await hc.post("/mcp", json=LISTEN, headers=_modern("alice-token"))
        assert refused.status_code == 429
        assert "open MCP streams" in refused.json()["error"]["message"]
        assert await stack.enter_async_context(_listening(hc, "bob-token")) == 200
        assert app.state.mcp_streams.held_by("principal:alice") == 2
    # the streams ended with their requests: every slot is back
    assert len(app.state.mcp_streams) == 0


async def test_anonymous_callers_share_one_bucket() -> None:
    async with run_todo() as (_running, rt):
        caps = CallerLimits(streams_per_caller=1, streams=2)
        app = http_app(rt, name="t", version="1", options=HttpOptions(caps=caps))
        async with served(app) as origin, httpx.AsyncClient(base_url=origin, timeout=10) as hc:
            async with _listening(hc, None) as first:
                assert first == 200
                second = await hc.post("/mcp", json=LISTEN, headers=_modern(None))
                assert second.status_code == 429
                message = second.json()["error"]["message"]
                assert message.startswith("Anonymous callers already hold 1 open MCP streams")
                assert json.loads(second.text)["id"] is None
                assert len(app.state.mcp_streams) == 1


async def test_at_the_server_cap_the_longest_idle_stream_ends_for_a_new_caller() -> None:
    async with serving(streams_per_caller=2, streams=2) as (hc, app):
        streams = app.state.mcp_streams
        async with hc.stream("POST", "/mcp", json=LISTEN, headers=_modern("alice-token")) as old:
            assert old.status_code == 200
            async with hc.stream(
                "POST", "/mcp", json=LISTEN, headers=_modern("alice-token")
            ) as newer:
                assert newer.status_code == 200
                assert streams.held_by("principal:alice") == 2  # alice fills the server's cap
                async with _listening(hc, "bob-token") as bob:
                    assert bob == 200  # bob still gets a stream ...
                    assert streams.evicted == 1
                    assert streams.held_by("principal:alice") == 1
                    assert streams.held_by("principal:bob") == 1
                    # ... and alice's oldest stream ends cleanly: its chunked body completes
                    # (an abrupt close would raise httpx.RemoteProtocolError here)
                    async for _chunk in old.aiter_bytes():
                        pass
                    assert old.is_stream_consumed
                    assert streams.held_by("principal:alice") == 1  # her newer one stays
    assert len(streams) == 0
