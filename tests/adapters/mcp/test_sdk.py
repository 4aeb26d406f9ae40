"""The private parts of the ``mcp`` SDK the adapter reaches (adapters/mcp/_sdk.py) are still
where it reaches for them: each test fails when an SDK upgrade moves one."""

from __future__ import annotations

import inspect
from contextlib import AsyncExitStack
from typing import Any

import mcp.types as types
from mcp import Client
from mcp.server import Server, ServerRequestContext
from mcp.server.connection import Connection
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

from foldkit_agent.adapters.mcp._sdk import connection_of


def _recording_server(seen: list[Connection | None]) -> Server[Any]:
    async def list_tools(
        ctx: ServerRequestContext[Any, Any], params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        seen.append(connection_of(ctx))
        return types.ListToolsResult(tools=[])

    return Server("sdk-probe", on_list_tools=list_tools)


async def test_every_request_of_one_legacy_client_reaches_the_same_connection() -> None:
    seen: list[Connection | None] = []
    async with Client(_recording_server(seen), mode="legacy") as client:
        await client.list_tools()
        await client.list_tools()
    first, second = seen
    assert isinstance(first, Connection)
    assert second is first  # one per connection, although the SDK builds a session per request


async def test_a_modern_request_reaches_a_connection_that_says_its_era() -> None:
    seen: list[Connection | None] = []
    async with Client(_recording_server(seen), mode="auto") as client:
        await client.list_tools()
    (connection,) = seen
    assert isinstance(connection, Connection)
    assert connection.protocol_version in MODERN_PROTOCOL_VERSIONS  # the feed skips these


async def test_a_legacy_connection_has_what_the_change_feed_uses() -> None:
    seen: list[Connection | None] = []
    async with Client(_recording_server(seen), mode="legacy") as client:
        await client.list_tools()
        (connection,) = seen
        assert connection is not None
        assert connection.protocol_version == client.protocol_version
        assert connection.has_standalone_channel is True
        assert isinstance(connection.exit_stack, AsyncExitStack)
        assert inspect.iscoroutinefunction(connection.notify)
        assert list(inspect.signature(connection.notify).parameters)[:2] == ["method", "params"]


async def test_the_session_manager_still_keeps_its_open_sessions_where_caps_read_them() -> None:
    from mcp.server.streamable_http_manager import StreamableHTTPSessionManager

    from foldkit_agent.adapters.mcp._sdk import open_session_ids

    manager = StreamableHTTPSessionManager(app=Server("sdk-probe"))
    assert open_session_ids(manager) == frozenset()
    assert isinstance(manager._server_instances, dict)  # pyright: ignore[reportPrivateUsage]
    manager._server_instances["s-1"] = object()  # type: ignore[assignment]  # pyright: ignore[reportPrivateUsage, reportArgumentType]
    assert open_session_ids(manager) == frozenset({"s-1"})


async def test_a_running_manager_still_keeps_the_lifespan_state_it_passes_to_requests() -> None:
    from mcp.server.streamable_http_manager import StreamableHTTPSessionManager

    from foldkit_agent.adapters.mcp._sdk import lifespan_state_of

    manager = StreamableHTTPSessionManager(app=Server("sdk-probe"), stateless=True)
    assert lifespan_state_of(manager) is None
    async with manager.run():
        assert lifespan_state_of(manager) == {}  # what Server's default lifespan yields
        assert lifespan_state_of(manager) is manager._lifespan_state  # pyright: ignore[reportPrivateUsage]


def test_the_exchange_context_is_the_one_the_sdks_json_entry_builds() -> None:
    from mcp.server import _streamable_http_modern as modern  # pyright: ignore[reportPrivateUsage]
    from starlette.requests import Request

    from foldkit_agent.adapters.mcp._sdk import exchange_context

    source = inspect.getsource(modern.handle_modern_request)
    assert "_SingleExchangeDispatchContext(" in source
    assert "ServerMessageMetadata(request_context=request)" in source
    assert "serve_one(app, dctx, req.method, req.params" in source
    request = Request({"type": "http", "method": "POST", "headers": [], "path": "/mcp"})
    dctx = exchange_context(request, 7)
    assert isinstance(dctx, modern._SingleExchangeDispatchContext)  # pyright: ignore[reportPrivateUsage]
    assert dctx.request_id == 7
    assert dctx.can_send_request is False
    assert dctx.sink is None  # JSON mode: nothing streamed
    assert dctx.progress_token is None
    assert dctx.message_metadata.request_context is request  # pyright: ignore[reportAttributeAccessIssue]
