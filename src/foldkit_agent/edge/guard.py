"""The request guard every network route passes (DESIGN §9).

:class:`EdgeGuard` is ASGI middleware that every adapter's app sits behind. Each HTTP request
goes through five steps, in this order, and the first that fails answers it:

====  ==========================  ======  ==========================================================
step  check                       status  refused when
====  ==========================  ======  ==========================================================
1     ``Host``                    421     missing, malformed (userinfo, junk after the address, a
                                          bad port) or not an accepted name (:mod:`.hosts`); the
                                          same body on every route: :data:`HOST_REFUSAL`
2     ``Origin`` /                403     an API route: an ``Origin`` naming a host that is not
      ``Sec-Fetch-Site``                  accepted, or ``null``, or ``Sec-Fetch-Site: cross-site``
                                          without one; a page route: not the page's own origin
                                          (or an allowed one), or a browser's ``Sec-Fetch-Site``
                                          other than ``same-origin``/``none``
3     authentication              401     the adapter's step (bearer token from the one
                                  (403)   :class:`~.tokens.TokenTable`, or the page's session and
                                          CSRF token) refused it
3b    rate per caller             429     with ``rates=`` (``serve --rate-limit``): the caller
                                          is past its rate (:mod:`.rates`); ``Retry-After``
4     content type and length     415     a body that is not ``application/json`` (or
                                  413     ``+json``); a ``Content-Length`` over the limit (before
                                  400     reading), or a body that grows past it as it streams;
                                          a ``Content-Length`` that is not a number
5     strict JSON                 400     :func:`~.wire.loads_strict` refuses it, or (JSON-RPC
                                          routes) it is not one JSON-RPC 2.0 message
====  ==========================  ======  ==========================================================

Until step 3 has passed no byte of the body is read (O(1) work for an anonymous caller); a
refused request is drained only as :mod:`.limits` says, so the answer reaches a client that
writes its whole body before reading. A refused request never reaches the application behind
the guard: it is answered here, in the route's own error shape (the adapter's ``render``),
and reported to ``on_refusal`` (which audits it when the request named a capability).

A request that passes reaches the application with its body replayed unchanged; the parsed
value is left in ``scope[BODY_KEY]`` so the application need not parse it again, and
``scope[CLIENT_GONE]`` is set when the client goes away before its answer (:mod:`.disconnect`).
A request the adapter's ``unwatched`` names is answered from ``scope[BODY_KEY]`` alone (a list
written from kept bytes), so it gets neither the replay nor the disconnect watch.

Example::

    app = EdgeGuard(
        inner,
        hosts=HostPolicy(),
        classify=lambda scope: Rules(jsonrpc=True),
        authenticate=bearer(table),
        render=render_jsonrpc,
        max_body=1 << 20,
    )
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Final, Literal

from starlette.datastructures import Headers
from starlette.responses import JSONResponse, Response
from starlette.types import ASGIApp, Receive, Scope, Send

from .callers import CapReached, Slots, caller_key, serve_held
from .disconnect import Watch
from .hosts import Authority, HostPolicy, parse_host, parse_origin
from .limits import BODY_METHODS, PREAUTH_DRAIN, Body, declared_length, drain, read_capped
from .rates import RateLimits
from .wire import (
    DEFAULT_MAX_DEPTH,
    DEFAULT_MAX_ITEMS,
    WireError,
    is_json_content_type,
    jsonrpc_code,
    jsonrpc_problem,
    loads_strict,
)

__all__ = [
    "BODY_KEY",
    "HOST_REFUSAL",
    "HOST_STATUS",
    "Authenticate",
    "Classify",
    "EdgeGuard",
    "Hold",
    "OnRefusal",
    "OriginRule",
    "Render",
    "Routes",
    "Rules",
    "jsonrpc_or_plain",
    "plain_error",
    "route_path",
]

_log = logging.getLogger("foldkit_agent.edge")

BODY_KEY: Final = "foldkit_agent.edge.body"
"""``scope[BODY_KEY]``: the strictly parsed body of a request that passed the guard (absent
for a request without one)."""

HOST_STATUS: Final = 421
"""The status of a refused ``Host`` on every route (421 Misdirected Request, RFC 9110 §15.5.20:
this server does not answer for that authority)."""

HOST_TEXT: Final = "This server does not answer for that host name."

HOST_REFUSAL: Final[dict[str, Any]] = {
    "error": {"code": HOST_STATUS, "status": "misdirected", "message": HOST_TEXT}
}
"""The body of a refused ``Host``, the same on every route."""

OriginRule = Literal["api", "page", "none"]
"""How step 2 judges ``Origin``: ``"api"`` (any accepted host, any port), ``"page"`` (the
page's own origin or an allowed one) or ``"none"`` (not checked)."""


@dataclass(frozen=True, slots=True)
class Rules:
    """What the guard asks of one request; the adapter's ``classify`` picks them per route.

    Attributes:
        origin: how step 2 judges the request (:data:`OriginRule`).
        body: a ``POST``/``PUT``/``PATCH`` carries a JSON body (steps 4 and 5); ``False``
            leaves the body to the application.
        jsonrpc: the body must be one JSON-RPC 2.0 message (refusals are JSON-RPC errors).
        empty_ok: an empty body is accepted (``scope[BODY_KEY]`` is then absent).
        capability: the capability the request names outside its body (a URL path, an
            ``Mcp-Name`` header), reported to ``on_refusal`` for the audit.
        public: step 3 is skipped (a public document such as the A2A card or OAuth
            metadata); steps 1 and 2 still apply.
    """

    origin: OriginRule = "api"
    body: bool = True
    jsonrpc: bool = False
    empty_ok: bool = False
    capability: str | None = None
    public: bool = False


Classify = Callable[[Scope], Rules]
"""``(scope) -> Rules`` for one request."""


@dataclass(frozen=True, slots=True)
class Routes:
    """The rules of each route path (:func:`route_path`), and of every other path.

    The guard reads them without calling anything of the adapter's: what most adapters'
    rules depend on is the path alone.

    Example:
        >>> Routes({"/mcp": Rules(jsonrpc=True)}, other=Rules(body=False, public=True))
    """

    paths: Mapping[str, Rules]
    other: Rules


Authenticate = Callable[[Scope, Rules], Awaitable[WireError | None]]
"""Step 3: ``None`` to let the request on (having recorded who it is in ``scope``), or the
refusal. It may read headers and cookies, never the body."""

Render = Callable[[Scope, Rules, WireError], Response]
"""The answer to a refusal in the route's own error shape."""

Hold = Callable[[Scope, Any], Slots | None]
"""``(scope, parsed body or None) -> Slots | None``: what a request holds while served."""

OnRefusal = Callable[[Scope, Rules, WireError, bool], Awaitable[None]]
"""``(scope, rules, refusal, passed_step_3)``: called once for every refused request, before it
is answered (to audit it). ``passed_step_3`` is false for a refusal at steps 1 to 3: the caller
is not known, so it must cost O(1) (no per-caller lookup, no application code)."""

_NOT_JSON_TYPE = "Send a JSON body (Content-Type: application/json)."
_NOT_A_NUMBER = "The Content-Length is not a number."
_EMPTY = "The body is empty."
_NO_BODY: Any = object()
_SEEN: Final = 64  # most distinct Host (and Content-Type) values whose verdict is kept


def route_path(scope: Scope) -> str:
    """The request path relative to the app (``root_path`` removed, as Starlette routes it)."""
    path = str(scope.get("path", ""))
    root = str(scope.get("root_path", ""))
    return path[len(root) :] if root and path.startswith(root) else path


def plain_error(_scope: Scope, _rules: Rules, err: WireError) -> Response:
    """``{"error": {"code", "status", "message"}}`` with the refusal's status (and headers)."""
    body = {"error": {"code": err.status, "status": err.code, "message": err.text}}
    return JSONResponse(body, status_code=err.status, headers=err.headers)


def jsonrpc_or_plain(scope: Scope, rules: Rules, err: WireError) -> Response:
    """A JSON-RPC error object (``id: null``; ``-32700`` for a body that does not parse,
    ``-32602``/``-32600`` otherwise) on JSON-RPC routes, else :func:`plain_error`."""
    if not rules.jsonrpc:
        return plain_error(scope, rules, err)
    error = {"code": jsonrpc_code(err), "message": err.text}
    body = {"jsonrpc": "2.0", "id": None, "error": error}
    return JSONResponse(body, status_code=err.status, headers=err.headers)


def _own_authority(scope: Scope, host_header: str | None) -> tuple[str, Authority] | None:
    scheme = str(scope.get("scheme", "http"))
    host = parse_host(host_header)
    if host is None or scheme not in ("http", "https"):
        return None
    return scheme, Authority(host.host, host.port or (443 if scheme == "https" else 80))


class EdgeGuard:
    """ASGI middleware running the five steps of the module docs before ``app``.

    Args:
        app: the adapter's application.
        hosts: the :class:`~.hosts.HostPolicy` (steps 1 and 2).
        classify: the request's :class:`Rules`: one for every route, a :class:`Routes` by
            path, or ``(scope) -> Rules`` asked per request.
        render: the answer to a refusal in the route's shape (default :func:`plain_error`).
        authenticate: step 3, or ``None`` when the routes take anonymous callers.
        on_refusal: told of every refusal (exceptions are logged, not raised).
        allowed_origins: origins (``"https://app.example"``) accepted on ``"page"`` routes
            besides the page's own.
        max_body: largest body accepted, in bytes.
        max_depth, max_items: as :func:`~.wire.loads_strict`.
        hold: ``(scope, parsed body or None) -> Slots | None`` for a request that passed the
            five steps: the :class:`~.callers.Slots` it holds while it is served (an event
            stream), taken for :func:`~.callers.caller_key`; a caller at a cap is refused
            there (429 or 503, in the route's shape) and the app is not called.
        unwatched: ``(scope, parsed body or None) -> bool``: the application answers this
            request from ``scope[BODY_KEY]`` alone, never reading the body again and needing
            no word of a disconnect (a list written from kept bytes), so it is served with the
            server's own ``receive`` and ``send``: no replay, no disconnect watch.
        caller: ``(scope) -> key`` of who holds what ``hold`` takes (default
            :func:`~.callers.caller_key`; the page surface counts each page session apart).
        rates: the server's :class:`~.rates.RateLimits`: with a ``per_caller`` rate, a
            request past it is refused after step 3, before its body is read: 429 with
            ``Retry-After`` (code ``rate-limited``), told to ``on_refusal`` as a caller known.

    Raises:
        ValueError: ``max_body`` below 2 bytes, or a malformed ``allowed_origins`` entry.
    """

    def __init__(
        self,
        app: ASGIApp,
        *,
        hosts: HostPolicy,
        classify: Classify | Routes | Rules,
        max_body: int,
        render: Render = plain_error,
        authenticate: Authenticate | None = None,
        on_refusal: OnRefusal | None = None,
        allowed_origins: Iterable[str] = (),
        max_depth: int = DEFAULT_MAX_DEPTH,
        max_items: int = DEFAULT_MAX_ITEMS,
        hold: Hold | None = None,
        unwatched: Callable[[Scope, Any], bool] | None = None,
        caller: Callable[[Scope], str] = caller_key,
        rates: RateLimits | None = None,
    ) -> None:
        if max_body < 2:
            raise ValueError("max_body must be at least 2 bytes")
        self.app = app
        self.hosts = hosts
        # Rules by path are looked up per request; only a function is called per request.
        if isinstance(classify, Rules):
            classify = Routes({}, classify)
        self.routes = classify if isinstance(classify, Routes) else None
        self.classify: Classify | None = None if isinstance(classify, Routes) else classify
        self.render = render
        self.authenticate = authenticate
        self.on_refusal = on_refusal
        origins: set[tuple[str, Authority]] = set()
        for entry in allowed_origins:
            parsed = parse_origin(entry.rstrip("/"))
            if parsed is None:
                raise ValueError(f"allowed_origins takes scheme://host[:port], got {entry!r}")
            origins.add(parsed)
        self.allowed_origins = frozenset(origins)
        self.max_body = max_body
        self.max_depth = max_depth
        self.max_items = max_items
        self.hold = hold
        self.unwatched = unwatched
        self.caller = caller
        self.rates = rates if rates is not None and rates.per_caller is not None else None
        self._hosts_seen: dict[bytes | None, bool] = {}  # Host value -> step 1's verdict
        self._types_seen: dict[bytes | None, bool] = {}  # Content-Type -> JSON or not

    # -- the steps ------------------------------------------------------------------------------

    def _origin(
        self, scope: Scope, rules: Rules, host: str | None, origin: str | None, site: str
    ) -> WireError | None:
        if rules.origin == "api" and origin is not None:
            ok = self.hosts.allows_origin(origin)
        elif rules.origin == "api":
            ok = site != "cross-site"
        elif origin is not None:
            parsed = parse_origin(origin.rstrip("/"))
            ok = parsed is not None and (
                parsed == _own_authority(scope, host) or parsed in self.allowed_origins
            )
        else:
            ok = site in ("", "same-origin", "none")
        if ok:
            return None
        return WireError(403, "origin", "Calls from that origin are not accepted.")

    def _too_large(self) -> WireError:
        return WireError(
            413, "too-large", f"The body is larger than the {self.max_body}-byte limit."
        )

    # -- answering ------------------------------------------------------------------------------

    async def _refuse(
        self,
        scope: Scope,
        receive: Receive,
        send: Send,
        refused: _Refused,
        body: Body,
    ) -> None:
        rules, err = refused.rules, refused.err
        if self.on_refusal is not None:
            try:
                await self.on_refusal(scope, rules, err, refused.authenticated)
            except Exception:
                _log.warning("recording a refused request failed", exc_info=True)
        if err.code == "host":
            response: Response = JSONResponse(HOST_REFUSAL, status_code=HOST_STATUS)
        else:
            response = self.render(scope, rules, err)
        budget = 2 * self.max_body if refused.authenticated else PREAUTH_DRAIN
        reusable = scope.get("method") not in BODY_METHODS or await drain(
            receive, Headers(scope=scope), body, budget
        )
        if not reusable:
            response.headers["connection"] = "close"
        await response(scope, receive, send)

    async def _check(self, scope: Scope, receive: Receive, body: Body) -> tuple[Rules, Any]:
        """Run the five steps; the request's rules and its parsed body (or ``_NO_BODY``).

        The head is read in one pass over the raw headers (the first of each name, as
        ``Headers.get``); a ``Host`` or content type seen before is judged from what was
        decided for it then (both are pure functions of the value).
        """
        routes = self.routes
        if routes is None:
            assert self.classify is not None
            rules = self.classify(scope)
        else:
            paths = routes.paths
            rules = paths.get(route_path(scope), routes.other) if paths else routes.other
        host = origin = site = ctype = length = None
        for name, value in scope["headers"]:
            if name == b"host":
                host = value if host is None else host
            elif name == b"origin":
                origin = value if origin is None else origin
            elif name == b"sec-fetch-site":
                site = value if site is None else site
            elif name == b"content-type":
                ctype = value if ctype is None else ctype
            elif name == b"content-length":
                length = value if length is None else length
        host_text = None if host is None else host.decode("latin-1")
        allowed = self._hosts_seen.get(host)
        if allowed is None:
            allowed = self.hosts.allows(host_text)
            if len(self._hosts_seen) < _SEEN:
                self._hosts_seen[host] = allowed
        if not allowed:
            raise _Refused(rules, WireError(HOST_STATUS, "host", HOST_TEXT), authenticated=False)
        refused = None
        if rules.origin != "none" and (origin is not None or site is not None):
            site_text = "" if site is None else site.decode("latin-1").strip().lower()
            origin_text = None if origin is None else origin.decode("latin-1")
            refused = self._origin(scope, rules, host_text, origin_text, site_text)
        if refused is None and self.authenticate is not None and not rules.public:
            refused = await self.authenticate(scope, rules)
        if refused is not None:
            raise _Refused(rules, refused, authenticated=False)
        if self.rates is not None and not rules.public:
            # the caller is known and no byte of the body read: a refusal here costs O(1)
            limited = self.rates.caller_refusal(self.caller(scope))
            if limited is not None:
                raise _Refused(rules, limited, authenticated=True)
        if not rules.body or scope.get("method") not in BODY_METHODS:
            return rules, _NO_BODY
        json_type = self._types_seen.get(ctype)
        if json_type is None:
            json_type = is_json_content_type(None if ctype is None else ctype.decode("latin-1"))
            if len(self._types_seen) < _SEEN:
                self._types_seen[ctype] = json_type
        if not json_type:
            raise _Refused(
                rules, WireError(415, "content-type", _NOT_JSON_TYPE), authenticated=True
            )
        try:
            size = declared_length(None if length is None else length.decode("latin-1"))
        except ValueError:
            raise _Refused(
                rules, WireError(400, "malformed", _NOT_A_NUMBER), authenticated=True
            ) from None
        if (size is not None and size > self.max_body) or not await read_capped(
            receive, self.max_body, body
        ):
            raise _Refused(rules, self._too_large(), authenticated=True)
        if body.trailing is not None:
            return rules, _NO_BODY
        data = bytes(body.data)
        if not data.strip():
            if rules.empty_ok:
                return rules, _NO_BODY
            empty = jsonrpc_problem(None) if rules.jsonrpc else None
            raise _Refused(rules, empty or WireError(400, "malformed", _EMPTY), authenticated=True)
        try:
            value = loads_strict(data, max_depth=self.max_depth, max_items=self.max_items)
        except WireError as err:
            raise _Refused(rules, err, authenticated=True) from None
        problem = jsonrpc_problem(value) if rules.jsonrpc else None
        if problem is not None:
            raise _Refused(rules, problem, authenticated=True)
        return rules, value

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        body = Body()
        try:
            rules, value = await self._check(scope, receive, body)
        except _Refused as refused:
            await self._refuse(scope, receive, send, refused, body)
            return
        with_body = rules.body and scope.get("method") in BODY_METHODS
        if with_body and body.trailing is not None:
            return  # the client went away before its body ended: nobody to answer
        parsed = None if value is _NO_BODY else value
        slots = None if self.hold is None else self.hold(scope, parsed)
        slot = None
        if slots is not None:
            try:
                slot = slots.take(self.caller(scope))
            except CapReached as cap:
                refused = _Refused(rules, cap.err, authenticated=True)
                await self._refuse(scope, receive, send, refused, body)
                return
        if value is not _NO_BODY:
            scope[BODY_KEY] = value
        watching = None
        if with_body and (self.unwatched is None or not self.unwatched(scope, parsed)):
            watching = Watch(bytes(body.data), receive, send, scope)  # disconnect cancels
            receive, send = watching.receive, watching.send
        try:
            if slot is not None and slot.slots.evict_idle:
                await serve_held(self.app, scope, receive, send, slot)
            else:
                await self.app(scope, receive, send)
        finally:
            if watching is not None:
                watching.close()
            if slot is not None:
                slot.release()


class _Refused(Exception):
    def __init__(self, rules: Rules, err: WireError, *, authenticated: bool) -> None:
        super().__init__(err.text)
        self.rules = rules
        self.err = err
        self.authenticated = authenticated
