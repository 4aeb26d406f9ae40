"""The console's routes: the page, its parts, its live events, the answers, sign-in.

Every route passes the edge guard first (Host; for a ``POST`` the page's own Origin, a JSON
body parsed strictly, and, but for sign-in, the session's CSRF token). Pages are rendered by
Jinja2 with autoescaping, under a ``Content-Security-Policy`` that runs only the console's own
script and refuses framing (no approve button can be clicked through another site's page).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any, Final, cast

import anyio
import jinja2
from sse_starlette import ServerSentEvent
from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, RedirectResponse, Response
from starlette.routing import Route
from starlette.types import Scope

from ....edge.activity import ActivityFeed
from ....edge.approvals import ParkedApproval
from ....edge.calls import CallsInFlight
from ....edge.guard import BODY_KEY, EdgeGuard, Rules, route_path
from ....edge.hosts import HostPolicy
from ....edge.options import DEFAULT_HTTP_OPTIONS, HttpOptions
from ....edge.tokens import Grant, TokenTable
from ....edge.wire import WireError
from ....errors import AgentError
from ....runtime.bound import AgentRuntime
from ..activity import ReleasingStream
from ..csrf import CSRF_HEADER, CsrfTokens
from ..decision import answered, approval_from
from ..feed import unless_shutdown
from ..signin import LOCAL_PERSON, PERSON_COOKIE, ApproverPolicy, People, set_person_cookie
from .render import HEADERS, Shown, asset_response, render_parts, templates
from .views import approval_view

__all__ = ["CONSOLE_PATH", "CONSOLE_STREAMS", "CONSOLE_STREAMS_PER_PERSON", "console_app"]

_log = logging.getLogger("foldkit_agent.adapters.web.console")

CONSOLE_PATH: Final = "/console"
"""Where the console is served."""

CONSOLE_STREAMS: Final = 32
"""Open ``events`` streams of the console, all sessions together (each holds a connection)."""

CONSOLE_STREAMS_PER_PERSON: Final = 4
"""Open ``events`` streams one signed-in person may hold, however many sessions they open (a
few tabs; per session on a loopback console without sign-in, whose one person is local)."""

_HEADERS = HEADERS
_POST = Rules(origin="page")
_SIGN_IN = Rules(origin="page", public=True)
_READ = Rules(origin="none", body=False)
_CALLBACK = f"{CONSOLE_PATH}/sign-in/callback"  # where the issuer sends a person back


@dataclass(eq=False)
class Console:
    """One console over one runtime (see :func:`console_app`)."""

    rt: AgentRuntime[Any, Any]
    calls: CallsInFlight
    people: People
    signs_in: bool
    policy: ApproverPolicy
    title: str
    feed: ActivityFeed
    csrf: CsrfTokens
    env: jinja2.Environment

    def __post_init__(self) -> None:
        self._changed = asyncio.Event()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._streams: dict[str, int] = {}
        self.calls.parked.watch(self._on_parked)

    # -- what changes ---------------------------------------------------------------------------

    def _on_parked(self, _parked: ParkedApproval, _waiting: bool) -> None:
        self._wake()

    def _wake(self) -> None:
        changed, self._changed = self._changed, asyncio.Event()
        changed.set()

    # -- who asks -------------------------------------------------------------------------------

    def person(self, request: Request) -> tuple[str, Grant] | None:
        sid = request.cookies.get(PERSON_COOKIE)
        grant = self.people.person(sid)
        return None if sid is None or grant is None else (sid, grant)

    async def authenticate(self, scope: Scope, rules: Rules) -> WireError | None:
        """Step 3 for a ``POST``: a signed-in session and its CSRF token."""
        if rules.origin != "page":
            return None  # a read: each handler checks the session itself
        request = Request(scope)
        who = self.person(request)
        if who is None:
            return WireError(401, "sign-in", "Sign in to the console first.")
        if not self.csrf.verify(who[0], request.headers.get(CSRF_HEADER)):
            return WireError(403, "csrf", "The console's security token is out of date; reload.")
        return None

    # -- views ----------------------------------------------------------------------------------

    def _parts(self, person: Grant) -> dict[str, Any]:
        approvals = [
            approval_view(p, self.policy.may_answer(person, p.caller))
            for p in self.calls.parked.all()
        ]
        shown = Shown(self.rt, approvals, self.feed, recorded=self.rt.audit is not None)
        return render_parts(self.env, shown)

    async def page(self, request: Request) -> Response:
        who = self.person(request)
        new_sid = None
        if who is None:
            if self.signs_in:
                return RedirectResponse(f"{CONSOLE_PATH}/sign-in", status_code=303)
            new_sid = self.people.open(LOCAL_PERSON)
            who = (new_sid, LOCAL_PERSON)
        sid, person = who
        parts = self._parts(person)
        html = self.env.get_template("console.html").render(
            title=self.title,
            person=person.subject,
            signs_in=self.signs_in,
            csrf_token=self.csrf.token_for(sid),
            csrf_header=CSRF_HEADER,
            parts=parts,
        )
        response = HTMLResponse(html, headers=_HEADERS)
        if new_sid is not None:
            set_person_cookie(response, request, new_sid)
        return response

    async def parts(self, request: Request) -> Response:
        who = self.person(request)
        if who is None:
            return JSONResponse({"error": "Sign in to the console first."}, 401, _HEADERS)
        return JSONResponse(self._parts(who[1]), headers=_HEADERS)

    async def events(self, request: Request) -> Response:
        """``changed`` whenever a call is parked or leaves, the activity grows or the Model
        changes: the page then reads ``parts`` again."""
        who = self.person(request)
        if who is None:
            return JSONResponse({"error": "Sign in to the console first."}, 401, _HEADERS)
        sid = who[1].subject if self.signs_in else who[0]  # what holds the streams
        if (
            sum(self._streams.values()) >= CONSOLE_STREAMS
            or self._streams.get(sid, 0) >= CONSOLE_STREAMS_PER_PERSON
        ):
            text = "Too many open console pages; close one and reload."
            return JSONResponse({"error": text}, 429, _HEADERS)
        self._streams[sid] = self._streams.get(sid, 0) + 1
        self._loop = asyncio.get_running_loop()
        shutdown = anyio.Event()
        try:
            unwatch = self.rt.watch(lambda _change: self._wake_threadsafe())
        except AgentError:
            unwatch = None

        async def changed() -> bool:
            seen = self.feed.last_seq
            waits: list[asyncio.Future[Any]] = [
                asyncio.ensure_future(self._changed.wait()),
                asyncio.ensure_future(self.feed.wait(seen)),
            ]
            try:
                await asyncio.wait(waits, return_when=asyncio.FIRST_COMPLETED)
            finally:
                for w in waits:
                    w.cancel()
            return True

        async def stream() -> AsyncIterator[ServerSentEvent]:
            try:
                yield ServerSentEvent("{}", event="ready")
                while True:
                    if await unless_shutdown(changed, shutdown) is None:
                        return
                    yield ServerSentEvent("{}", event="changed")
            finally:
                if unwatch is not None:
                    unwatch()

        def release() -> None:
            left = self._streams.pop(sid, 1) - 1
            if left > 0:
                self._streams[sid] = left

        return ReleasingStream(
            stream(),
            release,
            ping=15,
            headers={"Cache-Control": "no-store"},
            shutdown_event=shutdown,
            shutdown_grace_period=1.0,
        )

    def _wake_threadsafe(self) -> None:
        """A Model change, pushed from any thread."""
        if self._loop is not None:
            self._loop.call_soon_threadsafe(self._wake)

    async def answer(self, request: Request) -> Response:
        """``POST approvals/<key>``: ``{"approve": bool, "message"?: str, "input"?: {...}}``.

        Answers once the call took its next step: ``{"ok": true, "approved": bool, "outcome",
        "reason"?, "text"}``, where ``approved`` says whether the Message was sent (``false``
        for a call refused as stale however the person answered), or ``{"ok": true,
        "approved": false, "outcome": "asked again"}`` when the call asks once more (the Model
        changed, or the input was edited): it is back in the list. The agent's transport is
        told the same on its next request.
        """
        who = self.person(request)
        assert who is not None  # the guard's step 3 let only a signed-in session through
        person = who[1]
        body: Any = request.scope.get(BODY_KEY)
        fields = cast(dict[str, Any], body) if isinstance(body, dict) else {}
        approval = approval_from(fields, person.subject)
        if isinstance(approval, str):
            return JSONResponse({"error": approval}, 400, _HEADERS)
        parked = self.calls.parked.get(request.path_params["key"])
        if parked is None:
            text = "No call waits for that answer any more (answered, timed out or cancelled)."
            return JSONResponse({"error": text}, 404, _HEADERS)
        if not self.policy.may_answer(person, parked.caller):
            text = f"{person.subject} may answer only their own agents' requests."
            return JSONResponse({"error": text}, 403, _HEADERS)
        if self.calls.answer(parked.key, parked.owner, None, approval) is None:
            return JSONResponse({"error": "That call was answered already."}, 409, _HEADERS)
        # shielded: a person leaving the page never aborts the agent's call
        got = await asyncio.shield(parked.task if parked.next is None else parked.next)
        return JSONResponse(answered(got), headers=_HEADERS)

    async def sign_in_page(self, request: Request) -> Response:
        if not self.signs_in:
            return RedirectResponse(CONSOLE_PATH, status_code=303)
        html = self.env.get_template("sign_in.html").render(
            title=self.title,
            tokens=self.people.takes_tokens,
            issuer=None if self.people.issuer is None else CONSOLE_PATH + "/sign-in/issuer",
        )
        return HTMLResponse(html, headers=_HEADERS)

    async def sign_in(self, request: Request) -> Response:
        """``POST sign-in``: ``{"token": "..."}`` once; a session cookie from then on."""
        body: Any = request.scope.get(BODY_KEY)
        token = cast(dict[str, Any], body).get("token") if isinstance(body, dict) else None
        sid = self.people.sign_in(token) if self.signs_in and isinstance(token, str) else None
        if sid is None:
            return JSONResponse({"error": "That token is not accepted."}, 401, _HEADERS)
        response = JSONResponse({"ok": True, "next": CONSOLE_PATH}, headers=_HEADERS)
        set_person_cookie(response, request, sid)
        return response

    async def sign_in_at_issuer(self, request: Request) -> Response:
        """``GET sign-in/issuer``: to the issuer's authorization endpoint (code with PKCE)."""
        issuer = self.people.issuer
        back = str(request.base_url).rstrip("/") + _CALLBACK
        url = None if issuer is None else await issuer.start(back)
        if url is None:
            return JSONResponse({"error": "Signing in at the issuer is not possible now."}, 503)
        return RedirectResponse(url, status_code=303)

    async def callback(self, request: Request) -> Response:
        """``GET sign-in/callback``: the issuer's code exchanged, its token verified, and the
        person's session opened, as a token's sign-in opens it."""
        issuer, query = self.people.issuer, request.query_params
        grant = (
            None if issuer is None else await issuer.finish(query.get("state"), query.get("code"))
        )
        if grant is None:
            return JSONResponse({"error": "That sign-in was not accepted."}, 401, _HEADERS)
        # A page of our own moves on to the console: the navigation from the issuer is
        # cross-site, so a redirect would not yet carry the SameSite=Strict cookie.
        html = self.env.get_template("signed_in.html").render(title=self.title, next=CONSOLE_PATH)
        response = HTMLResponse(html, headers=_HEADERS)
        set_person_cookie(response, request, self.people.open(grant))
        return response

    async def sign_out(self, request: Request) -> Response:
        self.people.sign_out(request.cookies.get(PERSON_COOKIE))
        response = JSONResponse({"ok": True, "next": f"{CONSOLE_PATH}/sign-in"}, headers=_HEADERS)
        response.delete_cookie(PERSON_COOKIE, path="/")
        return response

    async def asset(self, request: Request) -> Response:
        return asset_response(request.path_params["name"])


def _render(_scope: Scope, _rules: Rules, err: WireError) -> Response:
    return JSONResponse({"error": err.text}, err.status, {**_HEADERS, **(err.headers or {})})


async def _to_console(_request: Request) -> Response:
    return RedirectResponse(CONSOLE_PATH, status_code=303)


def _classify(scope: Scope) -> Rules:
    path = route_path(scope)
    if scope.get("method") != "POST":
        return _READ
    return _SIGN_IN if path == f"{CONSOLE_PATH}/sign-in" else _POST


def console_app(
    rt: AgentRuntime[Any, Any],
    *,
    calls: CallsInFlight,
    people: People | None = None,
    policy: ApproverPolicy | None = None,
    title: str = "foldkit-agent",
    options: HttpOptions = DEFAULT_HTTP_OPTIONS,
    csrf_secret: bytes | None = None,
    home: bool = False,
) -> Starlette:
    """The console for ``rt`` at ``/console``: the calls waiting for a person (every
    transport's, from ``calls``), the activity and the current context, live.

    Args:
        rt: the bound runtime whose activity and context are shown.
        calls: the server's calls in flight (share the one every adapter uses): the console
            lists its parked calls and answers them.
        people: the people who sign in with a token (:mod:`..signin`), shared with the page
            surface; ``None``: no sign-in, whoever reaches the server is the one local person
            (serve it on loopback only).
        policy: which requests a person may answer (default: their own agents', everyone's
            for a token with the ``approver`` scope).
        title: shown in the header.
        options: the server's shared HTTP options (its ``allowed_hosts`` are read).
        csrf_secret: at least 16 bytes; random by default.
        home: also answer ``GET /`` with a redirect to the console (when nothing else
            serves ``/``).

    Returns:
        A Starlette app with the routes ``GET /console``, ``GET /console/parts``,
        ``GET /console/events``, ``POST /console/approvals/<key>``, ``GET|POST
        /console/sign-in``, ``POST /console/sign-out``, ``GET /console/static/<file>`` and,
        when ``people`` sign in through the issuer, ``GET /console/sign-in/issuer`` and its
        ``GET /console/sign-in/callback``.

    Example:
        >>> people = People(TokenTable({"alice-token-0123456789": Grant("alice")}))
        >>> app = console_app(rt, calls=CallsInFlight(), people=people)
    """
    signs_in = people is not None
    if people is None:
        people = People(TokenTable({}))
    feed = ActivityFeed(rt.audit)
    console = Console(
        rt,
        calls,
        people,
        signs_in,
        policy or ApproverPolicy(),
        title,
        feed,
        CsrfTokens(csrf_secret),
        templates(CONSOLE_PATH),
    )

    guard = Middleware(
        EdgeGuard,
        hosts=HostPolicy(options.allowed_hosts),
        classify=_classify,
        max_body=16 * 1024,
        render=_render,
        authenticate=console.authenticate,
    )
    base = CONSOLE_PATH
    home_route = [Route("/", _to_console, methods=["GET"])] if home else []
    app = Starlette(
        routes=[
            *home_route,
            Route(base, console.page, methods=["GET"]),
            Route(f"{base}/parts", console.parts, methods=["GET"]),
            Route(f"{base}/events", console.events, methods=["GET"]),
            Route(f"{base}/approvals/{{key}}", console.answer, methods=["POST"]),
            Route(f"{base}/sign-in", console.sign_in_page, methods=["GET"]),
            Route(f"{base}/sign-in", console.sign_in, methods=["POST"]),
            Route(f"{base}/sign-out", console.sign_out, methods=["POST"]),
            Route(f"{base}/sign-in/issuer", console.sign_in_at_issuer, methods=["GET"]),
            Route(_CALLBACK, console.callback, methods=["GET"]),
            Route(f"{base}/static/{{name}}", console.asset, methods=["GET"]),
        ],
        middleware=[guard],
    )
    app.state.console = console
    return app
