"""Serving an ASGI app with uvicorn on this event loop, and stopping it by a drain.

:func:`bind_socket` binds before anything is built, so URLs that name the port are right and
early connections wait in the backlog; :func:`run_http` serves until cancelled or signalled,
draining the runtimes behind the app on SIGTERM/SIGINT (:mod:`foldkit_agent.edge.serving`).
"""

from __future__ import annotations

import asyncio
import socket
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

import anyio
from starlette.applications import Starlette

from ...edge.connections import (
    DEFAULT_CONNECTION_LIMITS,
    ConnectionLimits,
    HttpParser,
    fast_http,
    protocol,
    quiet_accept_errors,
)
from ...runtime.bound import AgentRuntime

__all__ = ["bind_socket", "run_http"]


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

    from ...edge.serving import draining_server

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
