"""A 2026-era ``tools/call`` that needs no mid-call notifications, answered in one JSON response.

The SDK serves a 2026-07-28 request in one of two shapes, chosen per session manager
(``json_response``): *streaming* runs the handler as a sibling task with a memory stream for
its notifications and a task watching for the client's disconnect, and answers
``text/event-stream`` once the handler emits (or after 15 s of silence; a handler that answers
before either gets ``application/json``); *JSON* awaits the handler in the request's own task
and answers ``application/json``, with no notifications and no cancellation on disconnect.

:class:`InlineCalls` answers each request that needs neither itself: a ``tools/call`` that
:meth:`~foldkit_agent.adapters.mcp.listing.Tools.inline` says can (no
``progressToken``, no approval answer, a capability with neither a completion contract nor
``confirm``), from a client that accepts both shapes. It runs the SDK's own checks in the order
``handle_modern_request`` runs them, on the body the edge guard parsed (``scope[BODY_KEY]``,
parsed once): the content type (``TransportSecurityMiddleware``), the envelope and routing
headers (``find_duplicated_routing_header``, ``classify_inbound_request``), the ``Mcp-Param-*``
headers against the tool's input schema (``validate_mcp_param_headers``, all public). Then it
dispatches through the SDK's public ``serve_one`` with the dispatch context the SDK's
JSON-response entry builds (:func:`._sdk.exchange_context`) and the manager's lifespan state,
so the server's middleware (OpenTelemetry's included), request-parameter validation, the
handler with its request context and the bearer token ``get_access_token()`` returns (the
SDK's ``AuthContextMiddleware`` runs outside this one), and the result's serialization are the
SDK's; the reply is written as that entry writes it, a handler's error mapped by the SDK's
``modern_error_data`` to the SDK's words and status. A request that misses any check goes,
untouched, to a second session manager of the same server built with ``json_response=True``
(the SDK's public constructor; 2026-era requests hold no session, so the two managers share
nothing), which answers it in its own words. Everything else (handshake-era requests,
``subscriptions/listen``, calls that may wait) takes the SDK's streaming path as before, where
progress, approvals and cancellation on disconnect work as they did.

``InlineStats.answered`` counts the calls answered here, ``handed`` those handed to the
JSON-response manager.

A 2026-era ``tools/list`` whose answer is already kept is written from bytes. The first
``tools/list`` of a protocol version and availability set runs the SDK's whole pipeline, which
validates and serializes every tool, and its result is kept encoded
(:meth:`~foldkit_agent.adapters.mcp.listing.Tools.kept`). A later one that has no
parameter but ``_meta`` and passes the SDK's own content-type, envelope, routing-header and
parameter checks (``TransportSecurityMiddleware.validate_request``;
``classify_inbound_request`` and ``find_duplicated_routing_header`` in ``mcp.shared.inbound``;
``validate_client_request`` in ``mcp_types.methods``; all public) is answered with those bytes
in its JSON-RPC envelope: the bytes the SDK would have written. Anything else (a ``cursor``, a
header mismatch, a resolved runtime, a changed set) takes the SDK's path.
``InlineStats.listed`` counts these answers.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Final, cast

from mcp.server.connection import Connection
from mcp.server.runner import modern_error_data, serve_one
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
from mcp.server.transport_security import TransportSecurityMiddleware
from mcp.shared.inbound import (
    ERROR_CODE_HTTP_STATUS,
    MCP_PARAM_HEADER_PREFIX,
    MCP_PROTOCOL_VERSION_HEADER,
    X_MCP_HEADER_KEY,
    InboundModernRoute,
    classify_inbound_request,
    find_duplicated_routing_header,
    validate_mcp_param_headers,
)
from mcp_types import JSONRPCError, JSONRPCResponse
from mcp_types.methods import validate_client_request
from mcp_types.version import MODERN_PROTOCOL_VERSIONS
from starlette.requests import Request
from starlette.responses import Response
from starlette.types import ASGIApp, Receive, Scope, Send

from ...edge.guard import BODY_KEY, route_path
from ._sdk import accepts, exchange_context, lifespan_state_of
from .server import FoldkitMCPServer

__all__ = ["InlineCalls", "InlineStats", "inline_manager"]

_VERSION_HEADER: Final = MCP_PROTOCOL_VERSION_HEADER.lower().encode("latin-1")
_MODERN: Final = frozenset(v.encode("latin-1") for v in MODERN_PROTOCOL_VERSIONS)
_PARAM_HEADER: Final = MCP_PARAM_HEADER_PREFIX.lower()
_ENVELOPE: Final = frozenset({"jsonrpc", "id", "method", "params"})
_ANNOTATION: Final = json.dumps(X_MCP_HEADER_KEY)  # how the key reads in an encoded schema


@dataclass(slots=True)
class InlineStats:
    """What :class:`InlineCalls` answered itself: ``answered`` counts ``tools/call`` requests
    answered in one JSON response straight from the guard's parsed body, ``handed`` those that
    needed no notifications but missed a check and went to the SDK's JSON-response manager
    (which answers in its own words), ``listed`` ``tools/list`` requests answered from kept
    bytes."""

    answered: int = 0
    handed: int = 0
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


def _encoded(reply: JSONRPCResponse | JSONRPCError) -> bytes:
    """``reply`` as the SDK's 2026-era entry writes it (``model_dump(mode="json",
    by_alias=True, exclude_none=True)``, then compact ``json.dumps``)."""
    wire = reply.model_dump(mode="json", by_alias=True, exclude_none=True)
    return json.dumps(wire, separators=(",", ":")).encode()


class InlineCalls:
    """ASGI middleware in front of the SDK's MCP endpoint at ``path`` (module docs).

    Args:
        app: the SDK's Starlette app (its streaming session manager behind it).
        path: the MCP endpoint path.
        server: whose :attr:`~FoldkitMCPServer.tools` decide.
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
        assert server.tools is not None  # every mcp_server() has them
        self.tools = server.tools
        self.security = TransportSecurityMiddleware(manager.security_settings)
        self._annotated: dict[str, bool] = {}  # tool name -> its schema declares x-mcp-header

    def _inline(self, scope: Scope, receive: Receive) -> Request | None:
        """The request, when it is a 2026-era ``tools/call`` that needs no notifications."""
        if scope["type"] != "http" or scope.get("method") != "POST":
            return None
        if not self.tools.inline(scope.get(BODY_KEY)):
            return None  # not a call that needs nothing (or no body the guard parsed)
        if route_path(scope) != self.path:
            return None
        version = next((v for k, v in scope["headers"] if k == _VERSION_HEADER), None)
        if version not in _MODERN:
            return None
        request = Request(scope, receive)
        has_json, has_sse = accepts(request)
        return request if has_json and has_sse else None  # the streaming path serves it too

    async def _route(
        self, scope: Scope, request: Request, message: dict[str, Any]
    ) -> tuple[InboundModernRoute, dict[str, str]] | None:
        """The SDK's transport and envelope checks of a 2026-era POST (DNS-rebinding settings,
        duplicated routing headers, its content-type check, ``classify_inbound_request``) on
        the guard's parsed ``message``: its route and the folded headers, or ``None`` if any
        check would not pass (the SDK then answers in its own words)."""
        settings = self.manager.security_settings
        if settings and settings.enable_dns_rebinding_protection:
            return None
        if find_duplicated_routing_header(request.headers.items()):
            return None
        if await self.security.validate_request(request, is_post=True) is not None:
            return None  # e.g. a content type the SDK refuses (application/vnd.x+json)
        # As dict(request.headers) folds them (the first of a name; routing headers are not
        # duplicated, checked above), without its quadratic lookups.
        folded = {k.decode("latin-1"): v.decode("latin-1") for k, v in reversed(scope["headers"])}
        route = classify_inbound_request(message, headers=folded)
        return (route, folded) if isinstance(route, InboundModernRoute) else None

    async def _call_route(self, scope: Scope, request: Request) -> InboundModernRoute | None:
        """The SDK's own checks of a 2026-era ``tools/call`` (``handle_modern_request`` up to
        dispatch) on the guard's parsed body; ``None`` if any would not pass.

        :meth:`_inline` has already checked the method, path, version header and ``Accept``.
        """
        message = cast("dict[str, Any]", scope[BODY_KEY])
        if (
            not _ENVELOPE.issuperset(message)
            or message.get("jsonrpc") != "2.0"
            or type(message.get("id")) not in (int, str)
        ):
            return None  # the SDK's JSONRPCRequest would coerce or refuse it: let it
        routed = await self._route(scope, request, message)
        if routed is None:
            return None
        route, folded = routed
        params = cast("dict[str, Any]", message["params"])
        raw = params.get("arguments")
        if raw is not None and type(raw) is not dict:
            return None
        arguments = cast("dict[str, Any]", raw or {})
        name = params.get("name")
        if not isinstance(name, str):
            return None
        # The SDK's Mcp-Param-* check (2026-era tools/call), through the server's own
        # get_tool_input_schema as the SDK calls it. It can only refuse through a property
        # that declares x-mcp-header, so a schema without one is not walked on every call.
        if arguments or any(key.startswith(_PARAM_HEADER) for key in folded):
            lookup = self.server.get_tool_input_schema
            schema = None if lookup is None else lookup(name)
            if (
                schema is not None
                and self._declares(name, schema)
                and validate_mcp_param_headers(schema, arguments, request.headers) is not None
            ):
                return None
        return route

    def _declares(self, name: str, schema: Any) -> bool:
        """Whether ``name``'s input schema (fixed per name for a fixed runtime) has an
        ``x-mcp-header`` key anywhere: the only thing ``validate_mcp_param_headers`` checks."""
        known = self._annotated.get(name)
        if known is None:
            known = self._annotated[name] = _ANNOTATION in json.dumps(schema)
        return known

    async def _answer_call(
        self, scope: Scope, request: Request, send: Send, route: InboundModernRoute
    ) -> None:
        """Dispatch through the SDK's ``serve_one`` (its handler chain: ``Server.middleware``,
        parameter validation, our handler, the result's serialization) with the context the
        SDK's JSON-response entry builds, and write the reply as that entry writes it."""
        message = cast("dict[str, Any]", scope[BODY_KEY])
        ident: int | str = message["id"]
        connection = Connection.from_envelope(
            route.protocol_version, route.client_info, route.client_capabilities
        )
        status = 200
        try:
            result = await serve_one(
                self.server,
                exchange_context(request, ident),
                "tools/call",
                message["params"],
                connection=connection,
                lifespan_state=lifespan_state_of(self.manager),
            )
        except Exception as exc:  # mapped as the SDK maps it: its words, never ours
            reply = JSONRPCError(jsonrpc="2.0", id=ident, error=modern_error_data(exc))
            status = ERROR_CODE_HTTP_STATUS.get(reply.error.code, 200)
            body = _encoded(reply)
        else:
            try:
                # serve_one's result is already the wire form (the SDK's runner dumped it,
                # mode="json"), which JSONRPCResponse's dump leaves as it is (exclude_none
                # applies to the envelope's own fields): the same bytes without a second
                # validation and dump of the result.
                envelope = {"jsonrpc": "2.0", "id": ident, "result": result}
                body = json.dumps(envelope, separators=(",", ":")).encode()
            except (TypeError, ValueError):  # a middleware's own dict, not JSON-native
                body = _encoded(JSONRPCResponse(jsonrpc="2.0", id=ident, result=result))
        await send(
            {
                "type": "http.response.start",
                "status": status,
                "headers": [
                    (b"content-length", str(len(body)).encode()),
                    (b"content-type", b"application/json"),
                ],
            }
        )
        await send({"type": "http.response.body", "body": body})

    async def _kept_list(self, scope: Scope) -> bytes | None:
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
        if route_path(scope) != self.path:
            return None
        request = Request(scope)
        has_json, has_sse = accepts(request)
        if not (has_json and has_sse):
            return None
        routed = await self._route(scope, request, message)
        if routed is None:
            return None
        route = routed[0]
        kept = self.tools.kept(route.protocol_version)
        if kept is None:
            return None
        try:  # the parameter check the SDK's dispatch runs first
            validate_client_request("tools/list", route.protocol_version, params)
        except (ValueError, KeyError):  # pydantic's ValidationError is a ValueError
            return None
        ident = json.dumps(message["id"]).encode()
        return b'{"jsonrpc":"2.0","id":' + ident + b',"result":' + kept + b"}"

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        kept = await self._kept_list(scope)
        if kept is not None:
            self.stats.listed += 1
            await Response(kept, media_type="application/json")(scope, receive, send)
            return
        request = self._inline(scope, receive)
        if request is not None:
            route = await self._call_route(scope, request)
            if route is not None:
                self.stats.answered += 1
                await self._answer_call(scope, request, send, route)
                return
            self.stats.handed += 1
            await self.manager.handle_request(scope, receive, send)
            return
        await self.app(scope, receive, send)
