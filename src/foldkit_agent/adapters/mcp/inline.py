"""A 2026-era ``tools/call`` that needs no mid-call notifications, answered in one JSON response.

The SDK serves a 2026-07-28 request in one of two shapes, chosen per session manager
(``json_response``): *streaming* runs the handler as a sibling task with a memory stream for
its notifications and a task watching for the client's disconnect, and answers
``text/event-stream`` once the handler emits (or after 15 s of silence; a handler that answers
before either gets ``application/json``); *JSON* awaits the handler in the request's own task
and answers ``application/json``, with no notifications and no cancellation on disconnect.

:class:`InlineCalls` sends each request that needs neither to a second session manager of the
same server built with ``json_response=True`` (the SDK's public constructor; 2026-era requests
hold no session, so the two managers share nothing): a ``tools/call`` that
:meth:`~foldkit_agent.adapters.mcp.FoldkitMCPServer.answers_inline` says can (no
``progressToken``, no approval answer, a capability with neither a completion contract nor
``confirm``), from a client that accepts both shapes. Everything else (handshake-era requests,
``subscriptions/listen``, calls that may wait) takes the SDK's streaming path as before, where
progress, approvals and cancellation on disconnect work as they did.

A call answered inline still goes through the edge guard (its body parsed strictly once, the
guard's disconnect watch in place) and through the SDK's own checks and dispatch (routing
headers, ``Mcp-Param-*``, the handler chain): only the per-request task group, stream and
watcher are skipped. ``InlineStats.answered`` counts the calls answered this way.

A 2026-era ``tools/list`` whose answer is already kept is written from bytes. The first
``tools/list`` of a protocol version and availability set runs the SDK's whole pipeline, which
validates and serializes every tool, and its result is kept encoded
(:meth:`~foldkit_agent.adapters.mcp.FoldkitMCPServer.listed_bytes`). A later one that has no
parameter but ``_meta`` and passes the SDK's own envelope, routing-header and parameter checks
(``classify_inbound_request`` and ``find_duplicated_routing_header`` in ``mcp.shared.inbound``,
``validate_client_request`` in ``mcp_types.methods``, all public) is answered with those bytes
in its JSON-RPC envelope: the bytes the SDK would have written. Anything else (a ``cursor``, a
header mismatch, a resolved runtime, a changed set) takes the SDK's path.
``InlineStats.listed`` counts these answers.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Final, cast

from mcp.server.streamable_http import check_accept_headers
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
from mcp.shared.inbound import (
    MCP_PROTOCOL_VERSION_HEADER,
    InboundModernRoute,
    classify_inbound_request,
    find_duplicated_routing_header,
)
from mcp_types.methods import validate_client_request
from mcp_types.version import MODERN_PROTOCOL_VERSIONS
from starlette.requests import Request
from starlette.responses import Response
from starlette.types import ASGIApp, Receive, Scope, Send

from ...edge.guard import BODY_KEY, route_path
from .server import FoldkitMCPServer

__all__ = ["InlineCalls", "InlineStats", "inline_manager"]

_VERSION_HEADER: Final = MCP_PROTOCOL_VERSION_HEADER.lower().encode("latin-1")
_MODERN: Final = frozenset(v.encode("latin-1") for v in MODERN_PROTOCOL_VERSIONS)


@dataclass(slots=True)
class InlineStats:
    """What :class:`InlineCalls` answered itself: ``answered`` counts ``tools/call`` requests
    answered in one JSON response, ``listed`` ``tools/list`` requests answered from kept bytes."""

    answered: int = 0
    listed: int = 0


def inline_manager(
    server: FoldkitMCPServer, like: StreamableHTTPSessionManager
) -> StreamableHTTPSessionManager:
    """A session manager for ``server`` answering 2026-era requests as JSON, with ``like``'s
    transport security and body limit. Run it (``async with manager.run()``) beside ``like``.
    """
    return StreamableHTTPSessionManager(
        app=server,
        json_response=True,
        stateless=True,
        security_settings=like.security_settings,
        max_request_body_size=like.max_request_body_size,
    )


class InlineCalls:
    """ASGI middleware in front of the SDK's MCP endpoint at ``path`` (module docs).

    Args:
        app: the SDK's Starlette app (its streaming session manager behind it).
        path: the MCP endpoint path.
        server: whose :meth:`~FoldkitMCPServer.answers_inline` decides.
        manager: the JSON-response manager (:func:`inline_manager`), already running.
        stats: counts what was answered inline.
    """

    def __init__(
        self,
        app: ASGIApp,
        *,
        path: str,
        server: FoldkitMCPServer,
        manager: StreamableHTTPSessionManager,
        stats: InlineStats,
    ) -> None:
        self.app = app
        self.path = path
        self.server = server
        self.manager = manager
        self.stats = stats

    def _inline(self, scope: Scope) -> bool:
        if scope["type"] != "http" or scope.get("method") != "POST":
            return False
        if not self.server.answers_inline(scope.get(BODY_KEY)):
            return False  # not a call that needs nothing (or no body the guard parsed)
        if route_path(scope) != self.path:
            return False
        version = next((v for k, v in scope["headers"] if k == _VERSION_HEADER), None)
        if version not in _MODERN:
            return False
        has_json, has_sse = check_accept_headers(Request(scope))
        return has_json and has_sse  # a client the streaming path would serve too

    def _kept_list(self, scope: Scope) -> bytes | None:
        """The whole answer to a 2026-era ``tools/list`` whose result is kept, or ``None``."""
        if scope["type"] != "http" or scope.get("method") != "POST":
            return None
        body = scope.get(BODY_KEY)
        if type(body) is not dict:
            return None
        message = cast("dict[str, Any]", body)
        if message.get("method") != "tools/list" or type(message.get("id")) not in (int, str):
            return None
        raw = message.get("params")
        if type(raw) is not dict:
            return None
        params = cast("dict[str, Any]", raw)
        if set(params) != {"_meta"}:
            return None
        settings = self.manager.security_settings
        if route_path(scope) != self.path or (
            settings and settings.enable_dns_rebinding_protection
        ):
            return None
        request = Request(scope)
        has_json, has_sse = check_accept_headers(request)
        if not (has_json and has_sse) or find_duplicated_routing_header(request.headers.items()):
            return None
        route = classify_inbound_request(message, headers=dict(request.headers))
        if not isinstance(route, InboundModernRoute):
            return None  # the SDK answers the rejection in its own words
        kept = self.server.listed_bytes(route.protocol_version)
        if kept is None:
            return None
        try:  # the parameter check the SDK's dispatch runs first
            validate_client_request("tools/list", route.protocol_version, params)
        except (ValueError, KeyError):  # pydantic's ValidationError is a ValueError
            return None
        ident = json.dumps(message["id"]).encode()
        return b'{"jsonrpc":"2.0","id":' + ident + b',"result":' + kept + b"}"

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        kept = self._kept_list(scope)
        if kept is not None:
            self.stats.listed += 1
            await Response(kept, media_type="application/json")(scope, receive, send)
            return
        if self._inline(scope):
            self.stats.answered += 1
            await self.manager.handle_request(scope, receive, send)
            return
        await self.app(scope, receive, send)
