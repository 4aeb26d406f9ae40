"""``foldkit-agent serve MODULE:ATTR``: serve a bound runtime over the adapters asked for.

``ATTR`` is an :class:`~foldkit_agent.runtime.AgentRuntime`, or a zero-argument callable
returning an async context manager that yields one (``examples.todo:runtime``); the context
manager runs the application for as long as the server runs.

Over HTTP every adapter contributes one Starlette app; :func:`combine` joins them into one
server (requests go to the first app with a matching route) and runs all their lifespans.
:func:`http_parts` builds the list of those apps (one :data:`HttpPart` each) from the options,
so adding an adapter is one more entry there and one more option on the command.

Once started (the apps' lifespans over HTTP, the runtime over stdio) the process freezes what
start-up allocated (``foldkit_agent.edge.startup``), so full garbage collections while serving
never rescan it.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import socket
import sys
from collections.abc import AsyncGenerator, Awaitable, Callable, Generator, Sequence
from contextlib import AsyncExitStack, asynccontextmanager
from typing import TYPE_CHECKING, Any, cast
from urllib.parse import urlsplit

import anyio
import typer
from starlette.applications import Starlette
from starlette.responses import PlainTextResponse, Response
from starlette.routing import Match, Mount
from starlette.types import Receive, Scope, Send

from .. import __version__
from ..audit.log import AuditSink, AuditSinkError
from ..contract.declare import AgentDefinition
from ..edge.callers import DEFAULT_CALLER_LIMITS, DEFAULT_PAGE_STREAMS, CallerLimits
from ..edge.calls import CallsInFlight
from ..edge.connections import (
    DEFAULT_CONNECTION_LIMITS,
    HTTP_PARSERS,
    ConnectionLimits,
    HttpParser,
    fast_http,
    protocol,
    quiet_accept_errors,
)
from ..edge.hosts import LOOPBACK_HOSTS
from ..edge.progress import DEFAULT_PROGRESS_INTERVAL
from ..edge.startup import freeze_startup, frozen_lifespan
from ..edge.tokens import Grant, TokenTable
from ..runtime.bound import AgentRuntime
from . import Command, app
from .audit_option import AUDIT_HELP, audited, open_sink
from .loading import TargetError, fail, load_attr
from .tenant_option import (
    OpenRuntimes,
    check_tenant_factory,
    check_tenant_options,
    close_sink,
    foreign_token_gate,
    serve_tenants,
)

if TYPE_CHECKING:
    from ..adapters.a2a.database import SqlTaskStore
    from ..adapters.mcp.listing import Listing
    from ..adapters.mcp.local import LocalUser

LISTING_MODES = ("available", "all", "catalog")
"""``--listing`` values (``foldkit_agent.adapters.mcp.listing``; kept here so the command
line loads without the ``mcp`` extra)."""

__all__ = ["HttpPart", "combine", "http_parts", "open_runtime", "run_http", "serve"]

HttpPart = Callable[[Any], Starlette]
"""Builds one adapter's Starlette app for a target: a runtime, or a ``resolve(ctx)`` such as
:class:`~foldkit_agent.edge.Tenants` (``host`` is bound by :func:`http_parts`)."""


@asynccontextmanager
async def open_runtime(
    target: object, reference: str = "target"
) -> AsyncGenerator[AgentRuntime[Any, Any]]:
    """Yield the runtime ``target`` names, running its application while inside.

    Args:
        target: an ``AgentRuntime`` or a zero-argument callable returning an async context
            manager (or an awaitable) that yields one.
        reference: how to name the target in errors (``"examples.todo:runtime"``).

    Raises:
        TargetError: ``target`` is neither, or it yields something else.

    Example:
        >>> async with open_runtime(load_attr("examples.todo:runtime")) as rt:
        ...     rt.messages.available()
    """
    if isinstance(target, AgentRuntime):
        yield cast("AgentRuntime[Any, Any]", target)
        return
    if isinstance(target, AgentDefinition):
        raise TargetError(
            f"{reference} is the contract (agent.make(...)), and serve needs it bound to the "
            f"running application: a runtime factory.{shape_hint(reference)}"
        )
    if not callable(target):
        kind = type(target).__name__
        article = "an" if kind[:1] in "AEIOU" else "a"
        raise TargetError(
            f"{reference} is {article} {kind}, and serve needs a runtime factory (or a bound "
            f"AgentRuntime).{shape_hint(reference)}"
        )
    try:
        made: Any = target()
    except TypeError as exc:
        raise TargetError(
            f"{reference} must be callable with no arguments: {exc}{shape_hint(reference)}"
        ) from exc
    if hasattr(made, "__aenter__") and hasattr(made, "__aexit__"):
        async with made as rt:
            if not isinstance(rt, AgentRuntime):
                kind = type(rt).__name__  # pyright: ignore[reportUnknownArgumentType]
                raise TargetError(
                    f"{reference}() yielded a {kind}, not an AgentRuntime: yield what "
                    f"agent.bind(...) returns.{shape_hint(reference)}"
                )
            yield cast("AgentRuntime[Any, Any]", rt)
        return
    if isinstance(made, Awaitable):
        made = await cast("Awaitable[Any]", made)
    if not isinstance(made, AgentRuntime):
        kind = type(made).__name__  # pyright: ignore[reportUnknownArgumentType]
        raise TargetError(
            f"{reference}() returned a {kind}; a runtime factory returns an async context "
            f"manager that yields an AgentRuntime.{shape_hint(reference)}"
        )
    yield cast("AgentRuntime[Any, Any]", made)


UNGUARDED_PATHS = (
    "warning: --tenant-from path without --token: any request that reaches this server "
    "opens a runtime for the tenant its path names (even a card fetch for a made-up one) and, "
    "past --max-tenants, closes real tenants' idle runtimes with their in-memory state; "
    "authenticate each path at a proxy in front, or add --token TOKEN=TENANT"
)
"""The one line ``serve`` prints at start when anyone may open a tenant's runtime."""


def shape_hint(reference: str) -> str:
    """The shape ``serve`` wants, as an example to append to an error about ``reference``."""
    module = reference.partition(":")[0] or "my_app"
    return (
        "\n\nA runtime factory runs the application and binds its contract:\n\n"
        "    from contextlib import asynccontextmanager\n"
        "    from foldkit_agent import Program, agent\n\n"
        "    @asynccontextmanager\n"
        "    async def runtime():\n"
        "        async with Program(init=Model(), update=update).run() as running:\n"
        "            yield TodoAgent.bind(definition=AppAgent, host=running.host,\n"
        "                                 audit=agent.audit_log(), principal=principal)\n\n"
        f"then: foldkit-agent serve {module}:runtime --mcp stdio (docs/serving.md has more)"
    )


def combine(
    apps: Sequence[Starlette],
    *,
    prefix: str = "/",
    refuse: Callable[[Scope], Response | None] | None = None,
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

    return Starlette(routes=[Mount(prefix, app=dispatch)], lifespan=lifespan)


EXTRAS = {
    "mcp": "mcp",
    "mcp_types": "mcp",
    "a2a": "a2a",
    "sse_starlette": "web",
    "google": "a2a",
    "httptools": "web",
}
"""Which extra installs a module an adapter imports (for a one-line hint when it is missing)."""

Tokens = dict[str, tuple[str, list[str]]]
"""Static bearer tokens: ``token -> (subject, scopes)``."""


def parse_tokens(specs: Sequence[str]) -> Tokens:
    """Parse ``--token TOKEN=SUBJECT[;SCOPE,SCOPE...]`` options.

    Raises:
        ValueError: a spec without ``=`` or with an empty token or subject.

    Example:
        >>> parse_tokens(["alice-token=alice;todos:delete"])
        {'alice-token': ('alice', ['todos:delete'])}
    """
    tokens: Tokens = {}
    for spec in specs:
        token, sep, rest = spec.partition("=")
        subject, _, scopes = rest.partition(";")
        if not sep or not token.strip() or not subject.strip():
            raise ValueError(f"--token takes TOKEN=SUBJECT[;SCOPE,...], got {spec!r}")
        tokens[token.strip()] = (
            subject.strip(),
            [s.strip() for s in scopes.split(",") if s.strip()],
        )
    return tokens


def token_table(tokens: Tokens) -> TokenTable[Grant]:
    """The one table MCP, A2A and the tenants' gate look ``--token`` tokens up in."""
    return TokenTable({t: Grant(who, tuple(scopes)) for t, (who, scopes) in tokens.items()})


def http_parts(
    *,
    mcp: bool,
    name: str,
    host: str,
    base_url: str,
    a2a: bool = False,
    webmcp: bool = False,
    tokens: Tokens | None = None,
    allowed_hosts: Sequence[str] | None = None,
    native_tokens: Sequence[str] = (),
    listing: str = "available",
    progress_interval: float = DEFAULT_PROGRESS_INTERVAL,
    caps: CallerLimits = DEFAULT_CALLER_LIMITS,
    task_store: Any = None,
) -> list[HttpPart]:
    """The HTTP adapters the command line asked for, in mounting order.

    A2A comes last: its HTTP+JSON binding also answers ``/{tenant}/...`` paths, which would
    shadow anything mounted after it.

    MCP answers ``/mcp``; A2A ``/.well-known/agent-card.json`` and ``/a2a/...``; WebMCP a page
    at ``/`` and its surface under ``/agent/``. With ``tokens``, MCP and A2A require one of them
    as a bearer token (401 otherwise; the A2A card stays public); the verified subject and
    scopes become the call's credentials. The WebMCP page has no login here, so its
    calls carry no principal. ``native_tokens`` mounts the endpoint generated Agent Native
    actions call (``native_app``) at ``/native``, for servers sending one of those bearer
    tokens. ``allowed_hosts`` (for a non-loopback ``host``) are the host names every adapter
    accepts in ``Host``/``Origin`` besides the loopback names (one
    :class:`~foldkit_agent.edge.HostPolicy` each, built from the same names). MCP and A2A look
    tokens up in one shared :class:`~foldkit_agent.edge.TokenTable`. ``listing`` is the MCP listing
    mode; ``progress_interval`` the seconds between signs of life of a waiting call (MCP
    progress, A2A ``WORKING`` updates); ``caps`` the per-caller caps of every adapter
    (:class:`~foldkit_agent.edge.callers.CallerLimits`). ``task_store`` is where A2A keeps
    its tasks (an ``a2a.server.tasks.TaskStore``, such as
    :class:`~foldkit_agent.adapters.a2a.SqlTaskStore`); by default a ``BoundedTaskStore``
    in memory within ``caps``.
    """
    parts: list[HttpPart] = []
    table = token_table(tokens) if tokens else None
    calls = CallsInFlight(caps)  # one set of caps on calls in flight for every adapter
    if mcp:
        from ..adapters.mcp import StaticTokenVerifier, http_app

        verifier = None if table is None else StaticTokenVerifier(table)

        def mcp_part(rt: Any) -> Starlette:
            return http_app(
                rt,
                name=name,
                version=__version__,
                host=host,
                token_verifier=verifier,
                allowed_hosts=allowed_hosts,
                listing=cast("Listing", listing),
                progress_interval=progress_interval,
                max_sessions_per_caller=caps.sessions_per_caller,
                max_sessions=caps.sessions,
                session_idle_timeout=caps.session_idle_timeout,
                max_streams_per_caller=caps.streams_per_caller,
                max_streams=caps.streams,
                calls=calls,
            )

        parts.append(mcp_part)
    if webmcp:
        from ..adapters.web.webmcp import webmcp_app

        def webmcp_part(rt: Any) -> Starlette:
            return webmcp_app(
                rt,
                title=name,
                allowed_hosts=allowed_hosts,
                max_streams_per_caller=caps.streams_per_caller,
                max_streams=caps.page_streams,
                max_page_sessions=caps.page_sessions,
            )

        parts.append(webmcp_part)
    if native_tokens:
        from ..adapters.native import native_app

        def native_part(rt: Any) -> Starlette:
            return native_app(
                rt, service_tokens=list(native_tokens), path="/native", allowed_hosts=allowed_hosts
            )

        parts.append(native_part)
    if a2a:
        from ..adapters.a2a import BearerTokenBackend, BoundedTaskStore, a2a_app

        backend = None if table is None else BearerTokenBackend(table, required=True)

        def a2a_part(rt: Any) -> Starlette:
            return a2a_app(
                rt,
                name=name,
                version=__version__,
                base_url=base_url,
                authentication=backend,
                allowed_hosts=allowed_hosts,
                progress_interval=progress_interval,
                task_store=BoundedTaskStore(
                    max_tasks=caps.tasks,
                    max_per_caller=caps.tasks_per_caller,
                    max_age=caps.task_max_age,
                )
                if task_store is None
                else task_store,
                max_calls_per_caller=caps.a2a_calls_per_caller,
                max_calls=caps.a2a_calls,
            )

        parts.append(a2a_part)
    return parts


def bind_socket(host: str, port: int) -> socket.socket:
    """A listening TCP socket on ``host:port`` (``port=0`` picks a free one).

    Binding before the app is built lets URLs that name the port (the A2A card) be right, and
    connections made before the server runs wait in the backlog instead of failing. Accepted
    connections get ``TCP_NODELAY``.

    Raises:
        OSError: the address is taken or not available.
    """
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    # asyncio sets TCP_NODELAY only on sockets it created itself (proto IPPROTO_TCP); accepted
    # connections inherit it from here. Without it a modern-era MCP call over HTTP waits out
    # the peer's delayed ACK: ~44 ms a call instead of ~2 ms (measured; see docs/mcp.md).
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    sock.bind((host, port))
    sock.listen(2048)
    sock.setblocking(False)
    return sock


async def run_http(
    asgi: Starlette,
    *,
    host: str = "127.0.0.1",
    port: int = 0,
    sock: socket.socket | None = None,
    on_ready: Callable[[int], None] | None = None,
    runtimes: Sequence[AgentRuntime[Any, Any]] = (),
    drain_timeout: float | None = None,
    after_drain: Callable[[], Awaitable[None]] | None = None,
    limits: ConnectionLimits = DEFAULT_CONNECTION_LIMITS,
    http: HttpParser | None = None,
) -> int | None:
    """Serve ``asgi`` with uvicorn on this event loop until cancelled or told to stop.

    On SIGTERM or SIGINT it drains ``runtimes`` first (:mod:`foldkit_agent.edge.serving`):
    stop accepting, let calls in flight finish up to ``drain_timeout`` seconds (default: the
    longest completion timeout in the contracts plus 5 s), answer the rest "the server shut
    down, outcome unknown", await ``after_drain``, then shut uvicorn down and return (the
    signal is not re-raised, so the caller's cleanup runs and the process exits 0). A second
    signal cuts the wait for the calls in flight short: they are answered at once, and the
    rest of the shutdown runs as before.

    Returns:
        ``None``, or the number of the second signal that cut the drain short (``serve``
        then exits ``128 +`` that number once its cleanup is done).

    Args:
        asgi: the app.
        host, port: where to listen, unless ``sock`` (from :func:`bind_socket`) is given.
        on_ready: called with the bound port once the socket listens.
        runtimes: the runtimes behind ``asgi``, drained on a signal.
        drain_timeout: seconds the calls in flight get to finish on their own.
        after_drain: awaited after the drain, before uvicorn ends the open streams.
        limits: header and body read timeouts, the idle keep-alive, the cap on open
            connections and the caps on a request's head
            (:class:`~foldkit_agent.edge.connections.ConnectionLimits`); a failed ``accept()``
            (too many open files) is logged as one line, not a traceback each time.
        http: uvicorn's HTTP/1.1 parser, ``"httptools"`` or ``"h11"``; default
            :func:`~foldkit_agent.edge.connections.fast_http` (httptools where installed).
            ``limits`` hold on both.
    """
    import uvicorn

    from ..edge.serving import draining_server

    listening = sock if sock is not None else bind_socket(host, port)
    config = uvicorn.Config(
        asgi,
        log_level="warning",
        lifespan="on",
        timeout_graceful_shutdown=2,
        http=protocol(limits, fast_http() if http is None else http),
        timeout_keep_alive=limits.keep_alive,  # pyright: ignore[reportArgumentType] - call_later
    )
    server = draining_server(config, runtimes, within=drain_timeout, after_drain=after_drain)
    if on_ready is not None:
        on_ready(listening.getsockname()[1])
    serving = asyncio.ensure_future(server.serve(sockets=[listening]))
    restore = quiet_accept_errors(asyncio.get_running_loop())
    try:
        await asyncio.shield(serving)
        return server.cut_by
    except asyncio.CancelledError:
        # Shut down the way a signal does (lifespans exit cleanly), then keep cancelling.
        server.should_exit = True
        with anyio.CancelScope(shield=True):
            await asyncio.wait({serving}, timeout=10)
        raise
    finally:
        restore()
        if sock is None:
            listening.close()


_FLAG_NAMES = {
    "streams_per_caller": "max-streams-per-caller",
    "streams": "max-streams",
    "page_streams": "max-page-streams",
    "sessions_per_caller": "max-sessions-per-caller",
    "sessions": "max-sessions",
    "page_sessions": "max-page-sessions",
    "tasks_per_caller": "max-tasks-per-caller",
    "tasks": "max-tasks",
    "a2a_calls_per_caller": "max-a2a-calls-per-caller",
    "a2a_calls": "max-a2a-calls",
}


def _stream_pools(caps: CallerLimits, *, mcp: bool, webmcp: bool, native: bool) -> int:
    """How many connections every stream pool of one ``serve`` may hold together.

    Each open stream holds a connection, so ``serve`` refuses caps whose sum reaches
    ``--max-connections`` (by default they stay under half of it: 256 + 64 + 64 of 1,000).
    """
    return (
        (caps.streams if mcp else 0)
        + (caps.page_streams if webmcp else 0)
        + (DEFAULT_PAGE_STREAMS if native else 0)
    )


def _flag(problem: str) -> str:
    """A limit's complaint in the words of its ``serve`` flag."""
    name, _, rest = problem.partition(" ")
    return f"{_FLAG_NAMES.get(name, name.replace('_', '-'))} {rest}"


def open_task_store(spec: str, a2a: bool, caps: CallerLimits) -> SqlTaskStore:
    """The ``--a2a-task-store`` store, within the A2A caps; exits with one line when the
    spec or the flags are wrong, or the driver is missing."""
    if not a2a:
        fail("--a2a-task-store keeps A2A tasks: add --a2a")
    try:
        from ..adapters.a2a.database import SqlTaskStore

        return SqlTaskStore(
            spec,
            max_tasks=caps.tasks,
            max_per_caller=caps.tasks_per_caller,
            max_age=caps.task_max_age,
        )
    except ValueError as err:
        fail(f"--a2a-task-store: {err}")
    except ModuleNotFoundError as err:
        fail(f"--a2a-task-store needs {err.name!r}: pip install 'foldkit-agent[a2a-db]'")


@asynccontextmanager
async def opened(store: SqlTaskStore) -> AsyncGenerator[None]:
    """``store`` with its table made (before the server listens), closed on exit.

    Raises:
        TargetError: the store cannot be reached (``serve`` says so in one line).
    """
    try:
        await store.initialize()
    except Exception as err:
        await store.close()
        raise TargetError(f"--a2a-task-store: cannot open {store.where}: {err}") from None
    try:
        yield
    finally:
        with anyio.CancelScope(shield=True):
            await store.close()


SHUTDOWN_GRACE = 5.0
"""Seconds the MCP calls aborted at the drain deadline get to hand their answers over."""


class StdoutToStderr:
    """While inside, file descriptor 1 (and so ``print``) writes to standard error.

    ``lifted()`` gives the real standard output back for a moment (to the stdio transport,
    which claims it as the wire and diverts stray writes itself while serving).
    """

    def __enter__(self) -> StdoutToStderr:
        sys.stdout.flush()
        self._saved = os.dup(1)
        os.dup2(2, 1)
        return self

    def __exit__(self, *exc: object) -> None:
        with contextlib.suppress(OSError, ValueError):
            sys.stdout.flush()
        os.dup2(self._saved, 1)
        os.close(self._saved)

    @contextlib.contextmanager
    def lifted(self) -> Generator[None]:
        sys.stdout.flush()
        os.dup2(self._saved, 1)
        try:
            yield
        finally:
            with contextlib.suppress(OSError, ValueError):
                sys.stdout.flush()
            os.dup2(2, 1)


class _NoGuard:
    """The guard of the HTTP adapters, which leave standard output alone."""

    def __enter__(self) -> _NoGuard:
        return self

    def __exit__(self, *exc: object) -> None:
        return None

    @contextlib.contextmanager
    def lifted(self) -> Generator[None]:
        yield


async def _serve_stdio(
    rt: AgentRuntime[Any, Any],
    name: str,
    user: LocalUser | None,
    guard: StdoutToStderr | _NoGuard,
    listing: str = "available",
    progress_interval: float = DEFAULT_PROGRESS_INTERVAL,
) -> None:
    """MCP over this process's stdio, every call carrying ``user`` as its credentials."""
    from ..adapters.mcp import serve_stdio

    def local_user(_request_context: Any) -> LocalUser | None:
        return user

    freeze_startup()  # what the runtime and the imports allocated is never rescanned
    with guard.lifted():  # serve_stdio claims the real stdout as its wire
        await serve_stdio(
            rt,
            name=name,
            version=__version__,
            credentials_of=local_user,
            listing=cast("Listing", listing),
            progress_interval=progress_interval,
        )


@app.command(cls=Command)
def serve(
    target: str = typer.Argument(
        ...,
        metavar="MODULE:ATTR",
        help="A runtime factory (like examples.todo:runtime) or a bound AgentRuntime; "
        "see docs/serving.md",
        show_default=False,
    ),
    mcp: str | None = typer.Option(
        None,
        "--mcp",
        metavar="stdio|http",
        help="Serve MCP over stdio (a client starts this command) or streamable HTTP (at /mcp)",
    ),
    a2a: bool = typer.Option(False, "--a2a", help="Serve A2A (agent card + JSON-RPC + REST)"),
    webmcp: bool = typer.Option(
        False, "--webmcp", help="Serve a page at / whose capabilities are WebMCP tools"
    ),
    host: str = typer.Option("127.0.0.1", metavar="HOST", help="HTTP host (loopback by default)"),
    port: int = typer.Option(8000, metavar="PORT", help="HTTP port (0 picks a free one)"),
    allowed_host: list[str] = typer.Option(  # noqa: B008
        [],
        "--allowed-host",
        metavar="NAME",
        help="With a non-loopback --host: a host name clients use (repeatable; '*' = any, "
        "only behind a proxy that checks Host)",
    ),
    name: str | None = typer.Option(
        None, metavar="NAME", help="Server name shown to clients (default: MODULE)"
    ),
    base_url: str | None = typer.Option(
        None,
        "--base-url",
        metavar="URL",
        help="With --a2a: the public origin clients reach this server at, which the agent "
        "card's URLs name (default http://HOST:PORT; behind a proxy, the proxy's origin)",
    ),
    native_token: list[str] = typer.Option(  # noqa: B008
        [],
        "--native-token",
        metavar="TOKEN",
        help="Serve the endpoint generated Agent Native actions call, at /native, for servers "
        "sending this bearer token (repeatable; at least 16 characters)",
    ),
    token: list[str] = typer.Option(  # noqa: B008 - Typer's way of declaring a list option
        [],
        "--token",
        metavar="SPEC",
        help="Require a bearer token for MCP and A2A over HTTP (the A2A card stays public): "
        "TOKEN=SUBJECT[;SCOPE,...], repeatable",
    ),
    principal: str | None = typer.Option(
        None,
        "--principal",
        metavar="SPEC",
        help="With --mcp stdio: the local user who started the server (Claude Desktop's "
        "user), SUBJECT[;SCOPE,...]; every call carries them as invocation.credentials "
        "(a LocalUser with subject and scopes)",
        show_default=False,
    ),
    audit: str | None = typer.Option(None, "--audit", metavar="SPEC", help=AUDIT_HELP),
    audit_durable: bool = typer.Option(
        False,
        "--audit-durable",
        help="With --audit: answer each call only after its audit entry is stored",
    ),
    listing: str = typer.Option(
        "available",
        "--listing",
        help="What MCP tools/list shows: 'available' (what is available now; for clients that "
        "re-list on tools/list_changed), 'all' (every capability, refused while unavailable) or "
        "'catalog' (list_capabilities + call_capability), for clients that list once",
    ),
    progress_interval: float = typer.Option(
        DEFAULT_PROGRESS_INTERVAL,
        "--progress-interval",
        help="Seconds between signs of life of a call waiting on its completion (MCP "
        "notifications/progress, A2A WORKING updates)",
    ),
    header_timeout: float = typer.Option(
        DEFAULT_CONNECTION_LIMITS.header_timeout,
        "--header-timeout",
        help="Seconds a client has to send a request's headers; then the connection is closed",
    ),
    body_timeout: float = typer.Option(
        DEFAULT_CONNECTION_LIMITS.body_timeout,
        "--body-timeout",
        help="Seconds a request body has to arrive whole after its headers; then the "
        "connection is closed",
    ),
    keep_alive: float = typer.Option(
        DEFAULT_CONNECTION_LIMITS.keep_alive,
        "--keep-alive",
        help="Seconds an idle connection is kept open between requests",
    ),
    max_connections: int = typer.Option(
        DEFAULT_CONNECTION_LIMITS.max_connections,
        "--max-connections",
        help="Open connections; at the cap a new one closes the connection idle longest",
    ),
    max_header_bytes: int = typer.Option(
        DEFAULT_CONNECTION_LIMITS.max_header_bytes,
        "--max-header-bytes",
        help="Bytes of one request's request line and headers; past it the request is "
        "answered 431 and the connection closed",
    ),
    max_headers: int = typer.Option(
        DEFAULT_CONNECTION_LIMITS.max_headers,
        "--max-headers",
        help="Header fields in one request; past it the request is answered 431 and the "
        "connection closed",
    ),
    max_streams_per_caller: int = typer.Option(
        DEFAULT_CALLER_LIMITS.streams_per_caller,
        "--max-streams-per-caller",
        help="Open streams one caller may hold per adapter (MCP GET and subscriptions/listen, "
        "the page's events); every anonymous caller together counts as one",
    ),
    max_streams: int = typer.Option(
        DEFAULT_CALLER_LIMITS.streams,
        "--max-streams",
        help="Open MCP streams all callers may hold together",
    ),
    max_page_streams: int = typer.Option(
        DEFAULT_CALLER_LIMITS.page_streams,
        "--max-page-streams",
        help="With --webmcp: open events streams all page sessions may hold together",
    ),
    max_page_sessions: int = typer.Option(
        DEFAULT_CALLER_LIMITS.page_sessions,
        "--max-page-sessions",
        help="With --webmcp: page sessions that each hold their own share of streams",
    ),
    max_sessions_per_caller: int = typer.Option(
        DEFAULT_CALLER_LIMITS.sessions_per_caller,
        "--max-sessions-per-caller",
        help="Handshake-era MCP sessions one caller may hold open",
    ),
    max_sessions: int = typer.Option(
        DEFAULT_CALLER_LIMITS.sessions,
        "--max-sessions",
        help="Handshake-era MCP sessions all callers may hold open",
    ),
    session_idle_timeout: float = typer.Option(
        DEFAULT_CALLER_LIMITS.session_idle_timeout,
        "--session-idle-timeout",
        help="Seconds after which an MCP session with no request in flight is closed",
    ),
    max_tasks_per_caller: int = typer.Option(
        DEFAULT_CALLER_LIMITS.tasks_per_caller,
        "--max-tasks-per-caller",
        help="A2A tasks kept for one caller (finished ones dropped first)",
    ),
    max_tasks: int = typer.Option(
        DEFAULT_CALLER_LIMITS.tasks, "--max-tasks", help="A2A tasks kept for all callers"
    ),
    task_max_age: float = typer.Option(
        DEFAULT_CALLER_LIMITS.task_max_age,
        "--task-max-age",
        help="Seconds after its last update when an A2A task is dropped",
    ),
    a2a_task_store: str | None = typer.Option(
        None,
        "--a2a-task-store",
        metavar="SPEC",
        help="With --a2a: keep A2A tasks in SQLite or PostgreSQL, so GetTask finds them after a "
        "restart: sqlite:PATH (or sqlite:///PATH), postgres:DSN or postgresql://... (needs "
        "foldkit-agent[a2a-db]; the --max-tasks* and --task-max-age bounds apply)",
        show_default=False,
    ),
    http_parser: str | None = typer.Option(
        None,
        "--http",
        metavar="h11|httptools",
        help="uvicorn's HTTP/1.1 parser (default: httptools where installed, else h11); every "
        "connection limit holds on both",
        show_default=False,
    ),
    max_a2a_calls_per_caller: int = typer.Option(
        DEFAULT_CALLER_LIMITS.a2a_calls_per_caller,
        "--max-a2a-calls-per-caller",
        help="A2A calls one caller may have running at once; past it a call is REJECTED "
        "naming the cap (a call waiting for approval counts among the parked approvals)",
    ),
    max_a2a_calls: int = typer.Option(
        DEFAULT_CALLER_LIMITS.a2a_calls,
        "--max-a2a-calls",
        help="A2A calls all callers may have running at once",
    ),
    drain_timeout: float | None = typer.Option(
        None,
        "--drain-timeout",
        metavar="SECONDS",
        help="On SIGTERM or SIGINT over HTTP: stop accepting, give calls in flight this long "
        "to finish, then answer the rest 'server shut down, outcome unknown' (default: the "
        "longest completion timeout in the contract plus 5)",
        show_default=False,
    ),
    tenant_from: str | None = typer.Option(
        None,
        "--tenant-from",
        metavar="principal|path",
        help="With --mcp http and/or --a2a: serve one runtime per tenant, MODULE:ATTR(tenant) "
        "each; the tenant is the bearer token's subject (principal; needs --token) or the first "
        "path segment (path: /TENANT/mcp, /TENANT/a2a/...; with --token, only for a token of "
        "that tenant); see "
        "docs/deploy.md",
        show_default=False,
    ),
    tenant_idle: float = typer.Option(
        600.0,
        "--tenant-idle",
        metavar="SECONDS",
        help="With --tenant-from: close a tenant's runtime after this many idle seconds",
    ),
    max_tenants: int = typer.Option(
        100,
        "--max-tenants",
        metavar="N",
        help="With --tenant-from: runtimes held at most (the least recently used is closed)",
    ),
) -> None:
    """Serve an application's agent contract over MCP, A2A and WebMCP."""
    server_name = name or target.partition(":")[0]
    if mcp not in (None, "stdio", "http"):
        fail("--mcp takes 'stdio' or 'http'")
    local_user: LocalUser | None = None
    if principal is not None:
        if mcp != "stdio":
            fail(
                "--principal names the local user of a --mcp stdio server; over HTTP the "
                "caller comes from the bearer token (--token TOKEN=SUBJECT[;SCOPE,...])"
            )
        from ..adapters.mcp.local import parse_local_user

        try:
            local_user = parse_local_user(principal)
        except ValueError as err:
            fail(str(err))
    native = bool(native_token)
    if mcp is None and not a2a and not webmcp and not native:
        fail("choose at least one adapter: --mcp stdio|http, --a2a, --webmcp, --native-token")
    if mcp == "stdio" and (a2a or webmcp or native):
        fail("--mcp stdio uses standard input and output; serve the HTTP adapters separately")
    if listing not in LISTING_MODES:
        fail(f"--listing takes {', '.join(LISTING_MODES)}, got {listing!r}")
    if listing != "available" and mcp is None:
        fail("--listing applies to MCP: add --mcp stdio or --mcp http")
    if not progress_interval > 0 or progress_interval == float("inf"):
        fail(f"--progress-interval must be a positive number of seconds, got {progress_interval}")
    if http_parser is not None and http_parser not in HTTP_PARSERS:
        fail(f"--http takes {' or '.join(HTTP_PARSERS)}, got {http_parser!r}")
    parser: HttpParser = http_parser or fast_http()
    if mcp == "stdio" and http_parser is not None:
        fail("--http chooses the HTTP parser; --mcp stdio serves no HTTP")
    if drain_timeout is not None and (not drain_timeout >= 0 or drain_timeout == float("inf")):
        fail(f"--drain-timeout must be a number of seconds >= 0, got {drain_timeout}")
    try:
        connection_limits = ConnectionLimits(
            header_timeout=header_timeout,
            body_timeout=body_timeout,
            keep_alive=keep_alive,
            max_connections=max_connections,
            max_header_bytes=max_header_bytes,
            max_headers=max_headers,
        )
        caps = CallerLimits(
            streams_per_caller=max_streams_per_caller,
            streams=max_streams,
            page_streams=max_page_streams,
            sessions_per_caller=max_sessions_per_caller,
            sessions=max_sessions,
            session_idle_timeout=session_idle_timeout,
            page_sessions=max_page_sessions,
            tasks_per_caller=max_tasks_per_caller,
            tasks=max_tasks,
            task_max_age=task_max_age,
            a2a_calls_per_caller=max_a2a_calls_per_caller,
            a2a_calls=max_a2a_calls,
        )
    except ValueError as err:
        fail(f"--{_flag(str(err))}")
    held = _stream_pools(caps, mcp=mcp == "http", webmcp=webmcp, native=native)
    if held >= max_connections:
        fail(
            f"the stream caps hold up to {held} connections together (--max-streams, "
            f"--max-page-streams, Agent Native's {DEFAULT_PAGE_STREAMS}), which reaches "
            f"--max-connections {max_connections}: lower them or raise --max-connections"
        )
    if any(len(t) < 16 for t in native_token):
        fail("--native-token must be at least 16 characters")
    try:
        tokens = parse_tokens(token)
    except ValueError as err:
        fail(str(err))
    if not 0 <= port <= 65535:
        fail(f"--port must be between 0 and 65535, got {port}")
    loopback = host in LOOPBACK_HOSTS
    if webmcp and not loopback:
        fail(
            "the --webmcp page has no sign-in, so it is served on loopback only; mount "
            "foldkit_agent.adapters.web.webmcp in your own app (with your login) to serve it wider"
        )
    if mcp != "stdio" and not loopback and not allowed_host:
        fail(
            f"--host {host} is not loopback: name the host(s) clients will use with "
            "--allowed-host NAME (DNS-rebinding protection), and consider --token"
        )
    hosts = None if loopback else list(allowed_host)
    public = host if loopback or not hosts or hosts[0] == "*" else hosts[0]
    if audit_durable and audit is None:
        fail("--audit-durable needs --audit SPEC (where to store the entries)")
    if tenant_from is not None:
        check_tenant_options(tenant_from, tenant_idle, max_tenants, mcp, webmcp, native, a2a)
        if tenant_from == "principal" and not tokens:
            fail("--tenant-from principal needs --token TOKEN=SUBJECT: the tenant is the subject")
    if base_url is not None:
        parsed = urlsplit(base_url)
        if not a2a:
            fail("--base-url names the A2A card's URLs: add --a2a")
        if parsed.scheme not in ("http", "https") or not parsed.hostname or parsed.query:
            fail(f"--base-url takes an origin such as http://proxy.example:8080, got {base_url!r}")
    task_store = None if a2a_task_store is None else open_task_store(a2a_task_store, a2a, caps)
    sink: AuditSink | None = None
    if audit is not None:
        try:
            sink = open_sink(audit, durable=audit_durable)
        except (ValueError, AuditSinkError, ModuleNotFoundError) as err:
            fail(str(err))
        if tenant_from is not None:  # each tenant opens its own sink on the same store
            close_sink(sink)
    # Over stdio, standard output is the wire: whatever the user's module prints while it is
    # imported, or while its application starts and stops, goes to standard error instead.
    guard = StdoutToStderr() if mcp == "stdio" else _NoGuard()
    with guard:
        try:
            loaded = load_attr(target, like="examples.todo:runtime")
        except TargetError as err:
            fail(str(err))

    if tenant_from is not None:
        check_tenant_factory(loaded, target)

    async def main() -> None:
        async with AsyncExitStack() as stack:
            if task_store is not None:
                await stack.enter_async_context(opened(task_store))
            await serve_all()

    async def serve_all() -> None:
        with guard:
            if tenant_from is not None:
                async with serve_tenants(
                    loaded,
                    target,
                    key=tenant_from,
                    idle=tenant_idle,
                    max_tenants=max_tenants,
                    audit=audit,
                    audit_durable=audit_durable,
                    verified=bool(tokens),
                ) as tenants:
                    prefix = "/{tenant}" if tenant_from == "path" else "/"
                    await serve_http(tenants, prefix, OpenRuntimes(tenants))
                return
            async with open_runtime(loaded, target) as rt, audited(rt, sink):
                if mcp == "stdio":
                    await _serve_stdio(
                        rt, server_name, local_user, guard, listing, progress_interval
                    )
                    return
                await serve_http(rt, "/", [rt])

    async def serve_http(
        served: Any, prefix: str, runtimes: Sequence[AgentRuntime[Any, Any]]
    ) -> None:
        sock = bind_socket(host, port)
        bound = sock.getsockname()[1]
        origin = f"http://{public if ':' not in public else f'[{public}]'}:{bound}"
        # the card of /alice/.well-known/agent-card.json names /alice/a2a/... URLs
        card_base = (base_url or origin).rstrip("/") + ("" if prefix == "/" else prefix)
        parts = http_parts(
            mcp=mcp == "http",
            a2a=a2a,
            webmcp=webmcp,
            name=server_name,
            host=host,
            base_url=card_base,
            tokens=tokens or None,
            allowed_hosts=hosts,
            native_tokens=native_token,
            listing=listing,
            progress_interval=progress_interval,
            caps=caps,
            task_store=task_store,
        )
        apps = [part(served) for part in parts]
        gate = None if prefix == "/" or not tokens else foreign_token_gate(token_table(tokens))
        asgi = combine(apps, prefix=prefix, refuse=gate)
        at = origin if prefix == "/" else origin + prefix
        # once every app has started, what start-up allocated is never rescanned
        asgi.router.lifespan_context = frozen_lifespan(asgi.router.lifespan_context)
        deliver = [a.state.deliver_answers for a in apps if hasattr(a.state, "deliver_answers")]

        async def answers_handed_over() -> None:
            # After the drain every call has answered; the MCP and A2A SDKs write
            # those answers on their own tasks, before uvicorn ends their streams.
            for answers in deliver:
                await answers(SHUTDOWN_GRACE)

        if mcp == "http":
            print(f"serving MCP at {at}/mcp", file=sys.stderr, flush=True)
        if a2a:
            print(f"serving A2A at {at}/.well-known/agent-card.json", file=sys.stderr)
        if webmcp:
            print(f"serving the WebMCP page at {origin}/", file=sys.stderr, flush=True)
            if tokens:
                print(
                    "  (the page has no sign-in: its calls are anonymous, --token does not "
                    "apply to it, and capabilities that authorize refuse them)",
                    file=sys.stderr,
                    flush=True,
                )
        if native:
            print(
                f"serving Agent Native actions at {origin}/native "
                f"(native actions ... --url {origin}/native)",
                file=sys.stderr,
                flush=True,
            )
        if tenant_from == "path" and not tokens:
            print(UNGUARDED_PATHS, file=sys.stderr, flush=True)
        cut_by[0] = await run_http(
            asgi,
            sock=sock,
            runtimes=runtimes,
            drain_timeout=drain_timeout,
            after_drain=answers_handed_over,
            limits=connection_limits,
            http=parser,
        )
        for part in apps:
            inline = getattr(part.state, "mcp_inline", None)
            if inline is not None:  # what the 2026-era fast paths answered (adapters/mcp/inline)
                print(
                    f"MCP answered {inline.answered} tools/call inline "
                    f"({inline.handed} more through the SDK's JSON path) and "
                    f"{inline.listed} tools/list from kept bytes",
                    file=sys.stderr,
                    flush=True,
                )

    cut_by: list[int | None] = [None]  # the second signal that cut the drain short
    try:
        with contextlib.suppress(KeyboardInterrupt):
            anyio.run(main)
    except TargetError as err:
        fail(str(err))
    except ModuleNotFoundError as err:
        top = (err.name or "").split(".")[0]
        extra = EXTRAS.get(top)
        if extra is None:
            raise
        fail(f"this adapter needs {top!r}: pip install 'foldkit-agent[{extra}]'")
    except OSError as err:
        fail(f"cannot listen on {host}:{port}: {err.strerror or err}")
    if cut_by[0] is not None:  # answered, audited and closed, but not every call completed
        raise typer.Exit(128 + cut_by[0])
