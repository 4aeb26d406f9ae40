"""WebMCP: offer the capabilities as tools of a web page, with the server as the authority.

The page loads a small bridge script (``/agent/webmcp.js``, shipped with this package). The
bridge lists the available capabilities from the JSON surface of :mod:`.surface`,
registers each with ``document.modelContext.registerTool(tool, {signal})`` (falling back to
``navigator.modelContext``), aborts and re-registers when the server's event stream reports
a change, and forwards every ``execute`` to ``POST /agent/invoke/<name>``. Validation,
availability, authorization and audit all happen on the server; the bridge decides nothing.

Browsers: Chromium with ``--enable-features=WebMCP`` has ``document.modelContext``; other
browsers need a polyfill such as ``@mcp-b/global`` loaded before the bridge. The WebMCP draft
(W3C Web Machine Learning CG, ``webmachinelearning/webmcp``) scopes tools to a secure context
(``https://`` or loopback ``http://``).

Typical use, in an application that already has a Starlette app and a session::

    from foldkit_agent.adapters.web import webmcp

    app = Starlette(routes=[
        Route("/", homepage),                      # its HTML includes webmcp.script_tag()
        webmcp.mount(runtime, credentials_of=user_from_session, session_of=session_id),
    ])

or, for a runtime without a page of its own, :func:`webmcp_app` serves the person's page too
(:mod:`~foldkit_agent.adapters.web.page`).
"""

from __future__ import annotations

import html
import secrets
from collections.abc import Sequence
from functools import cache
from importlib import resources
from typing import Any

from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import BaseRoute, Mount, Route, request_response

from ...edge.activity import ActivityFeed
from ...edge.calls import CallsInFlight
from ...edge.guard import EdgeGuard, Rules
from ...edge.hosts import HostPolicy
from ...edge.options import DEFAULT_HTTP_OPTIONS, HttpOptions
from ...edge.resolve import static_runtime
from ...edge.tokens import Grant
from .checks import SurfaceAuth, render
from .csrf import CsrfTokens
from .page import PAGE_PARTS, PagePanel, PersonPage
from .signin import People
from .surface import DEFAULT_MAX_BODY, SurfaceTarget, agent_surface

__all__ = ["BRIDGE_FILE", "bridge_script", "mount", "script_tag", "webmcp_app", "webmcp_surface"]

BRIDGE_FILE = "webmcp.js"
"""The bridge's file name under the surface's mount point (``/agent/webmcp.js``)."""


@cache
def bridge_script() -> str:
    """The bridge's JavaScript source (package data ``adapters/static/webmcp.js``)."""
    return (
        resources.files(__package__ or "foldkit_agent.adapters")
        .joinpath("static", BRIDGE_FILE)
        .read_text(encoding="utf-8")
    )


async def _serve_bridge(_request: Request) -> Response:
    return Response(
        bridge_script(),
        media_type="text/javascript; charset=utf-8",
        headers={"Cache-Control": "no-cache", "X-Content-Type-Options": "nosniff"},
    )


def webmcp_surface(target: SurfaceTarget, **surface: Any) -> Starlette:
    """The JSON surface plus the bridge script, as one app to mount (at ``/agent``).

    Args:
        target: a bound runtime or ``resolve(request) -> AgentRuntime``.
        **surface: keyword arguments of :func:`foldkit_agent.adapters.web.surface.agent_surface`
            (``credentials_of``, ``session_of``, ``service_auth``, ``options``, ...);
            ``transport`` defaults to ``"webmcp"``.

    Returns:
        A Starlette app with ``GET webmcp.js`` and every route of the JSON surface.
    """
    api = agent_surface(target, **surface)
    return Starlette(
        routes=[Route(f"/{BRIDGE_FILE}", _serve_bridge, methods=["GET"]), Mount("", app=api)]
    )


def mount(target: SurfaceTarget, *, path: str = "/agent", **surface: Any) -> Mount:
    """A Starlette ``Mount`` serving the bridge and the JSON surface under ``path``.

    Example:
        >>> app = Starlette(routes=[Route("/", page), webmcp.mount(runtime, credentials_of=who)])
    """
    return Mount(path.rstrip("/") or "/", app=webmcp_surface(target, **surface))


def script_tag(path: str = "/agent") -> str:
    """The ``<script>`` element a page includes to load the bridge from ``path``.

    Load a polyfill (if any) before it. Example: ``script_tag()`` →
    ``<script src="/agent/webmcp.js" defer></script>``.
    """
    src = html.escape(f"{path.rstrip('/')}/{BRIDGE_FILE}", quote=True)
    return f'<script src="{src}" defer></script>'


def webmcp_app(
    target: SurfaceTarget,
    *,
    title: str = "foldkit-agent",
    path: str = "/agent",
    head_scripts: tuple[str, ...] = (),
    options: HttpOptions = DEFAULT_HTTP_OPTIONS,
    people: People | None = None,
    panel: PagePanel | None = None,
    routes: Sequence[BaseRoute] = (),
    visitor: Grant | None = None,
    **surface: Any,
) -> Starlette:
    """A complete app: the person's page at ``/`` (:mod:`~foldkit_agent.adapters.web.page`:
    what the page's browser agent asks them, with its preview as a diff, the capabilities on
    offer, the activity and the context), which loads the bridge, plus the surface under
    ``path``. What ``foldkit-agent serve ... --webmcp`` serves.

    Args:
        target: a bound runtime or ``resolve(request) -> AgentRuntime``.
        title: the page's heading.
        path: where the surface is mounted.
        head_scripts: script URLs loaded before the bridge (a WebMCP polyfill, say).
        options: what every HTTP adapter of the server shares
            (:class:`~foldkit_agent.edge.HttpOptions`): the page at ``/`` holds to its
            ``allowed_hosts``, the surface reads it as
            :func:`~foldkit_agent.adapters.web.surface.agent_surface` does.
        people: with sign-in (:class:`~foldkit_agent.adapters.web.signin.People`), the page
            and every route of the surface, reads included, answer only a signed-in person
            (``GET /`` redirects to the console's sign-in, the rest is 401) and the surface
            takes its session and credentials from them, so a browser agent's calls carry
            the person; ``None``: no sign-in (serve it on loopback only).
        panel: the application's own part of the page, shown first (its list and controls,
            :class:`~foldkit_agent.adapters.web.page.PagePanel`).
        routes: the application's own routes (what its panel calls), served before the page.
        visitor: with ``people``, who a visitor without a session is signed in as instead of
            being sent to sign in (a demo served on loopback).
        **surface: the other keywords of :func:`webmcp_surface` (``calls``, ``activity``,
            ``csrf_secret``, say).

    Returns:
        A Starlette app: ``GET /``, the page's parts under ``<path>/page/`` and the surface's
        routes under ``path``.

    Raises:
        ValueError: as :func:`~foldkit_agent.adapters.web.surface.agent_surface`.

    Example:
        >>> shared = HttpOptions(caps=CallerLimits(page_streams=8))
        >>> app = webmcp_app(rt, title="Todos", options=shared)
    """
    base = path.rstrip("/")
    if people is not None:
        surface.setdefault("session_of", people.session_of)
        surface.setdefault("credentials_of", people.credentials_of)
        surface.setdefault("signed_in", True)
    calls: CallsInFlight = surface.setdefault("calls", CallsInFlight(options.caps))
    if surface.get("activity") is None:
        rt = static_runtime(target)
        surface["activity"] = None if rt is None else ActivityFeed(rt.audit)
    secret = surface.get("csrf_secret") or secrets.token_bytes(32)
    surface["csrf_secret"] = secret
    page = PersonPage(
        target,
        title,
        base,
        f"{base}/{BRIDGE_FILE}",
        head_scripts,
        people,
        calls,
        surface["activity"],
        surface.get("session_of"),
        CsrfTokens(secret),
        panel,
        visitor,
    )
    hosts = HostPolicy(options.allowed_hosts)
    # The page passes the same edge guard as the surface: the one Host policy (a GET page
    # takes no credentials and no body), and its parts the surface's sign-in.
    home = EdgeGuard(
        request_response(page.home),
        hosts=hosts,
        classify=Rules(origin="none", body=False),
        max_body=DEFAULT_MAX_BODY,
    )
    auth = SurfaceAuth(
        service_auth=None,
        csrf=CsrfTokens(),
        session_of=surface.get("session_of"),
        signed_in=people is not None,
    )
    parts = Starlette(
        routes=[
            Route("/parts", page.parts, methods=["GET"]),
            Route("/static/{name}", page.asset, methods=["GET"]),
        ],
        middleware=[
            Middleware(
                EdgeGuard,
                hosts=hosts,
                classify=lambda _scope: Rules(origin="none", body=False),
                max_body=DEFAULT_MAX_BODY,
                render=render,
                authenticate=auth,
            )
        ],
    )
    api = webmcp_surface(target, options=options, **surface)
    return Starlette(
        routes=[
            Route("/", home, methods=["GET"]),
            *routes,
            Mount(base or "/", routes=[Mount(PAGE_PARTS, app=parts), Mount("", app=api)]),
        ]
    )
