"""The todo web application: one Model, a person's page and a browser agent's tools.

What is the todo app's own is here; the rest is the library's person's page
(:func:`foldkit_agent.adapters.web.webmcp.webmcp_app`: the requests the browser agent waits on
with their diff, what it may do, the activity with refusals folded, the context).

* ``GET /`` — the library's page with this app's panel (``panel.html``, ``page.js``,
  ``page.css``): the list, rendered live from ``GET /app/events``, and the person's controls.
  Opening it signs the visitor in as the demo user (a demo on loopback).
* ``POST /app/dispatch`` — what the panel's buttons send: ``{"_tag": "SelectedTodo", "id": ...}``,
  the same Messages a person's clicks produce, handed to ``running.dispatch``. This is the
  application's own endpoint, not the agent surface; it passes the same edge guard
  (:class:`foldkit_agent.edge.EdgeGuard`: Host, Origin, the session and CSRF token, JSON of at
  most 4 KiB parsed strictly) before the handler runs; the person's actions join the activity.
* ``GET /app/activity`` — who did what, live (server-sent ``activity`` events), for a page of
  your own (:func:`foldkit_agent.adapters.web.activity_endpoint`). Same origin and a session.
* ``/agent/...`` — the bridge and the JSON surface, with the principal taken from the session.

Ways to run it:

* ``async with todo_web() as web:`` runs the Program and yields :class:`TodoWeb` whose
  ``.app`` is a plain ASGI app (no lifespan needed) — mount it or serve it with uvicorn;
* ``build_app(running, runtime)`` builds that app over a todo application you already run
  (``examples.todo.run_todo()``), so MCP, A2A and the page share one Model;
* ``create_app()`` returns a self-contained Starlette app whose lifespan starts everything
  (``uvicorn examples.todo_web:create_app --factory``).
"""

from __future__ import annotations

import asyncio
import json
import secrets
from collections.abc import AsyncGenerator, AsyncIterator, Awaitable, Callable, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

from pydantic import ValidationError
from sse_starlette import EventSourceResponse, ServerSentEvent
from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import BaseRoute, Mount, Route
from starlette.types import Receive, Scope, Send

from examples.todo import Model, User, principal, run_todo
from examples.todo.app import (
    ClearedSelection,
    RequestedCreateTodo,
    RequestedDeleteTodo,
    SelectedTodo,
    TodoMessage,
    ToggledTodo,
)
from foldkit_agent import AgentRuntime, AuditLog, Invocation, Running, agent
from foldkit_agent.adapters.web import activity_endpoint
from foldkit_agent.adapters.web.page import PagePanel
from foldkit_agent.adapters.web.signin import People
from foldkit_agent.adapters.web.surface import DEFAULT_ALLOWED_HOSTS, CsrfTokens
from foldkit_agent.adapters.web.webmcp import webmcp_app
from foldkit_agent.edge import (
    BODY_KEY,
    ActivityFeed,
    EdgeGuard,
    Grant,
    HostPolicy,
    HttpOptions,
    Rules,
    TokenTable,
    WireError,
    route_path,
)

__all__ = ["DEMO_USER", "TodoWeb", "build_app", "create_app", "todo_web"]

PAGE_TRANSPORT = "page"
"""How the activity feed names the person's own page."""
DEMO = Grant("demo", ("todos:delete",))
"""Everyone who opens the page is signed in as this person (it is a demo)."""
DEMO_USER = User(id="demo", can_delete=True)
"""The user the demo person is to the todo app (:func:`examples.todo.principal`)."""

PERSON_MESSAGES = (
    RequestedCreateTodo,
    ToggledTodo,
    SelectedTodo,
    ClearedSelection,
    RequestedDeleteTodo,
)
"""The Messages the page's controls send."""

_HERE = Path(__file__).parent
_ASSETS = {
    "/page.css": ((_HERE / "page.css").read_bytes(), "text/css"),
    "/page.js": ((_HERE / "page.js").read_bytes(), "text/javascript"),
}
PANEL = PagePanel(
    (_HERE / "panel.html").read_text(encoding="utf-8"),
    scripts=("/app/page.js",),
    styles=("/app/page.css",),
)
"""The todo app's own part of the page: the list and the person's controls."""


@dataclass
class TodoWeb:
    """A running todo web application.

    Attributes:
        app: the ASGI app (page, ``/app/...`` and ``/agent/...``).
        running: the running Program (``running.dispatch``, ``running.model()``).
        runtime: the bound agent runtime.
        people: who is signed in (each visitor as :data:`DEMO`).
        activity: what the page's activity panel shows.
    """

    app: Starlette
    running: Running[Model, Any]
    runtime: AgentRuntime[Model, Any]
    people: People
    activity: ActivityFeed


def _view(model: Model, user: User | None) -> dict[str, Any]:
    return {
        "todos": [t.model_dump() for t in model.todos],
        "selected": model.selected_todo_id,
        "user": None if user is None else {"id": user.id, "canDelete": user.can_delete},
    }


def _asset(body: bytes, media: str) -> Callable[[Request], Awaitable[Response]]:
    headers = {"X-Content-Type-Options": "nosniff", "Cache-Control": "no-cache"}

    async def serve(_request: Request) -> Response:
        return Response(body, media_type=media, headers=headers)

    return serve


def _error(status: int, text: str) -> JSONResponse:
    return JSONResponse({"error": text}, status_code=status)


def _refused(_scope: Scope, _rules: Rules, err: WireError) -> Response:
    return _error(err.status, err.text)


_DISPATCH = Rules(origin="page")  # the page's own origin only; a JSON body
_ACTIVITY = Rules(origin="page", body=False)  # the page's own origin, a session; GET only
_OTHER = Rules(origin="none", body=False, public=True)  # the assets


def _rules(scope: Scope) -> Rules:
    path = route_path(scope)
    if path == "/dispatch":
        return _DISPATCH
    return _OTHER if path in _ASSETS else _ACTIVITY


def build_app(
    running: Running[Model, Any],
    runtime: AgentRuntime[Model, Any],
    *,
    head_scripts: Sequence[str] = (),
    extra_routes: Sequence[BaseRoute] = (),
    allowed_hosts: Sequence[str] | None = DEFAULT_ALLOWED_HOSTS,
    csrf_secret: bytes | None = None,
    people: People | None = None,
    activity: ActivityFeed | None = None,
) -> Starlette:
    """The page, the application endpoints and the agent surface over one running app.

    Args:
        running: the running todo Program.
        runtime: its bound agent runtime (``examples.todo.run_todo`` makes both).
        head_scripts: script URLs the page loads before the bridge (a WebMCP polyfill).
        extra_routes: more routes (a test serving the polyfill file, say).
        allowed_hosts: accepted Host names; loopback by default.
        csrf_secret: shared by the page and the agent surface; random by default.
        people: who is signed in (a fresh one by default; each visitor is :data:`DEMO`).
        activity: the feed the activity panel shows; by default one following
            ``runtime.audit`` (the person's actions are added to it either way).
    """

    secret = csrf_secret or secrets.token_bytes(32)
    csrf = CsrfTokens(secret)
    who = people if people is not None else People(TokenTable({}))
    feed = activity if activity is not None else ActivityFeed(runtime.audit)
    names = {c.tag: c.name for c in runtime.messages.all()}

    def user_of(request: Request) -> User | None:
        grant = who.credentials_of(request)
        return None if grant is None else principal(Invocation(credentials=grant))

    async def signed_in(scope: Scope, rules: Rules) -> WireError | None:
        """Step 3 of the guard: a session, and for ``/app/dispatch`` its CSRF token."""
        request = Request(scope)
        if rules is _OTHER:
            return None
        if user_of(request) is None:
            return WireError(401, "session", "sign in first")
        if rules is _ACTIVITY:
            return None  # a read that changes nothing: the session is enough
        if not csrf.verify(who.session_of(request), request.headers.get("x-csrf-token")):
            return WireError(403, "csrf", "reload the page: the security token is out of date")
        return None

    async def state(request: Request) -> Response:
        return JSONResponse(_view(running.model(), user_of(request)))

    async def events(request: Request) -> Response:
        user = user_of(request)
        changed = asyncio.Event()
        unsubscribe = running.subscribe(lambda _model: changed.set())

        async def stream() -> AsyncIterator[ServerSentEvent]:
            try:
                while True:
                    changed.clear()
                    yield ServerSentEvent(json.dumps(_view(running.model(), user)), event="state")
                    await changed.wait()
            finally:
                unsubscribe()

        return EventSourceResponse(stream(), ping=15)

    async def dispatch(request: Request) -> Response:
        user = user_of(request)
        assert user is not None  # the guard's step 3 let only a signed-in page through
        data = request.scope[BODY_KEY]  # strict JSON of at most 4 KiB, parsed by the guard
        try:
            message = (
                TodoMessage.decode(cast(dict[str, Any], data)) if isinstance(data, dict) else None
            )
        except (ValueError, ValidationError):
            message = None
        if not isinstance(message, PERSON_MESSAGES):
            return _error(400, "not a Message this page sends")
        did = names.get(message.tag(), message.tag())
        if isinstance(message, RequestedDeleteTodo) and not user.can_delete:
            feed.add_person(
                transport=PAGE_TRANSPORT,
                principal=user.id,
                capability=did,
                decision="refused",
                outcome="AgentAuthorizationError",
            )
            return _error(403, f"{user.id} may not delete todos")
        running.dispatch(message)
        feed.add_person(transport=PAGE_TRANSPORT, principal=user.id, capability=did)
        return Response(status_code=204)

    app_routes = Starlette(
        routes=[
            *(Route(path, _asset(*asset), methods=["GET"]) for path, asset in _ASSETS.items()),
            Route("/state", state, methods=["GET"]),
            Route("/events", events, methods=["GET"]),
            Route("/dispatch", dispatch, methods=["POST"]),
            Route("/activity", activity_endpoint(feed, session_of=who.session_of), methods=["GET"]),
        ],
        middleware=[
            Middleware(
                EdgeGuard,
                hosts=HostPolicy(allowed_hosts),
                classify=_rules,
                authenticate=signed_in,
                render=_refused,
                max_body=4096,
            )
        ],
    )
    return webmcp_app(
        runtime,
        title="Todos",
        head_scripts=tuple(head_scripts),
        options=HttpOptions(allowed_hosts=allowed_hosts),
        people=who,
        visitor=DEMO,
        panel=PANEL,
        routes=[*extra_routes, Mount("/app", app=app_routes)],
        csrf_secret=secret,
        activity=feed,
    )


@asynccontextmanager
async def todo_web(
    *,
    audit: AuditLog | None = None,
    head_scripts: Sequence[str] = (),
    extra_routes: Sequence[BaseRoute] = (),
    allowed_hosts: Sequence[str] | None = DEFAULT_ALLOWED_HOSTS,
) -> AsyncGenerator[TodoWeb]:
    """Run the todo application and yield its web app (see the module doc).

    Example:
        >>> async with todo_web() as web:
        ...     await uvicorn.Server(uvicorn.Config(web.app, port=8765)).serve()
    """
    log = audit if audit is not None else agent.audit_log(capacity=1000, principal=lambda u: u.id)
    async with run_todo(audit=log) as (running, runtime):
        people = People(TokenTable({}))
        feed = ActivityFeed(runtime.audit)
        try:
            app = build_app(
                running,
                runtime,
                head_scripts=head_scripts,
                extra_routes=extra_routes,
                allowed_hosts=allowed_hosts,
                people=people,
                activity=feed,
            )
            yield TodoWeb(app, running, runtime, people, feed)
        finally:
            feed.close()


class _Deferred:
    """An ASGI app that forwards to the one the lifespan started."""

    def __init__(self) -> None:
        self.inner: Starlette | None = None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if self.inner is None:
            response = Response("starting", status_code=503)
            await response(scope, receive, send)
            return
        await self.inner(scope, receive, send)


def create_app(**options: Any) -> Starlette:
    """A self-contained app whose lifespan runs :func:`todo_web` (options as for it).

    ``uvicorn examples.todo_web:create_app --factory`` serves it.
    """
    deferred = _Deferred()

    @asynccontextmanager
    async def lifespan(_app: Starlette) -> AsyncGenerator[None]:
        async with todo_web(**options) as web:
            deferred.inner = web.app
            try:
                yield
            finally:
                deferred.inner = None

    return Starlette(routes=[Mount("/", app=deferred)], lifespan=lifespan)
