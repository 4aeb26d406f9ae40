"""The person's page of ``serve --webmcp``: what a browser agent may do here, what it asks the
person, and who did what.

:func:`~foldkit_agent.adapters.web.webmcp.webmcp_app` serves it at ``/`` for any application.
It is the console's templates and script (:mod:`.console.render`, one home for both pages),
showing this page's own calls only: the requests its browser agent waits on, each with the
capability's title, its sentence (``describe=``) or labelled input, and the preview as a diff
of what the agent sees; decline with a message for the agent, approve, or approve with edited
input (answered on the surface's ``POST approvals/<id>``). Beside them: the capabilities on
offer right now (titles and descriptions), the activity with refusals folded, and the context.
Every part is rendered on the server and refreshed when the bridge's one event stream says
something changed (``foldkit-agent:event``), so a tab holds one stream.

Routes, under the surface's mount point (``/agent``), so they share its session cookie:
``GET page/parts`` (the parts as HTML, ``{"count", "approvals", "activity", "context",
"tools"}``) and ``GET page/static/<file>``. With sign-in both answer only a signed-in person
(401 otherwise), like every route of the surface.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Final

import jinja2
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, RedirectResponse, Response

from ...edge.activity import ActivityFeed
from ...edge.calls import CallsInFlight
from ...edge.resolve import RuntimeUnavailableError, resolve_runtime
from ...edge.tokens import Grant
from ...runtime.bound import AgentRuntime
from .checks import session_id
from .console.render import HEADERS, Shown, asset_response, render_parts, templates
from .console.views import approval_view
from .csrf import CSRF_HEADER, CsrfTokens
from .sessions import page_owner
from .signin import PERSON_COOKIE, SIGN_IN_PAGE, People, set_person_cookie

__all__ = ["PAGE_PARTS", "PagePanel", "PersonPage"]

PAGE_PARTS: Final = "/page"
"""Where the page's own routes live, under the surface's mount point."""

_CONSOLE = "/console"


@dataclass(frozen=True, slots=True)
class PagePanel:
    """An application's own part of the person's page, shown first: its list and controls.

    Attributes:
        html: the panel's markup, the application's own (trusted: inserted as it is).
        scripts: script URLs it loads (same origin: the page runs only its own scripts).
        styles: stylesheet URLs it loads.

    Example:
        >>> PagePanel('<ul id="todos"></ul>', scripts=("/app/page.js",))
    """

    html: str
    scripts: tuple[str, ...] = ()
    styles: tuple[str, ...] = ()


@dataclass(eq=False)
class PersonPage:
    """The page at ``/`` and its parts, for one surface (see the module doc).

    Attributes:
        target: the surface's runtime, or its ``resolve(request)``.
        title: the page's heading.
        surface: where the surface is mounted (``"/agent"``).
        bridge: the bridge script's URL.
        head_scripts: script URLs loaded before the bridge (a WebMCP polyfill).
        people: with sign-in, who is signed in; ``None``: no sign-in (loopback only).
        calls: the server's calls in flight (where this page's waiting calls are parked).
        feed: the activity shown (a runtime's, when the target is one runtime).
        session_of: the surface's ``session_of`` (the page's owner key comes from it).
        csrf: the surface's CSRF tokens (the page carries its session's token).
        panel: the application's own panel, or ``None``.
        visitor: with ``people``, who a visitor without a session is signed in as (a demo
            on loopback); ``None``: they are sent to sign in.
    """

    target: Any
    title: str
    surface: str
    bridge: str
    head_scripts: Sequence[str]
    people: People | None
    calls: CallsInFlight
    feed: ActivityFeed | None
    session_of: Any
    csrf: CsrfTokens
    panel: PagePanel | None = None
    visitor: Grant | None = None

    def __post_init__(self) -> None:
        self.env: jinja2.Environment = templates(self.surface + PAGE_PARTS)

    def _person(self, request: Request) -> str | None:
        if self.people is None:
            return None
        grant = self.people.credentials_of(request)
        return None if grant is None else grant.subject

    async def _parts(self, request: Request) -> dict[str, Any] | Response:
        try:
            rt: AgentRuntime[Any, Any] = await resolve_runtime(self.target, request)
        except RuntimeUnavailableError:
            return JSONResponse({"error": "The application is not available now."}, 503)
        owner = page_owner(request, self.session_of)
        mine = [] if owner is None else self.calls.parked.of(owner)
        shown = Shown(
            rt,
            [approval_view(p, True) for p in mine],
            self.feed,
            tools=rt.messages.available(),
            recorded=rt.audit is not None,
        )
        return render_parts(self.env, shown)

    async def home(self, request: Request) -> Response:
        """``GET /``: the page (a person who has not signed in is sent to sign in, or signed
        in as the ``visitor``)."""
        opened = None
        if self.people is not None and self.people.session_of(request) is None:
            if self.visitor is None:
                return RedirectResponse(SIGN_IN_PAGE, status_code=303)
            opened = self.people.open(self.visitor)
            request.cookies[PERSON_COOKIE] = opened  # this very page is the visitor's
        parts = await self._parts(request)
        if isinstance(parts, Response):
            return parts
        sid = session_id(request, self.session_of)
        html = self.env.get_template("page.html").render(
            title=self.title,
            person=self._person(request),
            csrf_token=None if sid is None else self.csrf.token_for(sid),
            csrf_header=CSRF_HEADER,
            panel=self.panel,
            console=_CONSOLE if self.people is not None and self.visitor is None else None,
            answers=self.surface,
            bridge=self.bridge,
            head_scripts=list(self.head_scripts),
            sign_in=SIGN_IN_PAGE,
            parts=parts,
        )
        response = HTMLResponse(html, headers=HEADERS)
        if opened is not None:
            set_person_cookie(response, request, opened)
        return response

    async def parts(self, request: Request) -> Response:
        """``GET page/parts``: the live parts as HTML."""
        parts = await self._parts(request)
        if isinstance(parts, Response):
            return parts
        return JSONResponse(parts, headers=HEADERS)

    async def asset(self, request: Request) -> Response:
        """``GET page/static/<file>``: the stylesheet and the script."""
        return asset_response(request.path_params["name"])
