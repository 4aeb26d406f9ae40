"""``foldkit-agent serve MODULE:ATTR``: serve a bound runtime over the adapters asked for.

``ATTR`` is an :class:`~foldkit_agent.runtime.AgentRuntime`, or a zero-argument callable
returning an async context manager that yields one (``examples.todo:runtime``); the context
manager runs the application for as long as the server runs.

Over HTTP every adapter contributes one Starlette app; :func:`combine` joins them into one
server (requests go to the first app with a matching route) and runs all their lifespans.
Adapters are registered in :data:`HTTP_PARTS`-style lists built by :func:`http_parts`, so
adding one (A2A, WebMCP) is one more entry there and one more option on the command.
"""

from __future__ import annotations

import asyncio
import contextlib
import sys
from collections.abc import AsyncGenerator, Awaitable, Callable, Sequence
from contextlib import AsyncExitStack, asynccontextmanager
from typing import Any, cast

import anyio
import typer
from starlette.applications import Starlette
from starlette.responses import PlainTextResponse
from starlette.routing import Match, Mount
from starlette.types import Receive, Scope, Send

from .. import __version__
from ..runtime import AgentRuntime
from . import app
from .loading import TargetError, load_attr

__all__ = ["HttpPart", "combine", "http_parts", "open_runtime", "run_http", "serve"]

HttpPart = Callable[[AgentRuntime[Any, Any]], Starlette]
"""Builds one adapter's Starlette app for a runtime (``host`` is bound by :func:`http_parts`)."""


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
    if not callable(target):
        raise TargetError(f"{reference} is neither an AgentRuntime nor a callable returning one")
    try:
        made: Any = target()
    except TypeError as exc:
        raise TargetError(f"{reference} must be callable with no arguments") from exc
    if hasattr(made, "__aenter__") and hasattr(made, "__aexit__"):
        async with made as rt:
            if not isinstance(rt, AgentRuntime):
                raise TargetError(f"{reference}() yielded {type(rt).__name__}, not an AgentRuntime")  # pyright: ignore[reportUnknownArgumentType]
            yield cast("AgentRuntime[Any, Any]", rt)
        return
    if isinstance(made, Awaitable):
        made = await cast("Awaitable[Any]", made)
    if not isinstance(made, AgentRuntime):
        raise TargetError(
            f"{reference}() must return an AgentRuntime or an async context manager yielding one"
        )
    yield cast("AgentRuntime[Any, Any]", made)


def combine(apps: Sequence[Starlette]) -> Starlette:
    """One Starlette app serving several adapters' apps and running all their lifespans.

    A request goes to the first app that has a route matching it (each keeps its own
    middleware, e.g. the MCP app's bearer auth); anything else is a 404. Lifespans are entered
    in order and left in reverse.

    Args:
        apps: at least one Starlette app.

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

    return Starlette(routes=[Mount("/", app=dispatch)], lifespan=lifespan)


def http_parts(*, mcp: bool, name: str, host: str) -> list[HttpPart]:
    """The HTTP adapters the command line asked for, in mounting order.

    Add new adapters here (each a function ``runtime -> Starlette``).
    """
    parts: list[HttpPart] = []
    if mcp:
        from ..adapters.mcp import http_app

        def mcp_part(rt: AgentRuntime[Any, Any]) -> Starlette:
            return http_app(rt, name=name, version=__version__, host=host)

        parts.append(mcp_part)
    return parts


async def run_http(
    asgi: Starlette,
    *,
    host: str,
    port: int,
    on_ready: Callable[[int], None] | None = None,
) -> None:
    """Serve ``asgi`` with uvicorn on this event loop until cancelled or interrupted.

    ``on_ready(port)`` is called once the socket listens (``port=0`` picks a free one).
    """
    import uvicorn

    config = uvicorn.Config(
        asgi,
        host=host,
        port=port,
        log_level="warning",
        lifespan="on",
        timeout_graceful_shutdown=2,
    )
    server = uvicorn.Server(config)

    async def announce() -> None:
        while not server.started:
            if server.should_exit:
                return
            await anyio.sleep(0.01)
        bound = port
        for srv in getattr(server, "servers", []):
            for sock in srv.sockets:
                bound = sock.getsockname()[1]
                break
        if on_ready is not None:
            on_ready(bound)

    async with anyio.create_task_group() as tg:
        tg.start_soon(announce)
        serving = asyncio.ensure_future(server.serve())
        try:
            await asyncio.shield(serving)
        except asyncio.CancelledError:
            # Shut down the way Ctrl-C does (lifespans exit cleanly), then keep cancelling.
            server.should_exit = True
            with anyio.CancelScope(shield=True):
                await asyncio.wait({serving}, timeout=10)
            raise
        finally:
            tg.cancel_scope.cancel()


def _fail(message: str) -> typer.Exit:
    print(f"foldkit-agent: {message}", file=sys.stderr)
    return typer.Exit(2)


@app.command()
def serve(
    target: str = typer.Argument(..., help="MODULE:ATTR naming a runtime or a runtime factory"),
    mcp: str | None = typer.Option(
        None, "--mcp", help="Serve MCP over 'stdio' or streamable 'http'"
    ),
    host: str = typer.Option("127.0.0.1", help="HTTP host (loopback by default)"),
    port: int = typer.Option(8000, help="HTTP port (0 picks a free one)"),
    name: str | None = typer.Option(None, help="Server name shown to clients (default: MODULE)"),
) -> None:
    """Serve an application's agent contract (MCP over stdio or streamable HTTP)."""
    try:
        loaded = load_attr(target)
    except TargetError as err:
        raise _fail(str(err)) from None
    server_name = name or target.partition(":")[0]
    if mcp not in ("stdio", "http"):
        raise _fail("choose an adapter: --mcp stdio or --mcp http")

    async def main() -> None:
        async with open_runtime(loaded, target) as rt:
            if mcp == "stdio":
                from ..adapters.mcp import serve_stdio

                await serve_stdio(rt, name=server_name, version=__version__)
                return
            parts = http_parts(mcp=mcp == "http", name=server_name, host=host)
            asgi = combine([part(rt) for part in parts])

            def ready(bound: int) -> None:
                print(f"serving MCP at http://{host}:{bound}/mcp", file=sys.stderr, flush=True)

            await run_http(asgi, host=host, port=port, on_ready=ready)

    try:
        with contextlib.suppress(KeyboardInterrupt):
            anyio.run(main)
    except TargetError as err:
        raise _fail(str(err)) from None
