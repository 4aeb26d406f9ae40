"""The one path of a 2026-era ``tools/list``, and of a ``tools/call`` that needs no stream.

The SDK serves a 2026-07-28 POST through its session manager in one of two shapes: *streaming*
runs the handler as a sibling task with a memory stream for its notifications and a task
watching for the client's disconnect, and answers ``text/event-stream`` once the handler emits
(a handler that answers first gets ``application/json``); *JSON* awaits the handler in the
request's task. A request that can emit nothing needs neither shape's machinery, so
:class:`InlineCalls` answers every such request itself, and only it does (the SDK's session
manager never sees one): a ``tools/list``, and a ``tools/call`` that :func:`is_inline` says
needs no stream (no
``progressToken``, no approval answer, a capability with neither a completion contract nor
``confirm``), each a well-formed JSON-RPC request (``jsonrpc``, an ``id``, ``method``,
``params`` and nothing else) with a 2026-era ``MCP-Protocol-Version``, parsed once by the edge
guard (``scope[BODY_KEY]``). Every other request (handshake era, ``subscriptions/listen``,
calls that may wait, notifications, malformed envelopes) goes to the SDK's streaming session
manager, which answers it as it always does.

The path is the SDK's own request checks, in the order its 2026-era entry runs them, built
from the SDK's public pieces: the content type (``TransportSecurityMiddleware``), ``Accept``
(both JSON and SSE, as the streaming manager requires), duplicated routing headers
(``find_duplicated_routing_header``), the envelope against the headers
(``classify_inbound_request``), the ``Mcp-Param-*`` headers against the tool's input schema
(``validate_mcp_param_headers``); a request that fails one gets the SDK's answer, status and
words. Then it dispatches through the SDK's public ``serve_one`` with the dispatch context the
SDK's entry builds (:func:`._sdk.exchange_context`) and the manager's lifespan state, so the
server's middleware (OpenTelemetry's included), parameter validation, the handler with its
request context, the bearer token ``get_access_token()`` returns (the SDK's
``AuthContextMiddleware`` runs outside this one), and the result's serialization are the SDK's;
a handler's error is mapped by the SDK's ``modern_error_data``.

A ``tools/list`` whose result is kept (:meth:`~foldkit_agent.adapters.mcp.listing.Tools.kept`:
the SDK's own serialization of it, kept per protocol version until availability changes) and
whose parameters pass the SDK's dispatch check (``validate_client_request``) is written from
those bytes, in its JSON-RPC envelope; any other runs ``serve_one``, whose result the server
keeps for the next.

``InlineStats`` counts what this path answered: ``answered`` calls dispatched, ``refused``
requests the SDK's checks refused, ``listed`` lists written from kept bytes.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Final, cast

from mcp.server.connection import Connection
from mcp.server.runner import modern_error_data, serve_one
from mcp.server.transport_security import TransportSecurityMiddleware, TransportSecuritySettings
from mcp.shared.inbound import (
    ERROR_CODE_HTTP_STATUS,
    MCP_PARAM_HEADER_PREFIX,
    MCP_PROTOCOL_VERSION_HEADER,
    X_MCP_HEADER_KEY,
    InboundLadderRejection,
    InboundModernRoute,
    classify_inbound_request,
    find_duplicated_routing_header,
    validate_mcp_param_headers,
)
from mcp_types import HEADER_MISMATCH, ErrorData, JSONRPCError, JSONRPCResponse
from mcp_types.methods import validate_client_request
from mcp_types.version import MODERN_PROTOCOL_VERSIONS
from starlette.requests import Request
from starlette.responses import Response
from starlette.types import ASGIApp, Receive, Scope, Send

from ...edge.guard import BODY_KEY, route_path
from ._sdk import accepts, exchange_context
from .listing import CATALOG_NAMES, LIST_CAPABILITIES, Tools

__all__ = ["InlineCalls", "InlineStats"]

_VERSION_HEADER: Final = MCP_PROTOCOL_VERSION_HEADER.lower().encode("latin-1")
_MODERN: Final = frozenset(v.encode("latin-1") for v in MODERN_PROTOCOL_VERSIONS)
_PARAM_HEADER: Final = MCP_PARAM_HEADER_PREFIX.lower()
_ENVELOPE: Final = frozenset({"jsonrpc", "id", "method", "params"})
_ANNOTATION: Final = json.dumps(X_MCP_HEADER_KEY)  # how the key reads in an encoded schema
_JSON: Final = [(b"content-type", b"application/json")]
_STREAMED_PARAMS: Final = frozenset({"requestState", "inputResponses", "task"})
"""``tools/call`` parameters that keep a call on the streaming path."""


@dataclass(slots=True)
class InlineStats:
    """What :class:`InlineCalls` answered: ``answered`` ``tools/call`` requests dispatched
    through ``serve_one``, ``refused`` those the SDK's checks refused before dispatch, ``listed``
    ``tools/list`` requests written from kept bytes."""

    answered: int = 0
    refused: int = 0
    listed: int = 0


def is_inline(tools: Tools, path: str) -> Callable[[Scope, Any], bool]:
    """``(scope, parsed body) -> bool``: whether :class:`InlineCalls` answers the request at
    ``path`` (module docs). Such a request never reads its body again and, but for a call
    whose answer a drain waits for, needs no word of the client's disconnect.

    A ``tools/call`` is inline when it needs no mid-call notifications, decided from the
    contract before dispatch (:attr:`Plan.may_wait <foldkit_agent.runtime.plan.Plan>`), for a
    fixed runtime only (a resolved one is not known until the call runs): a call that carries
    a ``progressToken``, answers an approval (``requestState``), asks for a task, or names a
    capability that may wait takes the SDK's streaming path. An unknown name or a refused
    catalog call answers at once, so it is inline too.

    Example:
        >>> inline(scope, {"jsonrpc": "2.0", "id": 1, "method": "tools/call",
        ...     "params": {"name": "toggle_todo", "arguments": {"id": 1}}})
        True
    """
    static = tools.static
    catalog = tools.listing == "catalog"

    def inline(scope: Scope, body: Any) -> bool:
        if type(body) is not dict or scope.get("method") != "POST":
            return False
        message = cast("dict[str, Any]", body)
        method = message.get("method")
        if "id" not in message or not _ENVELOPE.issuperset(message):
            return False
        if method != "tools/list":
            params = message.get("params")
            if method != "tools/call" or static is None or type(params) is not dict:
                return False
            params = cast("dict[str, Any]", params)
            if _STREAMED_PARAMS.intersection(params):
                return False
            meta = params.get("_meta")
            if meta is not None and (type(meta) is not dict or "progressToken" in meta):
                return False
            name = params.get("name")
            if catalog and name in CATALOG_NAMES:  # list_capabilities answers at once
                arguments = params.get("arguments")
                named = type(arguments) is dict and name != LIST_CAPABILITIES
                name = cast("dict[str, Any]", arguments).get("name") if named else None
            plan = static.plans.get(name) if isinstance(name, str) else None
            if plan is not None and plan.may_wait:
                return False
        if route_path(scope) != path:
            return False
        for key, value in scope["headers"]:
            if key == _VERSION_HEADER:
                return value in _MODERN
        return False

    return inline


def lists_alone(inline: Callable[[Scope, Any], bool]) -> Callable[[Scope, Any], bool]:
    """The edge guard's ``unwatched``: a ``tools/list`` on the inline path is answered from
    the parsed body alone (it carries no call a drain waits for, and nothing to abort)."""

    def alone(scope: Scope, body: Any) -> bool:
        if type(body) is not dict:
            return False
        method = cast("dict[str, Any]", body).get("method")
        return method == "tools/list" and inline(scope, body)

    return alone


def _rejection(ident: Any, rejection: InboundLadderRejection) -> tuple[int, bytes]:
    """A ladder rejection as the SDK writes it: its status and JSON-RPC error."""
    error = ErrorData(code=rejection.code, message=rejection.message, data=rejection.data)
    return _error(JSONRPCError(jsonrpc="2.0", id=ident, error=error))


def _error(reply: JSONRPCError) -> tuple[int, bytes]:
    wire = reply.model_dump(mode="json", by_alias=True, exclude_none=True)
    body = json.dumps(wire, separators=(",", ":")).encode()
    return ERROR_CODE_HTTP_STATUS.get(reply.error.code, 200), body


class InlineCalls:
    """ASGI middleware in front of the SDK's MCP endpoint: the one path of the requests
    :func:`is_inline` names (module docs); every other request goes on to ``app``.

    Args:
        app: the SDK's Starlette app (its streaming session manager behind it).
        inline: :func:`is_inline` for this endpoint.
        server: the MCP server (``serve_one`` runs its handler chain).
        tools: the server's :class:`~.listing.Tools` (kept lists, which calls need no stream).
        security: the session manager's transport security settings.
        lifespan_state: ``() -> state`` the running session manager passes each request.
        stats: counts what was answered here.
        kept_lists: whether a ``tools/list`` may be answered from the kept bytes; ``False``
            for an observed server (:mod:`.telemetry`), whose every list runs the SDK's
            handler chain and so its span.
    """

    def __init__(
        self,
        app: ASGIApp,
        *,
        inline: Callable[[Scope, Any], bool],
        server: Any,
        tools: Tools,
        security: TransportSecuritySettings | None,
        lifespan_state: Callable[[], Any],
        stats: InlineStats,
        kept_lists: bool = True,
    ) -> None:
        self.app = app
        self.inline = inline
        self.server = server
        self.tools = tools
        self.security = TransportSecurityMiddleware(security)
        self.lifespan_state = lifespan_state
        self.stats = stats
        self.kept_lists = kept_lists
        self._annotated: dict[str, bool] = {}  # tool name -> its schema declares x-mcp-header
        self._accepted: dict[str | None, bool] = {}  # Accept -> both JSON and SSE

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        message = scope.get(BODY_KEY)
        if scope["type"] != "http" or not self.inline(scope, message):
            await self.app(scope, receive, send)
            return
        message = cast("dict[str, Any]", message)
        request = Request(scope, receive)
        refused = await self.security.validate_request(request, is_post=True)
        if refused is None:
            accept = request.headers.get("accept")
            both = self._accepted.get(accept)
            if both is None:
                both = all(accepts(request))
                if len(self._accepted) < 64:  # a pure function of the value: kept per value
                    self._accepted[accept] = both
            refused = None if both else Response(status_code=406)
        if refused is not None:
            self.stats.refused += 1
            await refused(scope, receive, send)
            return
        ident: int | str = message["id"]
        route = self._route(request, message)
        if isinstance(route, InboundLadderRejection):
            self.stats.refused += 1
            status, body = _rejection(ident, route)
        else:
            status, body = await self._answer(request, message, route)
        await send(
            {
                "type": "http.response.start",
                "status": status,
                "headers": [(b"content-length", str(len(body)).encode()), *_JSON],
            }
        )
        await send({"type": "http.response.body", "body": body})

    def _route(
        self, request: Request, message: dict[str, Any]
    ) -> InboundModernRoute | InboundLadderRejection:
        """The SDK's checks of the routing headers against the envelope, in its order."""
        headers = request.headers
        duplicated = find_duplicated_routing_header(headers.items())
        if duplicated is not None:
            text = f"{duplicated} header appears more than once"  # the SDK's words
            return InboundLadderRejection(code=HEADER_MISMATCH, message=text)
        # As dict(request.headers) folds them (the first of a name), without its quadratic
        # lookups.
        folded: dict[str, str] = {}
        for key, value in reversed(request.scope["headers"]):
            folded[key.decode("latin-1")] = value.decode("latin-1")
        route = classify_inbound_request(message, headers=folded)
        if isinstance(route, InboundLadderRejection) or message["method"] != "tools/call":
            return route
        params = cast("dict[str, Any]", message["params"])
        arguments = params.get("arguments")
        name = params.get("name")
        if arguments is not None and type(arguments) is not dict:
            return route
        if not isinstance(name, str):
            return route
        if not arguments and not any(key.startswith(_PARAM_HEADER) for key in folded):
            return route
        # The SDK's Mcp-Param-* check, through the server's own get_tool_input_schema as the
        # SDK calls it. It can only refuse through a property that declares x-mcp-header, so
        # a schema without one is not walked on every call.
        lookup = self.server.get_tool_input_schema
        schema = None if lookup is None else lookup(name)
        if schema is None or not self._declares(name, schema):
            return route
        refused = validate_mcp_param_headers(schema, cast("dict[str, Any]", arguments), headers)
        return route if refused is None else refused

    def _declares(self, name: str, schema: Any) -> bool:
        """Whether ``name``'s input schema (fixed per name for a fixed runtime) has an
        ``x-mcp-header`` key anywhere: the only thing ``validate_mcp_param_headers`` checks."""
        known = self._annotated.get(name)
        if known is None:
            known = self._annotated[name] = _ANNOTATION in json.dumps(schema)
        return known

    async def _answer(
        self, request: Request, message: dict[str, Any], route: InboundModernRoute
    ) -> tuple[int, bytes]:
        """The answer of a request that passed the checks: kept bytes for a ``tools/list``
        that may have them, else ``serve_one``'s result as the SDK's entry writes it."""
        ident: int | str = message["id"]
        method: str = message["method"]
        params = message.get("params")
        if method == "tools/list" and self.kept_lists:
            kept = self.tools.kept(route.protocol_version)
            if kept is not None and set(params or {}) <= {"_meta"}:
                try:  # the parameter check the SDK's dispatch runs first
                    validate_client_request(method, route.protocol_version, params)
                except (ValueError, KeyError):  # pydantic's ValidationError is a ValueError
                    kept = None
                if kept is not None:
                    self.stats.listed += 1
                    head = b'{"jsonrpc":"2.0","id":' + json.dumps(ident).encode()
                    return 200, head + b',"result":' + kept + b"}"
        if method == "tools/call":
            self.stats.answered += 1
        connection = Connection.from_envelope(
            route.protocol_version, route.client_info, route.client_capabilities
        )
        try:
            result = await serve_one(
                self.server,
                exchange_context(request, ident),
                method,
                params,
                connection=connection,
                lifespan_state=self.lifespan_state(),
            )
        except Exception as exc:  # mapped as the SDK maps it: its words, never ours
            return _error(JSONRPCError(jsonrpc="2.0", id=ident, error=modern_error_data(exc)))
        # serve_one's result is already the wire form (the SDK's runner dumped it,
        # mode="json"), which the SDK's JSONRPCResponse dump leaves as it is (exclude_none
        # applies to the envelope's own fields): the same bytes without a second validation
        # and dump of the result.
        envelope = {"jsonrpc": "2.0", "id": ident, "result": result}
        try:
            return 200, json.dumps(envelope, separators=(",", ":")).encode()
        except (TypeError, ValueError):  # a middleware's own dict, not JSON-native
            reply = JSONRPCResponse(jsonrpc="2.0", id=ident, result=result)
            wire = reply.model_dump(mode="json", by_alias=True, exclude_none=True)
            return 200, json.dumps(wire, separators=(",", ":")).encode()
