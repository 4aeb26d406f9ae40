"""The shared JSON surface: list, invoke and watch capabilities over plain HTTP.

:func:`agent_surface` builds a Starlette application that the WebMCP bridge, the Agent Native
shims and any plain HTTP client call. Mount it wherever you like (the WebMCP adapter mounts it
at ``/agent``)::

    from starlette.applications import Starlette
    from starlette.routing import Mount
    from foldkit_agent.adapters.web import agent_surface

    app = Starlette(routes=[Mount("/agent", app=agent_surface(runtime, principal_of=user_of))])

Routes, relative to the mount point:

==========================  ===================================================================
``GET  capabilities``       ``{"capabilities": [{"name", "description", "inputSchema"}]}`` —
                            what is available right now, for this caller's runtime.
``POST invoke/<name>``      one invocation. The body is the input object (JSON). The answer is
                            always an MCP ``CallToolResult``-shaped object
                            ``{"content": [{"type": "text", "text"}], "structuredContent",
                            "isError"}``; see :func:`call_tool_result`.
``GET  events``             server-sent events: ``ready`` once connected, then ``change``
                            whenever availability, the context or a resource changed.
``GET  context``            ``{"context": <the context projection> | null}``.
``GET  session``            ``{"csrfToken", "csrfHeader"}`` for a browser page (same origin).
==========================  ===================================================================

Security model
--------------

* **Host** (every route): the ``Host`` header must name an allowed host (loopback names by
  default), which defeats DNS rebinding. Refused with 403.
* **Origin** (``invoke``): when the request carries ``Origin`` it must be the surface's own
  origin or one of ``allowed_origins``; a browser's ``Sec-Fetch-Site`` other than
  ``same-origin``/``none`` is refused too. 403, nothing dispatched.
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
  it is refused with 401. It still passes the Host and Origin checks, and its principal still
  comes from ``principal_of(request)``, which can call :func:`service_caller` to learn which
  service is asking and decide whether to trust a user it asserts (say in an
  ``X-Foldkit-Principal`` header).
* **Principal**: only ever ``principal_of(request)``, put on ``Invocation.credentials``; the
  runtime's principal provider reads it. Never the body.

Bodies are JSON only (415 otherwise) and at most ``max_body`` bytes (413). Malformed JSON,
non-UTF-8, non-finite numbers, duplicate keys, lone surrogates and nesting deeper than 100
levels are a 400 with a message for the agent (:func:`foldkit_agent.edge.wire.loads_strict`).
Refusals by the runtime (unknown, unavailable, invalid input, unauthorized, ...) are HTTP 200
results with ``isError: true``; a transport refusal (401/403/413/415/400) has the same body
shape, with ``structuredContent.status == "rejected"`` and a short ``structuredContent.error``
code.
"""

from __future__ import annotations

import asyncio
import inspect
import json
import logging
import secrets
import threading
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable
from dataclasses import dataclass
from typing import Any, Literal

import anyio
from sse_starlette import EventSourceResponse, ServerSentEvent
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route
from starlette.types import Message as AsgiMessage

from ...contract.calls import Invocation
from ...edge.wire import WireError, loads_strict
from ...errors import AgentError
from ...runtime.bound import AgentRuntime, Change
from ...runtime.outcome import Outcome, summarize
from .checks import host_allowed, origin_allowed
from .csrf import CSRF_HEADER, SESSION_COOKIE, CsrfTokens

__all__ = [
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
    "host_allowed",
    "origin_allowed",
    "service_caller",
]

_log = logging.getLogger("foldkit_agent.adapters.web.surface")


PRINCIPAL_HEADER = "X-Foldkit-Principal"
"""A conventional header for a *service* caller to assert the end user it acts for.

The surface never reads it; a ``principal_of`` hook may, after checking :func:`service_caller`.
"""


DEFAULT_MAX_BODY = 64 * 1024
"""Largest accepted ``invoke`` body, in bytes (64 KiB)."""

DEFAULT_ALLOWED_HOSTS: tuple[str, ...] = ("127.0.0.1", "localhost", "::1")
"""Host names accepted by default (any port): loopback only."""

Resolve = Callable[[Request], AgentRuntime[Any, Any] | Awaitable[AgentRuntime[Any, Any]]]
"""``(request) -> AgentRuntime`` (or an awaitable of one): one runtime per user or tenant."""

SurfaceTarget = AgentRuntime[Any, Any] | Resolve
"""What :func:`agent_surface` serves: one bound runtime, or a :data:`Resolve` callable."""

PrincipalOf = Callable[[Request], Any]
ServiceAuth = Callable[[str], Any]
SessionOf = Callable[[Request], Any]

_SERVICE_STATE = "foldkit_agent_service"


# -- results ---------------------------------------------------------------------------------


def call_tool_result(outcome: Outcome) -> dict[str, Any]:
    """Map an :class:`~foldkit_agent.runtime.Outcome` to the MCP ``CallToolResult`` JSON shape.

    Returns:
        ``{"content": [{"type": "text", "text": outcome.text}], "structuredContent":
        outcome.data, "isError": not outcome.ok}`` — the shape MCP's ``tools/call`` returns
        (MCP spec 2025-06-18, "Tool Result") and the shape WebMCP polyfills accept from
        ``execute``.

    Example:
        >>> call_tool_result(summarize(AgentUnknownCapabilityError(capability="x")))["isError"]
        True
    """
    return {
        "content": [{"type": "text", "text": outcome.text}],
        "structuredContent": outcome.data,
        "isError": not outcome.ok,
    }


def _rejected(status: int, error: str, text: str, capability: str | None = None) -> JSONResponse:
    body = {
        "content": [{"type": "text", "text": text}],
        "structuredContent": {
            "status": "rejected",
            "error": error,
            "capability": capability,
            "message": text,
        },
        "isError": True,
    }
    return JSONResponse(body, status_code=status, headers={"Cache-Control": "no-store"})


def service_caller(request: Request) -> Any | None:
    """The service identity ``service_auth`` returned for this request, or ``None``.

    Call it from ``principal_of``: ``None`` means the caller is a browser page with a session;
    otherwise it is a server authenticated by a service token, and any end user it asserts
    (say in :data:`PRINCIPAL_HEADER`) is trusted only as far as you decide.
    """
    return getattr(request.state, _SERVICE_STATE, None)


# -- the surface -----------------------------------------------------------------------------


async def _maybe_await(value: Any) -> Any:
    if inspect.isawaitable(value):
        return await value
    return value


@dataclass(frozen=True, slots=True)
class _Config:
    target: Any
    principal_of: PrincipalOf | None
    session_of: SessionOf | None
    service_auth: ServiceAuth | None
    csrf: CsrfTokens
    allowed_hosts: tuple[str, ...] | None
    allowed_origins: tuple[str, ...]
    max_body: int
    transport: str
    service_transport: str
    ping: float


class _BodyError(Exception):
    def __init__(self, status: int, error: str, text: str) -> None:
        super().__init__(text)
        self.status = status
        self.error = error
        self.text = text


def _is_json(content_type: str | None) -> bool:
    if not content_type:
        return False
    mime = content_type.split(";", 1)[0].strip().lower()
    return mime == "application/json" or (
        mime.startswith("application/") and mime.endswith("+json")
    )


def agent_surface(
    target: SurfaceTarget,
    *,
    principal_of: PrincipalOf | None = None,
    session_of: SessionOf | None = None,
    service_auth: ServiceAuth | None = None,
    csrf_secret: bytes | None = None,
    allowed_hosts: Iterable[str] | None = DEFAULT_ALLOWED_HOSTS,
    allowed_origins: Iterable[str] = (),
    max_body: int = DEFAULT_MAX_BODY,
    transport: str = "webmcp",
    service_transport: str = "agent-native",
    ping: float = 15.0,
) -> Starlette:
    """Build the JSON surface for one runtime (or one runtime per request).

    Args:
        target: a bound :class:`~foldkit_agent.runtime.AgentRuntime`, or
            ``resolve(request) -> AgentRuntime`` (sync or async) for one application
            instance per user or tenant.
        principal_of: ``(request) -> credentials`` (sync or async), read from the page's
            session or, for a service caller, from what it asserts; the value becomes
            ``Invocation.credentials``. ``None`` (or the hook returning ``None``) means no
            credentials. An exception refuses the call with 403 and dispatches nothing.
        session_of: ``(request) -> session id | None`` binding CSRF tokens to the
            application's session; default: the surface's own :data:`SESSION_COOKIE`.
        service_auth: ``(bearer token) -> service identity | None`` (sync or async) for
            server-to-server callers; ``None`` refuses every bearer token.
        csrf_secret: HMAC key for CSRF tokens (>= 16 bytes); random per surface by default.
        allowed_hosts: accepted ``Host`` names (any port); loopback by default; ``None`` or
            ``"*"`` accepts any.
        allowed_origins: extra origins (``"https://app.example"``) allowed to invoke.
        max_body: largest ``invoke`` body in bytes (default 64 KiB); larger is 413.
        transport: ``Invocation.transport`` for page callers (default ``"webmcp"``).
        service_transport: ``Invocation.transport`` for service callers
            (default ``"agent-native"``).
        ping: seconds between keep-alive comments on ``events``.

    Returns:
        A :class:`starlette.applications.Starlette` app with the routes listed in the module
        doc; mount it (``Mount("/agent", app=...)``) or serve it directly.

    Raises:
        ValueError: ``max_body`` below 2 bytes or a ``csrf_secret`` shorter than 16 bytes.

    Example:
        >>> app = agent_surface(runtime, principal_of=lambda r: sessions.get(r.cookies.get("sid")))
    """
    if max_body < 2:
        raise ValueError("max_body must be at least 2 bytes")
    config = _Config(
        target=target,
        principal_of=principal_of,
        session_of=session_of,
        service_auth=service_auth,
        csrf=CsrfTokens(csrf_secret),
        allowed_hosts=None if allowed_hosts is None else tuple(allowed_hosts),
        allowed_origins=tuple(allowed_origins),
        max_body=max_body,
        transport=transport,
        service_transport=service_transport,
        ping=ping,
    )
    surface = _Surface(config)
    return Starlette(
        routes=[
            Route("/capabilities", surface.capabilities, methods=["GET"]),
            Route("/context", surface.context, methods=["GET"]),
            Route("/session", surface.session, methods=["GET"]),
            Route("/events", surface.events, methods=["GET"]),
            Route("/invoke/{name:path}", surface.invoke, methods=["POST"]),
        ]
    )


class _Surface:
    """The route handlers of one :func:`agent_surface`."""

    def __init__(self, config: _Config) -> None:
        self.c = config

    # -- shared steps -------------------------------------------------------------------------

    async def _runtime(self, request: Request) -> AgentRuntime[Any, Any] | Response:
        """The runtime for this request, or a 503 answer when ``resolve`` failed."""
        target = self.c.target
        if isinstance(target, AgentRuntime):
            return target  # pyright: ignore[reportUnknownVariableType]
        try:
            rt = await _maybe_await(target(request))
        except Exception:
            _log.warning("resolve(request) raised", exc_info=True)
            rt = None
        if not isinstance(rt, AgentRuntime):
            return _rejected(503, "unavailable", "The application is not available right now.")
        return rt  # pyright: ignore[reportUnknownVariableType]

    async def _reader(self, request: Request) -> AgentRuntime[Any, Any] | Response:
        """Authenticate a reading route's caller and find its runtime, or the refusal."""
        kind = await self._authenticate(request)
        if isinstance(kind, Response):
            return kind
        return await self._runtime(request)

    async def _authenticate(self, request: Request) -> Response | Literal["session", "service"]:
        """Host check and bearer authentication. Returns the caller kind or a refusal."""
        if not host_allowed(request, self.c.allowed_hosts):
            return _rejected(403, "host", "This server does not answer for that host name.")
        auth = request.headers.get("authorization")
        if auth is None:
            return "session"
        scheme, _, token = auth.partition(" ")
        token = token.strip()
        identity = None
        if scheme.lower() == "bearer" and token and self.c.service_auth is not None:
            try:
                identity = await _maybe_await(self.c.service_auth(token))
            except Exception:
                _log.warning("service_auth raised; refusing the token", exc_info=True)
                identity = None
        if identity is None:
            return _rejected(401, "unauthenticated", "The service token was not accepted.")
        setattr(request.state, _SERVICE_STATE, identity)
        return "service"

    def _session_id(self, request: Request) -> str | None:
        if self.c.session_of is not None:
            try:
                sid = self.c.session_of(request)
            except Exception:
                _log.warning(
                    "session_of raised; treating the request as having no session", exc_info=True
                )
                return None
            return sid if isinstance(sid, str) and sid else None
        return request.cookies.get(SESSION_COOKIE) or None

    async def _credentials(self, request: Request) -> Any:
        if self.c.principal_of is None:
            return None
        return await _maybe_await(self.c.principal_of(request))

    # -- routes -------------------------------------------------------------------------------

    async def capabilities(self, request: Request) -> Response:
        rt = await self._reader(request)
        if isinstance(rt, Response):
            return rt
        caps = [
            {"name": c.name, "description": c.description, "inputSchema": c.input_schema}
            for c in rt.messages.available()
        ]
        return JSONResponse({"capabilities": caps}, headers={"Cache-Control": "no-store"})

    async def context(self, request: Request) -> Response:
        rt = await self._reader(request)
        if isinstance(rt, Response):
            return rt
        try:
            ctx = rt.context()
        except Exception:
            _log.warning("reading the context failed", exc_info=True)
            return _rejected(500, "context", "The context could not be read right now.")
        return JSONResponse({"context": ctx}, headers={"Cache-Control": "no-store"})

    async def session(self, request: Request) -> Response:
        kind = await self._authenticate(request)
        if isinstance(kind, Response):
            return kind
        if kind == "service":
            return _rejected(400, "service", "Service callers need no CSRF token.")
        sid = self._session_id(request)
        new_cookie: str | None = None
        if sid is None and self.c.session_of is None:
            sid = new_cookie = secrets.token_urlsafe(32)
        if sid is None:
            return _rejected(403, "no-session", "Sign in to the page first.")
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
        rt = await self._reader(request)
        if isinstance(rt, Response):
            return rt
        feed = _ChangeFeed(asyncio.get_running_loop())
        try:
            unsubscribe = rt.watch(feed.push)
        except AgentError:
            return _rejected(501, "no-events", "This application cannot report changes.")

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
        name = request.path_params["name"]
        kind = await self._authenticate(request)
        if isinstance(kind, Response):
            return kind
        if not origin_allowed(request, self.c.allowed_origins):
            return _rejected(
                403, "origin", "Calls are accepted only from this application's own pages.", name
            )
        if kind == "session":
            token = request.headers.get(CSRF_HEADER)
            if not self.c.csrf.verify(self._session_id(request), token):
                return _rejected(
                    403,
                    "csrf",
                    "The page's security token is missing or out of date; reload the page "
                    "and retry. Nothing was applied.",
                    name,
                )
        if not _is_json(request.headers.get("content-type")):
            return _rejected(
                415,
                "content-type",
                "Send the input as a JSON object (Content-Type: application/json).",
                name,
            )
        try:
            payload = await self._read_json(request)
        except _BodyError as err:
            return _rejected(err.status, err.error, err.text, name)
        try:
            credentials = await self._credentials(request)
        except Exception:
            _log.warning("principal_of raised; refusing the call", exc_info=True)
            return _rejected(
                403, "principal", "The caller could not be identified. Nothing was applied.", name
            )
        rt = await self._runtime(request)
        if isinstance(rt, Response):
            return rt
        signal = asyncio.Event()
        invocation = Invocation(
            transport=self.c.transport if kind == "session" else self.c.service_transport,
            signal=signal,
            credentials=credentials,
        )
        watcher = asyncio.ensure_future(_wait_disconnect(request, signal))
        try:
            result: Any = await rt.messages.dispatch_unknown(name, payload, invocation)
        except AgentError as err:
            result = err
        except Exception as exc:
            _log.warning("invocation of %r failed unexpectedly", name, exc_info=True)
            result = exc
        finally:
            watcher.cancel()
        outcome = summarize(result, capability=name if not isinstance(result, AgentError) else None)
        return JSONResponse(call_tool_result(outcome), headers={"Cache-Control": "no-store"})

    async def _read_json(self, request: Request) -> Any:
        limit = self.c.max_body
        too_big = _BodyError(413, "too-large", f"The input is larger than the {limit}-byte limit.")
        declared = request.headers.get("content-length")
        if declared is not None:
            try:
                if int(declared) > limit:
                    raise too_big
            except ValueError:
                raise _BodyError(
                    400, "malformed", "The request's Content-Length is not a number."
                ) from None
        chunks = bytearray()
        async for chunk in request.stream():
            chunks += chunk
            if len(chunks) > limit:
                raise too_big
        if not chunks.strip():
            return {}
        try:
            return loads_strict(bytes(chunks))
        except WireError as err:
            raise _BodyError(err.status, err.code, err.text) from None


async def _wait_disconnect(request: Request, signal: asyncio.Event) -> None:
    """Set ``signal`` when the client goes away while its invocation is still running."""
    receive = request.receive
    while True:
        message: AsgiMessage = await receive()
        if message.get("type") == "http.disconnect":
            signal.set()
            return


class _ChangeFeed:
    """Merges runtime changes for one event stream; safe to push from any thread."""

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self._loop = loop
        self._thread = threading.get_ident()
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

    async def next(self) -> Change:
        await self._ready.wait()
        self._ready.clear()
        change = Change(self._caps, self._ctx, frozenset(self._res))
        self._caps, self._ctx, self._res = False, False, set()
        return change
