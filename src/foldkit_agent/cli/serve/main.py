"""Running ``serve``: open what the options name, serve it, and say any failure in one line.

:func:`run` opens what outlives the event loop's start (the A2A task store, the audit sink),
loads ``MODULE:ATTR`` and runs the event loop; :func:`serve_http` builds the adapters' apps on
a bound socket, says where each is served and runs uvicorn until a signal drains it. Once the
apps have started, what start-up allocated is frozen (``foldkit_agent.edge.startup``), so full
garbage collections while serving never rescan it.
"""

from __future__ import annotations

import contextlib
import logging
import sys
from collections.abc import AsyncGenerator, Sequence
from contextlib import AsyncExitStack, asynccontextmanager
from typing import TYPE_CHECKING, Any, Final

import anyio
import typer
from starlette.routing import BaseRoute

from ...audit.forward import AuditSink, AuditSinkError
from ...edge.calls import CallsInFlight
from ...edge.startup import frozen_lifespan
from ...errors import MissingExtra
from ...runtime.bound import AgentRuntime
from ..loading import TargetError, fail, load_attr
from .audit import audited, open_sink
from .options import ServeOptions, token_table
from .parts import combine, http_parts
from .server import bind_socket, run_http
from .stdio import StdoutGuard, serve_stdio, stdout_guard
from .target import open_runtime
from .tenants import (
    OpenRuntimes,
    check_tenant_factory,
    close_sink,
    foreign_token_gate,
    serve_tenants,
)

if TYPE_CHECKING:
    from ...adapters.a2a.database import SqlTaskStore

__all__ = ["SHUTDOWN_GRACE", "UNGUARDED_PATHS", "run", "serve_http"]

_log = logging.getLogger("foldkit_agent.cli.serve")

SHUTDOWN_GRACE: Final = 5.0
"""Seconds the MCP calls aborted at the drain deadline get to hand their answers over."""

UNGUARDED_PATHS: Final = (
    "warning: --tenant-from path without --token: any request that reaches this server "
    "opens a runtime for the tenant its path names (even a card fetch for a made-up one) and, "
    "past --max-tenants, closes real tenants' idle runtimes with their in-memory state; "
    "authenticate each path at a proxy in front, or add --token TOKEN=TENANT"
)
"""The one line ``serve`` prints at start when anyone may open a tenant's runtime."""


def open_task_store(spec: str, options: ServeOptions) -> SqlTaskStore:
    """The ``--a2a-task-store`` store, within the A2A caps; exits with one line when the
    spec is wrong or the driver is missing."""
    caps = options.caller_limits
    try:
        from ...adapters.a2a.database import SqlTaskStore

        return SqlTaskStore(
            spec,
            max_tasks=caps.tasks,
            max_per_caller=caps.tasks_per_caller,
            max_age=caps.task_max_age,
        )
    except ValueError as err:
        fail(f"--a2a-task-store: {err}")
    except MissingExtra as err:
        fail(f"--a2a-task-store: {err}")


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


def _open_sink(options: ServeOptions) -> AuditSink | None:
    """The ``--audit`` sink of a single runtime; with tenants, each opens its own, so this
    one is only opened to check the spec."""
    if options.audit is None:
        return None
    try:
        sink = open_sink(options.audit, durable=options.audit_durable)
    except (ValueError, AuditSinkError, MissingExtra) as err:
        fail(str(err))
    if options.tenant_from is None:
        return sink
    close_sink(sink)
    return None


def run(options: ServeOptions) -> None:
    """Serve what ``options`` ask for until a signal drains the server (or stdin ends).

    Exits with status 2 and one line for what cannot be opened, loaded or listened on, and
    with ``128 +`` the signal's number when a second signal cut the drain short.
    """
    task_store = (
        None if options.a2a_task_store is None else open_task_store(options.a2a_task_store, options)
    )
    sink = _open_sink(options)
    if options.mcp == "stdio":  # an HTTP server says them after where it serves
        for line in options.warnings():
            _say(line)
    guard = stdout_guard(options)
    with guard:
        try:
            loaded = load_attr(options.target, like="examples.todo:runtime")
        except TargetError as err:
            fail(str(err))
    if options.tenant_from is not None:
        check_tenant_factory(loaded, options.target)
    cut_by: int | None = None  # the second signal that cut the drain short
    try:
        with contextlib.suppress(KeyboardInterrupt):
            cut_by = anyio.run(_serve, options, loaded, sink, task_store, guard)
    except TargetError as err:
        fail(str(err))
    except MissingExtra as err:
        fail(str(err))
    except OSError as err:
        fail(f"cannot listen on {options.host}:{options.port}: {err.strerror or err}")
    if cut_by is not None:  # answered, audited and closed, but not every call completed
        raise typer.Exit(128 + cut_by)


async def _serve(
    options: ServeOptions,
    loaded: Any,
    sink: AuditSink | None,
    task_store: SqlTaskStore | None,
    guard: StdoutGuard,
) -> int | None:
    async with AsyncExitStack() as stack:
        if task_store is not None:
            await stack.enter_async_context(opened(task_store))
        with guard:
            if options.tenant_from is not None:
                async with serve_tenants(loaded, options) as tenants:
                    prefix = "/{tenant}" if options.tenant_from == "path" else "/"
                    runtimes = OpenRuntimes(tenants)
                    return await serve_http(options, tenants, prefix, runtimes, task_store)
            async with (
                open_runtime(loaded, options.target) as rt,
                audited(rt, sink, options.idempotency_ttl),
            ):
                if options.mcp == "stdio":
                    await serve_stdio(rt, options, guard)
                    return None
                return await serve_http(options, rt, "/", [rt], task_store)


async def serve_http(
    options: ServeOptions,
    served: Any,
    prefix: str,
    runtimes: Sequence[AgentRuntime[Any, Any]],
    task_store: Any = None,
) -> int | None:
    """Serve ``served`` (a runtime or a ``resolve``) over every HTTP adapter ``options`` ask
    for, mounted at ``prefix``, until a signal drains ``runtimes``.

    Returns:
        ``None``, or the number of the second signal that cut the drain short.
    """
    sock = bind_socket(options.host, options.port)
    public = options.public_host
    origin = f"http://{public if ':' not in public else f'[{public}]'}:{sock.getsockname()[1]}"
    # the card of /alice/.well-known/agent-card.json names /alice/a2a/... URLs
    card_base = (options.base_url or origin).rstrip("/") + ("" if prefix == "/" else prefix)
    calls = CallsInFlight(options.caller_limits)
    parts = http_parts(options, base_url=card_base, task_store=task_store, calls=calls)
    apps = [part(served) for part in parts]
    tokens = options.tokens
    gate = None if prefix == "/" or not tokens else foreign_token_gate(token_table(tokens))
    asgi = combine(apps, prefix=prefix, refuse=gate, routes=_tenant_metadata(options, prefix))
    # once every app has started, what start-up allocated is never rescanned
    asgi.router.lifespan_context = frozen_lifespan(asgi.router.lifespan_context)
    deliver = [a.state.deliver_answers for a in apps if hasattr(a.state, "deliver_answers")]

    async def answers_handed_over() -> None:
        # After the drain every call has answered; the MCP and A2A SDKs write
        # those answers on their own tasks, before uvicorn ends their streams.
        for answers in deliver:
            await answers(SHUTDOWN_GRACE)

    _announce(options, origin, origin if prefix == "/" else origin + prefix)
    cut_by = await run_http(
        asgi,
        sock=sock,
        runtimes=runtimes,
        drain_timeout=options.drain_timeout,
        after_drain=answers_handed_over,
        limits=options.connection_limits,
        http=options.parser,
    )
    # every adapter's calls, refused ones too, in words (the MCP fast paths' counts below
    # are for us, in the debug log)
    _say(f"stopped after serving {_count(calls.started, 'call')}")
    for part in apps:
        inline = getattr(part.state, "mcp_inline", None)
        if inline is not None:  # which of MCP's own paths answered: for us, not an operator
            _log.debug(
                "MCP fast paths: %d tools/call answered inline (%d refused by the SDK's "
                "checks), %d tools/list from kept bytes",
                inline.answered,
                inline.refused,
                inline.listed,
            )
    return cut_by


def _tenant_metadata(options: ServeOptions, prefix: str) -> list[BaseRoute]:
    """With tenants on the path and an issuer, each tenant's MCP endpoint is a resource of its
    own: its metadata is served at the well-known path a client builds from its URL."""
    oauth = options.oauth_options()
    if prefix == "/" or oauth is None or options.mcp != "http":
        return []
    from ...adapters.mcp.http import tenant_resource_metadata

    return [tenant_resource_metadata(oauth)]


def _count(n: int, what: str) -> str:
    return f"{n:,} {what}" + ("" if n == 1 else "s")


def _say(line: str) -> None:
    print(line, file=sys.stderr, flush=True)


def _announce(options: ServeOptions, origin: str, at: str) -> None:
    """Where each adapter is served, on standard error (tests and people wait for these)."""
    if options.mcp == "http":
        _say(f"serving MCP at {at}/mcp")
    if options.a2a:
        _say(f"serving A2A at {at}/.well-known/agent-card.json")
    if options.webmcp:
        _say(f"serving the WebMCP page at {origin}/")
    if options.serves_console:
        _say(f"serving the console at {origin}/console")
    if options.issuer_sign_in and options.signs_in:
        _say(f"  people sign in at {options.auth_issuer} to use the page and the console")
    elif options.signs_in:
        _say("  people sign in with a --token to use the page and the console")
    elif options.webmcp or options.console:
        _say("  no --token: no sign-in, so the page and the console answer on loopback only")
    if options.native:
        _say(
            f"serving Agent Native actions at {origin}/native "
            f"(native actions ... --url {origin}/native)"
        )
    if options.ag_ui is not None:
        _say(f"serving AG-UI at {origin}/ag-ui (runs of {options.ag_ui})")
    if options.tenant_from == "path" and not options.bearer:
        _say(UNGUARDED_PATHS)
    for line in options.warnings():
        _say(line)
