"""The HTTP side of ``serve``: one Starlette app per adapter asked for, joined into one.

Every adapter contributes one Starlette app; :func:`combine` joins them into one server
(requests go to the first app with a matching route) and runs all their lifespans.
:func:`http_parts` builds the list of those apps (one :data:`HttpPart` each) from the options,
so adding an adapter is one more entry there and one more flag on the command.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, Callable, Sequence
from contextlib import AsyncExitStack, asynccontextmanager
from dataclasses import replace
from functools import partial
from typing import TYPE_CHECKING, Any, cast

from starlette.applications import Starlette
from starlette.responses import PlainTextResponse, Response
from starlette.routing import BaseRoute, Match, Mount
from starlette.types import Receive, Scope, Send

from ... import __version__
from ...edge.callers import DEFAULT_CALLER_LIMITS
from ...edge.calls import CallsInFlight
from ...edge.oauth import OAuthVerifier
from ...edge.options import HttpOptions
from ...edge.rates import RateLimits
from ..loading import TargetError, load_attr
from .options import AG_UI_PATH, ServeOptions, token_table

if TYPE_CHECKING:
    from ...adapters.mcp.listing import Listing

__all__ = ["HttpPart", "combine", "http_options", "http_parts"]

HttpPart = Callable[[Any], Starlette]
"""Builds one adapter's Starlette app for a target: a runtime, or a ``resolve(ctx)`` such as
:class:`~foldkit_agent.edge.Tenants`."""


def combine(
    apps: Sequence[Starlette],
    *,
    prefix: str = "/",
    refuse: Callable[[Scope], Response | None] | None = None,
    routes: Sequence[BaseRoute] = (),
) -> Starlette:
    """One Starlette app serving several adapters' apps and running all their lifespans.

    A request goes to the first app that has a route matching it (each keeps its own
    middleware, e.g. the MCP app's bearer auth); anything else is a 404. Lifespans are entered
    in order and left in reverse.

    Args:
        apps: at least one Starlette app.
        prefix: where they are mounted; ``"/{tenant}"`` serves them under a tenant's path
            (``/alice/mcp``), the segment left as the ``tenant`` path parameter.
        refuse: ``refuse(scope)`` asked first for every request under ``prefix``: a response
            to answer instead of any app (``serve --tenant-from path --token`` refuses another
            tenant's token with it), or ``None``.
        routes: routes of the server itself, outside ``prefix`` and matched first (every
            tenant's protected resource metadata under ``/.well-known/``).

    Raises:
        ValueError: ``apps`` is empty.

    Example:
        >>> server = combine([mcp_app, a2a_app])
    """
    if not apps:
        raise ValueError("combine() needs at least one app")
    parts = list(apps)
    not_found = PlainTextResponse("Not Found", status_code=404)

    async def dispatch(scope: Scope, receive: Receive, send: Send) -> None:
        refused = None if refuse is None or scope["type"] != "http" else refuse(scope)
        if refused is not None:
            await refused(scope, receive, send)
            return
        for part in parts:
            for route in part.routes:
                match, _ = route.matches(scope)
                if match is not Match.NONE:
                    await part(scope, receive, send)
                    return
        await not_found(scope, receive, send)

    @asynccontextmanager
    async def lifespan(_: Starlette) -> AsyncGenerator[None]:
        async with AsyncExitStack() as stack:
            for part in parts:
                await stack.enter_async_context(part.router.lifespan_context(part))
            yield

    return Starlette(routes=[*routes, Mount(prefix, app=dispatch)], lifespan=lifespan)


def http_parts(
    options: ServeOptions,
    *,
    base_url: str,
    task_store: Any = None,
    calls: CallsInFlight | None = None,
) -> list[HttpPart]:
    """The HTTP adapters ``options`` ask for, in mounting order.

    A2A comes last: its HTTP+JSON binding also answers ``/{tenant}/...`` paths, which would
    shadow anything mounted after it.

    MCP answers ``/mcp``; A2A ``/.well-known/agent-card.json`` and ``/a2a/...``; WebMCP a page
    at ``/`` and its surface under ``/agent/``; the endpoint generated Agent Native actions
    call (``native_app``) ``/native``, for servers sending one of ``options.native_tokens``;
    AG-UI (``ag_ui_app``, the agent ``options.ag_ui`` names) ``POST /ag-ui``.
    Every adapter takes the one :class:`~foldkit_agent.edge.HttpOptions` of
    :func:`http_options` and one :class:`~foldkit_agent.edge.CallsInFlight`: the same host
    names, per-caller caps, signs of life and bearer tokens, and one count of calls in flight
    and waiting for a person. With ``options.tokens``, MCP and A2A require one of them (401
    otherwise; the A2A card stays public), and so does AG-UI, looked up in one shared
    :class:`~foldkit_agent.edge.TokenTable`; the verified subject and scopes become the
    call's credentials. With tokens the WebMCP page and the console require a person to sign
    in with one (one :class:`~foldkit_agent.adapters.web.signin.People` for both), and the
    page's calls carry that person as their credentials; without, they are loopback only
    and the page's calls carry no principal.

    Args:
        options: what ``serve`` was asked for.
        base_url: the origin the A2A card's URLs name (with the tenant's path, if any).
        task_store: where A2A keeps its tasks (an ``a2a.server.tasks.TaskStore``, such as
            :class:`~foldkit_agent.adapters.a2a.SqlTaskStore`); by default a
            ``BoundedTaskStore`` in memory within the caps (``a2a_app``'s own default).
        calls: the calls in flight every adapter shares (by default a new one within
            ``options``' caps).
    """
    parts: list[HttpPart] = []
    shared = http_options(options)
    name, version = options.server_name, __version__
    calls = CallsInFlight(shared.caps, rates=shared.rates) if calls is None else calls
    if options.mcp == "http":
        from ...adapters.mcp import http_app

        listing = cast("Listing", options.mcp_listing)
        parts.append(
            partial(
                http_app, name=name, version=version, options=shared, listing=listing, calls=calls
            )
        )
    people = None
    if options.signs_in:
        from ...adapters.web.signin import People

        people = People(token_table(options.tokens), issuer=_issuer_sign_in(options, shared))
    if options.serves_console:
        from ...adapters.web.console import console_app

        home = not options.webmcp
        parts.append(
            partial(console_app, calls=calls, people=people, title=name, options=shared, home=home)
        )
    if options.webmcp:
        from ...adapters.web.webmcp import webmcp_app

        parts.append(partial(webmcp_app, title=name, options=shared, calls=calls, people=people))
    if options.native:
        from ...adapters.native import native_app

        # The endpoint's event streams are a pool of their own at the default caps, which
        # ServeOptions.stream_pools counts against --max-connections as such.
        native = replace(shared, caps=DEFAULT_CALLER_LIMITS)
        tokens = list(options.native_tokens)
        parts.append(
            partial(native_app, service_tokens=tokens, path="/native", options=native, calls=calls)
        )
    if options.ag_ui is not None:
        from ...adapters.pydantic_ai.ag_ui import ag_ui_app

        copilot = load_agent(options.ag_ui)
        parts.append(
            partial(ag_ui_app, agent=copilot, options=shared, calls=calls, path=AG_UI_PATH)
        )
    if options.a2a:
        from ...adapters.a2a import a2a_app

        a2a = partial(a2a_app, name=name, version=version, base_url=base_url, options=shared)
        parts.append(partial(a2a, task_store=task_store, calls=calls))
    return parts


def _issuer_sign_in(options: ServeOptions, shared: HttpOptions) -> Any:
    """How people sign in through the issuer (``--auth-issuer`` with ``--client-id``), with
    the server's one verifier, else ``None``."""
    if shared.oauth is None or options.client_id is None:
        return None
    from ...adapters.web.issuer_signin import IssuerSignIn

    scopes = ("openid", *(s for s in options.auth_scopes if s != "openid"))
    return IssuerSignIn(shared.oauth, options.client_id, options.client_secret, scopes)


def load_agent(reference: str) -> Any:
    """The pydantic-ai ``Agent`` ``--ag-ui MODULE:ATTR`` names (or that a function there
    returns, called with no arguments).

    Raises:
        TargetError: the reference cannot be loaded, or it is not an ``Agent``.
    """
    from pydantic_ai import Agent

    found: Any = load_attr(reference, like="examples.todo_web.copilot:agent")
    if not isinstance(found, Agent) and callable(found):
        try:
            found = found()
        except Exception as exc:
            raise TargetError(f"--ag-ui {reference}() failed: {type(exc).__name__}: {exc}") from exc
    if not isinstance(found, Agent):
        raise TargetError(
            f"--ag-ui {reference}: expected a pydantic-ai Agent (or a function returning one), "
            f"got {type(found).__name__}"
        )
    return cast("Any", found)


def http_options(options: ServeOptions) -> HttpOptions:
    """What every HTTP adapter of this server shares, built once from ``serve``'s options.

    The host it binds and the extra host names (``--allowed-host``), the per-caller caps,
    the rhythm of signs of life (``--progress-interval``) and the bearer tokens
    (``--token``, one :class:`~foldkit_agent.edge.TokenTable` for MCP and A2A; and with
    ``--auth-issuer``, one :class:`~foldkit_agent.edge.oauth.OAuthVerifier` for both, its key
    set fetched once for the server).

    Example:
        >>> http_options(ServeOptions(target="app:agent", mcp="http")).host
        '127.0.0.1'
    """
    oauth = options.oauth_options()
    return HttpOptions(
        host=options.host,
        allowed_hosts=options.extra_hosts or (),
        caps=options.caller_limits,
        progress_interval=options.progress_interval,
        tokens=token_table(options.tokens) if options.tokens else None,
        oauth=None if oauth is None else OAuthVerifier(oauth),
        rates=None
        if options.rate_limit is None and options.rate_limit_storage == "memory://"
        else RateLimits(options.rate_limit, storage=options.rate_limit_storage),
    )
