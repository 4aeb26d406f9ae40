"""The shared JSON surface: list, invoke and watch capabilities over plain HTTP.

:func:`agent_surface` builds a Starlette application that the WebMCP bridge, the Agent Native
shims and any plain HTTP client call. Mount it wherever you like (the WebMCP adapter mounts it
at ``/agent``)::

    from starlette.applications import Starlette
    from starlette.routing import Mount
    from foldkit_agent.adapters.web import agent_surface

    app = Starlette(routes=[Mount("/agent", app=agent_surface(runtime, credentials_of=user_of))])

Routes, relative to the mount point:

==========================  ===================================================================
``GET  capabilities``       ``{"capabilities": [{"name", "title"?, "description", "inputSchema",
                            "annotations": {"readOnlyHint"}}]}`` — what is available right now,
                            for this caller's runtime (see :func:`page_tool`).
``POST invoke/<name>``      one invocation. The body is the input object (JSON). The answer is
                            always an MCP ``CallToolResult``-shaped object
                            ``{"content": [{"type": "text", "text"}], "structuredContent",
                            "isError"}``; see :func:`call_tool_result`.
``GET  events``             server-sent events: ``ready`` once connected, then ``change``
                            whenever availability, the context or a resource changed.
``GET  context``            ``{"context": <the context projection> | null}``.
``GET  session``            ``{"csrfToken", "csrfHeader"}`` for a browser page (same origin).
``GET  approvals``          ``{"approvals": [...]}``: this page session's calls waiting for the
                            person's approval (``confirm`` capabilities), each ``{"id",
                            "text", "capability", "title", "description", "input", "message",
                            "preview", "summary"}``; an ``approvals`` event on ``events``
                            carries the same list whenever it changes.
``POST approvals/<id>``     the person's answer, ``{"approve": true | false}``, with the same
                            Host, Origin and CSRF checks as ``invoke``; the waiting ``invoke``
                            then answers (sent, or refused as declined).
==========================  ===================================================================

Security model
--------------

Every request passes the edge guard (:class:`foldkit_agent.edge.EdgeGuard`, DESIGN §9) before a
route runs, in this order: Host, Origin, credentials, content type and length, strict JSON. A
request refused there is answered in the shape below, audited when it names a capability
(``invoke/<name>``), and reaches no runtime.

* **Host** (every route): the ``Host`` header must name an allowed host (loopback names plus
  ``allowed_hosts``; malformed values such as ``127.0.0.1:8000@evil.example`` never), which
  defeats DNS rebinding. Refused with 421 and the edge's one Host body, as on every adapter.
* **Origin** (``invoke``): when the request carries ``Origin`` it must be the surface's own
  origin or one of ``allowed_origins``; a browser's ``Sec-Fetch-Site`` other than
  ``same-origin``/``none`` is refused too. 403, nothing read or dispatched.
* **CSRF** (``invoke`` from a page): a *session-bound token*. The token is
  ``HMAC-SHA256(secret, session id)``, where the session id comes from the ``session_of``
  hook (the application's own session cookie, say) or, by default, from a random
  ``HttpOnly; SameSite=Strict`` cookie the surface sets on ``GET session``. The page reads the
  token from ``GET session`` (a cross-origin page cannot read that response) and sends it in
  the ``X-CSRF-Token`` header. Missing or wrong: 403, nothing dispatched. Tokens are stateless
  (nothing stored server-side) and rotate with the session. The secret is random per surface
  unless ``csrf_secret`` is given (give one when several workers serve one session).
* **Service callers** (server to server, e.g. an Agent Native server): a request carrying
  ``Authorization: Bearer <token>`` is authenticated by the ``service_auth(token)`` hook and
  skips the CSRF token (it has no cookies). Without a hook, or when the hook returns ``None``,
  it is refused with 401. It still passes the Host and Origin checks, and its credentials still
  come from ``credentials_of(request)``, which can call :func:`service_caller` to learn which
  service is asking and decide whether to trust a user it asserts (say in an
  ``X-Foldkit-Principal`` header).
* **Principal**: the runtime's principal provider reads ``Invocation.credentials``, which is only
  ever what ``credentials_of(request)`` returned. Never the body.

Bodies are read only after the credentials passed. They are JSON only (415 otherwise) and at
most ``max_body`` bytes (413, before reading when ``Content-Length`` says so). Malformed JSON,
non-UTF-8, ``NaN``/``Infinity`` and numbers overflowing to infinity (``1e400``), duplicate keys,
lone surrogates, nesting deeper than 100 levels and more than ``max_items`` values are a 400
with a message for the agent (:func:`foldkit_agent.edge.wire.loads_strict`).
Refusals by the runtime (unknown, unavailable, invalid input, unauthorized, ...) are HTTP 200
results with ``isError: true``; a transport refusal (401/403/413/415/400) has the same body
shape, with ``structuredContent.status == "rejected"`` and a short ``structuredContent.error``
code.
"""

from __future__ import annotations

import asyncio
import json
import logging
import secrets
import threading
from collections import OrderedDict
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable
from dataclasses import dataclass
from typing import Any, cast

import anyio
from sse_starlette import EventSourceResponse, ServerSentEvent
from starlette.applications import Starlette
from starlette.datastructures import Headers
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route
from starlette.types import Message as AsgiMessage
from starlette.types import Scope

from ...contract.approval import Approval, Approver
from ...contract.calls import Invocation
from ...contract.declare import Capability
from ...edge.approvals import Asked, ParkedApproval, ParkedApprovals
from ...edge.callers import (
    ANONYMOUS,
    DEFAULT_PAGE_SESSIONS,
    DEFAULT_PAGE_STREAMS,
    DEFAULT_STREAMS_PER_CALLER,
    Slots,
    caller_key,
)
from ...edge.calls import settle as settle_call
from ...edge.calls import start_call
from ...edge.disconnect import carries_call
from ...edge.guard import BODY_KEY, EdgeGuard, Hold, Rules, route_path
from ...edge.hosts import LOOPBACK_HOSTS, HostPolicy
from ...edge.resolve import (
    RuntimeUnavailableError,
    audit_refusal,
    resolve_runtime,
    settle,
    static_runtime,
)
from ...edge.wire import DEFAULT_MAX_ITEMS, WireError
from ...errors import AgentError
from ...runtime.bound import AgentRuntime, Change
from ...runtime.outcome import Outcome
from .checks import SERVICE_STATE, SurfaceAuth, classify, rejected, render, session_id
from .csrf import CSRF_HEADER, SESSION_COOKIE, CsrfTokens

__all__ = [
    "APPROVED_HEADER",
    "CSRF_HEADER",
    "DEFAULT_ALLOWED_HOSTS",
    "DEFAULT_MAX_BODY",
    "PRINCIPAL_HEADER",
    "SESSION_COOKIE",
    "CsrfTokens",
    "Resolve",
    "SurfaceTarget",
    "agent_surface",
    "call_tool_result",
    "page_tool",
    "service_caller",
]

_log = logging.getLogger("foldkit_agent.adapters.web.surface")


PRINCIPAL_HEADER = "X-Foldkit-Principal"
"""A conventional header for a *service* caller to assert the end user it acts for.

The surface never reads it; a ``credentials_of`` hook may, after checking :func:`service_caller`.
"""

APPROVED_HEADER = "X-Foldkit-Approved"
"""A *service* caller's statement that a person already approved this call (any value, such
as Agent Native's approval key). Read only with ``agent_surface(trust_service_approvals=True)``.
"""


DEFAULT_MAX_BODY = 64 * 1024
"""Largest accepted ``invoke`` body, in bytes (64 KiB)."""

DEFAULT_ALLOWED_HOSTS: tuple[str, ...] = LOOPBACK_HOSTS
"""Host names always accepted (any port): the loopback names."""

Resolve = Callable[[Request], AgentRuntime[Any, Any] | Awaitable[AgentRuntime[Any, Any]]]
"""``(request) -> AgentRuntime`` (or an awaitable of one): one runtime per user or tenant."""

SurfaceTarget = AgentRuntime[Any, Any] | Resolve
"""What :func:`agent_surface` serves: one bound runtime, or a :data:`Resolve` callable."""

CredentialsOf = Callable[[Request], Any]
ServiceAuth = Callable[[str], Any]
SessionOf = Callable[[Request], Any]


# -- results ---------------------------------------------------------------------------------


def call_tool_result(outcome: Outcome) -> dict[str, Any]:
    """Map an :class:`~foldkit_agent.runtime.Outcome` to the MCP ``CallToolResult`` JSON shape.

    Returns:
        ``{"content": [{"type": "text", "text": outcome.text}], "structuredContent":
        outcome.data, "isError": not outcome.ok}`` — the shape MCP's ``tools/call`` returns
        (MCP spec 2025-06-18, "Tool Result") and the shape WebMCP polyfills accept from
        ``execute``.

    Example:
        >>> call_tool_result(await rt.call("no_such_capability", {}))["isError"]
        True
    """
    return {
        "content": [{"type": "text", "text": outcome.text}],
        "structuredContent": outcome.data,
        "isError": not outcome.ok,
    }


def page_tool(cap: Capability) -> dict[str, Any]:
    """One capability as the page registers it with WebMCP's ``registerTool`` (DESIGN §10).

    Returns:
        ``{"name", "title"?, "description", "inputSchema", "annotations": {"readOnlyHint"}}``;
        ``title`` only when the capability has one. WebMCP's tool annotations carry only
        ``readOnlyHint`` of the four behaviour hints, so the others stay with MCP and A2A.

    Example:
        >>> page_tool(AppAgent.by_name["select_todo"])["annotations"]
        {'readOnlyHint': False}
    """
    tool: dict[str, Any] = {"name": cap.name}
    if cap.title is not None:
        tool["title"] = cap.title
    tool["description"] = cap.description
    tool["inputSchema"] = cap.input_schema
    tool["annotations"] = {"readOnlyHint": cap.hints.read_only}
    return tool


def service_caller(request: Request) -> Any | None:
    """The service identity ``service_auth`` returned for this request, or ``None``.

    Call it from ``credentials_of``: ``None`` means the caller is a browser page with a session;
    otherwise it is a server authenticated by a service token, and any end user it asserts
    (say in :data:`PRINCIPAL_HEADER`) is trusted only as far as you decide.
    """
    return getattr(request.state, SERVICE_STATE, None)


# -- the surface -----------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Config:
    target: Any
    credentials_of: CredentialsOf | None
    session_of: SessionOf | None
    csrf: CsrfTokens
    transport: str
    service_transport: str
    ping: float
    trust_service_approvals: bool


class PageSessions:
    """The page sessions a surface counts apart, most recently seen last, at most ``cap``.

    A page session is noted when the page asks ``GET session`` for its CSRF token (the id is
    the surface's own cookie, or what ``session_of`` returns). Each noted session holds its own
    share of ``events`` streams; a request whose session was never noted here (a cookie the page
    made up) or was pushed out by newer ones counts as the one anonymous caller. So one browser
    cannot take every page's streams, and minting sessions buys at most ``cap`` buckets, all
    within the one small total cap on streams (``max_streams``, default 64).
    """

    def __init__(self, cap: int = DEFAULT_PAGE_SESSIONS) -> None:
        if cap < 1:
            raise ValueError(f"the cap on page sessions must be at least 1, got {cap}")
        self.cap = cap
        self._seen: OrderedDict[str, None] = OrderedDict()

    def __len__(self) -> int:
        return len(self._seen)

    def __contains__(self, sid: object) -> bool:
        return sid in self._seen

    def note(self, sid: str) -> None:
        self._seen[sid] = None
        self._seen.move_to_end(sid)
        while len(self._seen) > self.cap:
            self._seen.popitem(last=False)


def _page_caller(sessions: PageSessions, session_of: SessionOf | None) -> Callable[[Scope], str]:
    """The edge guard's ``caller`` for the surface: an authenticated caller as everywhere,
    else the page session (``"page-session:<id>"``) when it is one of ``sessions``."""

    def caller(scope: Scope) -> str:
        key = caller_key(scope)
        if key != ANONYMOUS:
            return key
        request = Request(scope)
        if service_caller(request) is not None:
            return key
        sid = session_id(request, session_of)
        return f"page-session:{sid}" if sid is not None and sid in sessions else ANONYMOUS

    return caller


def _events_hold(streams: Slots) -> Hold:
    def hold(scope: Any, _body: Any) -> Slots | None:
        return streams if scope.get("method") == "GET" and route_path(scope) == "/events" else None

    return hold


def agent_surface(
    target: SurfaceTarget,
    *,
    credentials_of: CredentialsOf | None = None,
    session_of: SessionOf | None = None,
    service_auth: ServiceAuth | None = None,
    csrf_secret: bytes | None = None,
    allowed_hosts: Iterable[str] | str | None = None,
    allowed_origins: Iterable[str] = (),
    max_body: int = DEFAULT_MAX_BODY,
    max_items: int = DEFAULT_MAX_ITEMS,
    transport: str = "webmcp",
    service_transport: str = "agent-native",
    ping: float = 15.0,
    service_only: bool = False,
    trust_service_approvals: bool = False,
    max_streams_per_caller: int = DEFAULT_STREAMS_PER_CALLER,
    max_streams: int = DEFAULT_PAGE_STREAMS,
    max_page_sessions: int = DEFAULT_PAGE_SESSIONS,
) -> Starlette:
    """Build the JSON surface for one runtime (or one runtime per request).

    Args:
        target: a bound :class:`~foldkit_agent.runtime.AgentRuntime`, or
            ``resolve(request) -> AgentRuntime`` (sync or async) for one application
            instance per user or tenant.
        credentials_of: ``(request) -> credentials`` (sync or async), read from the page's
            session or, for a service caller, from what it asserts; the value becomes
            ``Invocation.credentials``. ``None`` (or the hook returning ``None``) means no
            credentials. An exception refuses the call with 403 and dispatches nothing.
        session_of: ``(request) -> session id | None`` binding CSRF tokens to the
            application's session; default: the surface's own :data:`SESSION_COOKIE`.
        service_auth: ``(bearer token) -> service identity | None`` (sync or async) for
            server-to-server callers; ``None`` refuses every bearer token.
        csrf_secret: HMAC key for CSRF tokens (>= 16 bytes); random per surface by default.
        allowed_hosts: more accepted ``Host`` names (any port) besides the loopback names,
            which are always accepted (:class:`~foldkit_agent.edge.HostPolicy`); ``"*"``
            accepts any well-formed host (only behind a proxy that checks ``Host``).
        allowed_origins: extra origins (``"https://app.example"``) allowed to invoke.
        max_body: largest ``invoke`` body in bytes (default 64 KiB); larger is 413.
        max_items: most JSON values in one body (default 10,000).
        transport: ``Invocation.transport`` for page callers (default ``"webmcp"``).
        service_transport: ``Invocation.transport`` for service callers
            (default ``"agent-native"``).
        ping: seconds between keep-alive comments on ``events``.
        service_only: refuse every request without a bearer token (401), before anything
            else runs: what :func:`foldkit_agent.adapters.native.native_app` serves.
        trust_service_approvals: a service caller that sends :data:`APPROVED_HEADER` is taken
            at its word that a person approved (the generated Agent Native actions send it
            after their ``needsApproval`` step). Off by default: a service caller of a
            ``confirm`` capability is then refused as ``"unavailable"``.

    Approval (DESIGN §11): a page caller's ``invoke`` of a ``confirm`` capability waits while
    the person in the page answers through ``approvals``; only the same session can see or
    answer it, and the runtime's ``approval_timeout`` bounds the wait. A page without a session
    has no person to ask: the call is refused as ``"unavailable"``.
        max_streams_per_caller, max_streams: most open ``events`` streams one caller and all
            callers together may hold (defaults 16 and 64: page sessions are free to mint, so
            all of them share this one small pool; each stream holds a connection); past
            them 429 or 503 naming the cap (at the total, the longest-idle stream is ended
            to make room instead).
        max_page_sessions: page sessions counted apart (default 1,000; :class:`PageSessions`):
            each page session that asked ``session`` for its token holds its own share of
            streams; any other anonymous page is the one anonymous caller
            (:data:`foldkit_agent.edge.callers.ANONYMOUS`), so a cookie a page makes up for
            itself buys nothing.

    Returns:
        A :class:`starlette.applications.Starlette` app with the routes listed in the module
        doc (``app.state.event_streams`` counts its open ``events`` streams); mount it
        (``Mount("/agent", app=...)``) or serve it directly.

    Raises:
        ValueError: ``max_body`` below 2 bytes, a ``csrf_secret`` shorter than 16 bytes, or a
            malformed ``allowed_hosts``/``allowed_origins`` entry.

    Example:
        >>> app = agent_surface(runtime, credentials_of=lambda r: users.get(r.cookies.get("sid")))
    """
    config = _Config(
        target=target,
        credentials_of=credentials_of,
        session_of=session_of,
        csrf=CsrfTokens(csrf_secret),
        transport=transport,
        service_transport=service_transport,
        ping=ping,
        trust_service_approvals=trust_service_approvals,
    )
    sessions = PageSessions(max_page_sessions)
    surface = _Surface(config, sessions)
    auth = SurfaceAuth(
        service_auth=service_auth,
        csrf=config.csrf,
        session_of=session_of,
        service_only=service_only,
    )
    streams = Slots(
        "open event streams",
        per_caller=min(max_streams_per_caller, max_streams),
        total=max_streams,
        evict_idle=True,
    )
    guard = Middleware(
        EdgeGuard,
        hosts=HostPolicy(allowed_hosts),
        classify=classify,
        max_body=max_body,
        render=render,
        authenticate=auth,
        on_refusal=surface.audit_refusal,
        allowed_origins=allowed_origins,
        max_items=max_items,
        hold=_events_hold(streams),
        caller=_page_caller(sessions, session_of),
    )
    app = Starlette(
        routes=[
            Route("/capabilities", surface.capabilities, methods=["GET"]),
            Route("/context", surface.context, methods=["GET"]),
            Route("/session", surface.session, methods=["GET"]),
            Route("/events", surface.events, methods=["GET"]),
            Route("/invoke/{name:path}", surface.invoke, methods=["POST"]),
            Route("/approvals", surface.approvals, methods=["GET"]),
            Route("/approvals/{key}", surface.answer, methods=["POST"]),
        ],
        middleware=[guard],
    )
    app.state.event_streams = streams
    app.state.page_sessions = sessions
    return app


class _Surface:
    """The route handlers of one :func:`agent_surface`."""

    def __init__(self, config: _Config, sessions: PageSessions) -> None:
        self.c = config
        self.sessions = sessions
        self.parked = ParkedApprovals()  # page calls waiting for the person's answer
        self.streams: dict[str | None, set[_ChangeFeed]] = {}  # session -> its event streams

    # -- shared steps -------------------------------------------------------------------------

    async def _runtime(self, request: Request) -> AgentRuntime[Any, Any] | Response:
        """The runtime for this request, or a 503 answer when ``resolve`` failed."""
        try:
            return await resolve_runtime(self.c.target, request)
        except RuntimeUnavailableError:
            return rejected(503, "unavailable", "The application is not available right now.")

    def _transport(self, scope: Scope) -> str:
        service = Headers(scope=scope).get("authorization") is not None
        return self.c.service_transport if service else self.c.transport

    async def audit_refusal(
        self, scope: Scope, rules: Rules, err: WireError, authenticated: bool
    ) -> None:
        """Audit an edge refusal of ``invoke/<name>`` in the runtime that would have served it.

        Before the caller is known (steps 1 to 3) only a fixed runtime is audited:
        ``resolve(request)`` is application code, never run for an unknown caller.
        """
        if rules.capability is None:
            return
        if not authenticated and static_runtime(self.c.target) is None:
            return
        rt = await self._runtime(Request(scope))
        if isinstance(rt, AgentRuntime):
            transport = self._transport(scope)
            audit_refusal(rt, capability=rules.capability, transport=transport, err=err)

    async def _credentials(self, request: Request) -> Any:
        if self.c.credentials_of is None:
            return None
        return await settle(self.c.credentials_of(request))

    # -- routes -------------------------------------------------------------------------------

    async def capabilities(self, request: Request) -> Response:
        rt = await self._runtime(request)
        if isinstance(rt, Response):
            return rt
        caps = [page_tool(c) for c in rt.messages.available()]
        return JSONResponse({"capabilities": caps}, headers={"Cache-Control": "no-store"})

    async def context(self, request: Request) -> Response:
        rt = await self._runtime(request)
        if isinstance(rt, Response):
            return rt
        try:
            ctx = rt.context()
        except Exception:
            _log.warning("reading the context failed", exc_info=True)
            return rejected(500, "context", "The context could not be read right now.")
        return JSONResponse({"context": ctx}, headers={"Cache-Control": "no-store"})

    async def session(self, request: Request) -> Response:
        if service_caller(request) is not None:
            return rejected(400, "service", "Service callers need no CSRF token.")
        sid = session_id(request, self.c.session_of)
        new_cookie: str | None = None
        if sid is None and self.c.session_of is None:
            sid = new_cookie = secrets.token_urlsafe(32)
        if sid is None:
            return rejected(403, "no-session", "Sign in to the page first.")
        self.sessions.note(sid)  # from now on this page holds its own share of streams
        response = JSONResponse(
            {"csrfToken": self.c.csrf.token_for(sid), "csrfHeader": CSRF_HEADER},
            headers={"Cache-Control": "no-store"},
        )
        if new_cookie is not None:
            path = request.scope.get("root_path") or "/"
            response.set_cookie(
                SESSION_COOKIE,
                new_cookie,
                httponly=True,
                samesite="strict",
                path=path,
                secure=request.url.scheme == "https",
            )
        return response

    async def events(self, request: Request) -> Response:
        rt = await self._runtime(request)
        if isinstance(rt, Response):
            return rt
        feed = _ChangeFeed(asyncio.get_running_loop())
        try:
            unwatch = rt.watch(feed.push)
        except AgentError:
            return rejected(501, "no-events", "This application cannot report changes.")
        owner = self._owner(request)
        listeners = self.streams.setdefault(owner, set())
        listeners.add(feed)

        def unsubscribe() -> None:
            unwatch()
            listeners.discard(feed)
            if not listeners:
                self.streams.pop(owner, None)

        def available() -> list[str]:
            return [c.name for c in rt.messages.available()]

        shutdown = anyio.Event()  # set by sse-starlette when the server shuts down

        async def next_change() -> Change | None:
            got: list[Change] = []
            async with anyio.create_task_group() as tg:

                async def read() -> None:
                    got.append(await feed.next())
                    tg.cancel_scope.cancel()

                async def stop() -> None:
                    await shutdown.wait()
                    tg.cancel_scope.cancel()

                tg.start_soon(read)
                tg.start_soon(stop)
            return got[0] if got else None

        async def stream() -> AsyncIterator[ServerSentEvent]:
            try:
                yield ServerSentEvent(json.dumps({"available": available()}), event="ready")
                while True:
                    change = await next_change()
                    if change is None:  # shutting down: end the response cleanly
                        return
                    if feed.take_approvals():
                        waiting = {"approvals": self._waiting(owner)}
                        yield ServerSentEvent(json.dumps(waiting), event="approvals")
                        if not (change.capabilities or change.context or change.resources):
                            continue
                    data = {
                        "capabilities": change.capabilities,
                        "context": change.context,
                        "resources": sorted(change.resources),
                        "available": available(),
                    }
                    yield ServerSentEvent(json.dumps(data), event="change")
            finally:
                unsubscribe()

        return EventSourceResponse(
            stream(),
            ping=self.c.ping,
            headers={"Cache-Control": "no-store"},
            shutdown_event=shutdown,
            shutdown_grace_period=1.0,
        )

    async def invoke(self, request: Request) -> Response:
        """One invocation; the edge guard has checked the caller and parsed the body."""
        name = request.path_params["name"]
        payload: Any = request.scope.get(BODY_KEY, {})
        try:
            credentials = await self._credentials(request)
        except Exception:
            _log.warning("credentials_of raised; refusing the call", exc_info=True)
            return rejected(
                403, "principal", "The caller could not be identified. Nothing was applied.", name
            )
        rt = await self._runtime(request)
        if isinstance(rt, Response):
            return rt
        signal = asyncio.Event()
        owner = self._owner(request)
        approver, asked = self._approver(request, credentials)
        invocation = Invocation(
            transport=self._transport(request.scope),
            signal=signal,
            credentials=credentials,
            approver=approver,
        )
        # the call is scheduled first, so it starts before a disconnect can be noticed
        call = start_call(rt, name, payload, invocation)
        carries_call(request.scope)  # a drain waits until this answer is written
        watcher = asyncio.ensure_future(_wait_disconnect(request, signal))
        try:
            outcome = await settle_call(call, signal, asked)
            if outcome is None and asked is not None:  # a person is asked on the page
                self._park(name, owner, call, *asked.result())
                outcome = await settle_call(call, signal)
        finally:
            watcher.cancel()
        assert outcome is not None  # settle() without `asked` always has an outcome
        return JSONResponse(call_tool_result(outcome), headers={"Cache-Control": "no-store"})

    # -- approval ----------------------------------------------------------------------------

    def _owner(self, request: Request) -> str | None:
        """The page session a request belongs to; ``None`` for a service caller or no session."""
        if service_caller(request) is not None:
            return None
        return session_id(request, self.c.session_of)

    def _approver(self, request: Request, credentials: Any) -> tuple[Approver | None, Asked | None]:
        """How this call can ask a person: the page's own person, or a trusted service.

        ``(None, None)`` when no person can be asked (a page without a session, a service
        caller the surface does not trust to have asked one): the runtime then refuses a
        ``confirm`` capability as ``"unavailable"``.
        """
        if service_caller(request) is None:
            if self._owner(request) is None:
                return None, None
            return ParkedApprovals.asker()
        said = request.headers.get(APPROVED_HEADER)
        if not self.c.trust_service_approvals or not said:
            return None, None
        by = f"{_who(credentials)} (approved in {self.c.service_transport})"

        async def approved(_request: Any) -> Approval:
            return Approval(approved=True, by=by)

        return approved, None

    def _park(
        self,
        name: str,
        owner: str | None,
        call: asyncio.Future[Any],
        request: Any,
        answer: asyncio.Future[Approval],
    ) -> None:
        key = secrets.token_urlsafe(16)
        if self.parked.park(key, name, owner, call, request, answer) is None:
            answer.set_exception(self.parked.full(owner))
            return
        self._announce(owner)
        call.add_done_callback(lambda _c: self._announce(owner))

    def _announce(self, owner: str | None) -> None:
        for feed in list(self.streams.get(owner, ())):
            feed.approvals_changed()

    def _waiting(self, owner: str | None) -> list[dict[str, Any]]:
        if owner is None:
            return []
        return [_shown(p) for p in self.parked.of(owner)]

    async def approvals(self, request: Request) -> Response:
        """``GET approvals``: this page session's calls waiting for the person."""
        if service_caller(request) is not None:
            return rejected(400, "service", "Only the page's own person answers approvals.")
        waiting = self._waiting(self._owner(request))
        return JSONResponse({"approvals": waiting}, headers={"Cache-Control": "no-store"})

    async def answer(self, request: Request) -> Response:
        """``POST approvals/<id>``: the person's answer (the guard checked Origin and CSRF)."""
        if service_caller(request) is not None:
            return rejected(400, "service", "Only the page's own person answers approvals.")
        body: Any = request.scope.get(BODY_KEY)
        fields = cast(dict[str, Any], body) if isinstance(body, dict) else {}
        approve = fields.get("approve")
        if not isinstance(approve, bool) or set(fields) != {"approve"}:
            return rejected(400, "malformed", 'Send {"approve": true} or {"approve": false}.')
        try:
            credentials = await self._credentials(request)
        except Exception:
            _log.warning("credentials_of raised; refusing the answer", exc_info=True)
            return rejected(403, "principal", "The person could not be identified.")
        sid = self._owner(request)
        waiting = None if sid is None else self.parked.take(request.path_params["key"], sid)
        if waiting is None:
            return rejected(404, "not-waiting", "No call of this page waits for that answer.")
        waiting.decide(Approval(approved=approve, by=_who(credentials)))
        self._announce(sid)
        return JSONResponse(
            {"ok": True, "approved": approve}, headers={"Cache-Control": "no-store"}
        )


async def _wait_disconnect(request: Request, signal: asyncio.Event) -> None:
    """Set ``signal`` when the client goes away while its invocation is still running."""
    receive = request.receive
    while True:
        message: AsgiMessage = await receive()
        if message.get("type") == "http.disconnect":
            signal.set()
            return


def _who(credentials: Any) -> str:
    """Who answered, for the audit's ``approved_by``: the page's signed-in user, if known."""
    for attr in ("id", "subject", "user_id", "name"):
        value = getattr(credentials, attr, None)
        if isinstance(value, str) and value:
            return value
    return "page session"


def _shown(parked: ParkedApproval) -> dict[str, Any]:
    return {"id": parked.key, "text": parked.request.text(), **parked.request.to_json()}


class _ChangeFeed:
    """Merges runtime changes for one event stream; safe to push from any thread."""

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self._loop = loop
        self._thread = threading.get_ident()
        self._approvals = False
        self._caps = False
        self._ctx = False
        self._res: set[str] = set()
        self._ready = asyncio.Event()

    def push(self, change: Change) -> None:
        if threading.get_ident() == self._thread:
            self._merge(change)
        else:
            self._loop.call_soon_threadsafe(self._merge, change)

    def _merge(self, change: Change) -> None:
        self._caps |= change.capabilities
        self._ctx |= change.context
        self._res |= change.resources
        self._ready.set()

    def approvals_changed(self) -> None:
        """The session's waiting approvals changed (called on the event loop)."""
        self._approvals = True
        self._ready.set()

    def take_approvals(self) -> bool:
        """Whether the approvals changed since last asked."""
        changed, self._approvals = self._approvals, False
        return changed

    async def next(self) -> Change:
        await self._ready.wait()
        self._ready.clear()
        change = Change(self._caps, self._ctx, frozenset(self._res))
        self._caps, self._ctx, self._res = False, False, set()
        return change
