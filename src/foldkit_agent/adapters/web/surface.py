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
                            "isError"}``; see :func:`call_tool_result`. A call that asks the
                            person in the page is parked and answered at once with 202 and
                            ``structuredContent.status == "waiting"`` naming its ``call`` id
                            (:func:`~foldkit_agent.adapters.web.approvals.waiting_result`).
``GET  calls/<id>``         the answer of this page session's parked call, given once (200);
                            202 ``{"status": "waiting"}`` while the person decides; 404 for
                            any other id.
``GET  events``             server-sent events: ``ready`` once connected, then ``change``
                            whenever availability, the context or a resource changed,
                            ``approvals`` when this session's waiting calls changed, and
                            ``ended`` ``{"id"}`` when one of its parked calls answered.
``GET  context``            ``{"context": <the context projection> | null}``.
``GET  session``            ``{"csrfToken", "csrfHeader"}`` for a browser page (same origin).
``GET  approvals``          ``{"approvals": [...]}``: this page session's calls waiting for the
                            person's approval (``confirm`` capabilities), each ``{"id",
                            "text", "capability", "title", "description", "input", "message",
                            "preview", "summary"}``; an ``approvals`` event on ``events``
                            carries the same list whenever it changes.
``POST approvals/<id>``     the person's answer, ``{"approve": true | false, "message"?: str,
                            "input"?: {...}}`` (a decline's message reaches the agent; edited
                            input is decoded again and asked once more), with the same Host,
                            Origin and CSRF checks as ``invoke``; the parked call then runs to
                            its end (sent, or refused as declined or stale).
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

from collections.abc import Awaitable, Callable, Iterable
from typing import Any

from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.routing import Route

from ...edge.activity import ActivityFeed
from ...edge.callers import Slots
from ...edge.calls import CallsInFlight
from ...edge.guard import EdgeGuard, Hold, route_path
from ...edge.hosts import LOOPBACK_HOSTS, HostPolicy
from ...edge.options import DEFAULT_HTTP_OPTIONS, HttpOptions
from ...runtime.bound import AgentRuntime
from .approvals import APPROVED_HEADER
from .checks import SurfaceAuth, classify, render
from .csrf import CSRF_HEADER, SESSION_COOKIE, CsrfTokens
from .results import call_tool_result, page_tool
from .routes import Surface, SurfaceConfig
from .sessions import PageSessions, page_caller, service_caller

__all__ = [
    "APPROVED_HEADER",
    "CSRF_HEADER",
    "DEFAULT_ALLOWED_HOSTS",
    "DEFAULT_MAX_BODY",
    "PRINCIPAL_HEADER",
    "SESSION_COOKIE",
    "CsrfTokens",
    "PageSessions",
    "Resolve",
    "SurfaceTarget",
    "agent_surface",
    "call_tool_result",
    "page_tool",
    "service_caller",
]


PRINCIPAL_HEADER = "X-Foldkit-Principal"
"""A conventional header for a *service* caller to assert the end user it acts for.

The surface never reads it; a ``credentials_of`` hook may, after checking :func:`service_caller`.
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
    options: HttpOptions = DEFAULT_HTTP_OPTIONS,
    allowed_origins: Iterable[str] = (),
    transport: str = "webmcp",
    service_transport: str = "agent-native",
    ping: float = 15.0,
    service_only: bool = False,
    trust_service_approvals: bool = False,
    calls: CallsInFlight | None = None,
    signed_in: bool = False,
    activity: ActivityFeed | None = None,
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
        options: what every HTTP adapter of the server shares
            (:class:`~foldkit_agent.edge.HttpOptions`), read here as:

            * ``allowed_hosts``: more accepted ``Host`` names (any port) besides the
              loopback names, which are always accepted; ``"*"`` accepts any well-formed
              host (only behind a proxy that checks ``Host``).
            * ``max_body``: largest ``invoke`` body in bytes (default 64 KiB); larger is
              413. ``max_items``: most JSON values in one body (default 10,000).
            * ``caps.streams_per_caller``, ``caps.page_streams``: most open ``events``
              streams one caller and all callers together may hold (defaults 16 and 64: page
              sessions are free to mint, so all of them share this one small pool; each
              stream holds a connection); past them 429 or 503 naming the cap (at the total,
              a stream of a caller holding more than the newcomer is ended to make room
              instead).
            * ``caps.page_sessions``: page sessions counted apart (default 1,000;
              :class:`PageSessions`): each page session that asked ``session`` for its token
              holds its own share of streams; any other anonymous page is the one anonymous
              caller (:data:`foldkit_agent.edge.callers.ANONYMOUS`), so a cookie a page makes
              up for itself buys nothing.
            * the call caps, of the default ``calls``.

            Its ``host``, ``tokens`` and ``progress_interval`` are not read: a page signs in
            with its session, a service caller through ``service_auth``.
        allowed_origins: extra origins (``"https://app.example"``) allowed to invoke.
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
        calls: the server's calls in flight, whose per-caller caps on calls in flight and on
            calls waiting for a person count this surface's calls with every other
            transport's (:class:`~foldkit_agent.edge.calls.CallsInFlight`; share one among
            every adapter of a server); default one of its own within ``options.caps``.
            Every anonymous page together is one caller for them, however many sessions it
            holds.
        signed_in: a page request without a session is refused with 401, reads included
            (give it with a ``session_of`` that knows only signed-in people, as
            :func:`~foldkit_agent.adapters.web.webmcp.webmcp_app` does with sign-in).
        activity: an :class:`~foldkit_agent.edge.ActivityFeed` whose growth the ``events``
            stream reports as ``activity`` events (for a page that shows it).

    Approval (DESIGN §11): a page caller's ``invoke`` of a ``confirm`` capability is parked
    while the person in the page answers through ``approvals``, so it holds no connection
    (:mod:`~foldkit_agent.adapters.web.approvals`); only the same session can see or answer
    it, and the runtime's ``approval_timeout`` bounds the wait. A page without a session has
    no person to ask: the call is refused as ``"unavailable"``.

    Returns:
        A :class:`starlette.applications.Starlette` app with the routes listed in the module
        doc (``app.state.event_streams`` counts its open ``events`` streams); mount it
        (``Mount("/agent", app=...)``) or serve it directly.

    Raises:
        ValueError: a ``csrf_secret`` shorter than 16 bytes, or a malformed
            ``options.allowed_hosts``/``allowed_origins`` entry.

    Example:
        >>> app = agent_surface(runtime, credentials_of=lambda r: users.get(r.cookies.get("sid")),
        ...                     options=HttpOptions(allowed_hosts=["app.example"]))
    """
    limits = options.caps
    config = SurfaceConfig(
        target=target,
        credentials_of=credentials_of,
        session_of=session_of,
        csrf=CsrfTokens(csrf_secret),
        transport=transport,
        service_transport=service_transport,
        ping=ping,
        trust_service_approvals=trust_service_approvals,
        calls=CallsInFlight(limits) if calls is None else calls,
        activity=activity,
    )
    sessions = PageSessions(limits.page_sessions)
    surface = Surface(config, sessions)
    auth = SurfaceAuth(
        service_auth=service_auth,
        csrf=config.csrf,
        session_of=session_of,
        service_only=service_only,
        signed_in=signed_in,
    )
    streams = Slots(
        "open event streams",
        per_caller=min(limits.streams_per_caller, limits.page_streams),
        total=limits.page_streams,
        evict_idle=True,
    )
    guard = Middleware(
        EdgeGuard,
        hosts=HostPolicy(options.allowed_hosts),
        classify=classify,
        max_body=options.body_limit(DEFAULT_MAX_BODY),
        render=render,
        authenticate=auth,
        on_refusal=surface.audit_refusal,
        allowed_origins=allowed_origins,
        max_items=options.max_items,
        hold=_events_hold(streams),
        caller=page_caller(sessions, session_of),
        rates=options.rates,
    )
    app = Starlette(
        routes=[
            Route("/capabilities", surface.capabilities, methods=["GET"]),
            Route("/context", surface.context, methods=["GET"]),
            Route("/session", surface.session, methods=["GET"]),
            Route("/events", surface.events, methods=["GET"]),
            Route("/invoke/{name:path}", surface.invoke, methods=["POST"]),
            Route("/calls/{key}", surface.called, methods=["GET"]),
            Route("/approvals", surface.waiting, methods=["GET"]),
            Route("/approvals/{key}", surface.answer, methods=["POST"]),
        ],
        middleware=[guard],
    )
    app.state.event_streams = streams
    app.state.page_sessions = sessions
    return app
