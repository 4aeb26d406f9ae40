"""Every private part of the ``mcp`` SDK (2.3) the MCP adapter reaches, in one place.

Each is covered by ``tests/adapters/mcp/test_sdk.py``, which fails when an SDK upgrade moves
it; nothing else in :mod:`foldkit_agent.adapters.mcp` reads an SDK attribute that starts with
an underscore.
"""

from __future__ import annotations

from typing import Any, cast

from mcp.server._streamable_http_modern import (  # pyright: ignore[reportPrivateUsage]
    _SingleExchangeDispatchContext,  # pyright: ignore[reportPrivateUsage]
)
from mcp.server.connection import Connection
from mcp.server.context import ServerRequestContext
from mcp.server.streamable_http import check_accept_headers
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
from mcp.shared.dispatcher import DispatchContext
from mcp.shared.message import ServerMessageMetadata
from mcp.shared.transport_context import TransportContext
from mcp_types import RequestId
from starlette.requests import Request

__all__ = [
    "accepts",
    "connection_of",
    "exchange_context",
    "lifespan_state_of",
    "open_session_ids",
]


def accepts(request: Request) -> tuple[bool, bool]:
    """``(accepts JSON, accepts SSE)`` of a request's ``Accept``, as the SDK's HTTP transport
    reads it (``check_accept_headers`` of its streamable-HTTP transport module, where the
    transport's protocol objects live)."""
    return check_accept_headers(request)


def connection_of(ctx: ServerRequestContext[Any, Any]) -> Connection | None:
    """The :class:`~mcp.server.connection.Connection` behind a request's session, or ``None``.

    The SDK builds a new ``ServerSession`` for every request; the connection behind it is what
    lasts from one request to the next (protocol notes §1.3, correction), so handshake-era
    change feeds are keyed on it. ``ServerSession`` keeps it in the private ``_connection``
    and mcp 2.3 has no public accessor. Everything read from the connection itself
    (``protocol_version``, ``has_standalone_channel``, ``exit_stack``, ``notify``) is public.

    Example:
        >>> connection_of(ctx).protocol_version
        '2025-11-25'
    """
    connection = getattr(ctx.session, "_connection", None)
    return connection if isinstance(connection, Connection) else None


def open_session_ids(manager: StreamableHTTPSessionManager) -> frozenset[str]:
    """The ids of the handshake-era sessions ``manager`` holds open right now.

    The session manager ends sessions itself (idle timeout, crash, ``DELETE``) and says so to
    nobody; mcp 2.3 keeps them in the private ``_server_instances`` dict and offers no public
    view. Per-caller session caps read it to learn which of a caller's sessions have ended.
    """
    instances: Any = getattr(manager, "_server_instances", None)
    if not isinstance(instances, dict):
        return frozenset()
    return frozenset(cast("dict[str, Any]", instances))


def lifespan_state_of(manager: StreamableHTTPSessionManager) -> Any:
    """What the server's lifespan yielded, as ``manager`` (running) passes it to every request.

    The session manager enters ``server.lifespan`` once in ``run()`` and hands the state to
    each request's ``serve_one``; mcp 2.3 keeps it in the private ``_lifespan_state`` and
    offers no public view. A ``tools/call`` answered inline (:mod:`.inline`) passes the same.
    """
    return getattr(manager, "_lifespan_state", None)


def exchange_context(request: Request, request_id: RequestId) -> DispatchContext[TransportContext]:
    """The dispatch context the SDK's 2026-era JSON-response entry builds for one request.

    ``handle_modern_request`` in mcp 2.3's private ``mcp.server._streamable_http_modern``
    builds a ``_SingleExchangeDispatchContext`` (no back channel, no notification sink in
    JSON mode, the Starlette request as the request context) and passes it to the public
    ``mcp.server.runner.serve_one``; a ``tools/call`` answered inline builds the very same, so
    the handler chain sees what it sees on the SDK's path.
    """
    return _SingleExchangeDispatchContext(
        transport=TransportContext(
            kind="streamable-http", can_send_request=False, headers=request.headers
        ),
        request_id=request_id,
        message_metadata=ServerMessageMetadata(request_context=request),
    )
