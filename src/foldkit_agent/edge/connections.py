"""What one HTTP connection may hold: read timeouts, an idle keep-alive, a cap on connections.

uvicorn closes an idle keep-alive connection (``timeout_keep_alive``) but waits for ever on a
client that opens a connection and never finishes its headers, or stops half-way through its
body, and it takes every connection the kernel hands it. :func:`protocol` returns one of
uvicorn's own HTTP/1.1 protocols (``httptools``, the C parser, where it is installed, else the
pure-Python ``h11``; :func:`fast_http`) with the missing rules added, through uvicorn's extension
point for the HTTP protocol class (``uvicorn.Config(http=...)``). Both parsers get the same
rules, tested on both:

==================  =======  =============================================================
limit               default  rule
==================  =======  =============================================================
``header_timeout``  10 s     a request's headers must arrive whole within this many
                             seconds of the connection opening (or of the first byte after
                             a keep-alive pause); else the connection is closed
``body_timeout``    30 s     a request's body must arrive whole within this many seconds
                             of its headers, however it is paced (a body dripped a byte at
                             a time is closed at the deadline, before anything is
                             dispatched); time when the server itself paused reading (its
                             buffer full) is not counted against the client
``keep_alive``      5 s      an idle connection between requests is closed after this long
                             (uvicorn's ``timeout_keep_alive``)
``max_connections`` 1,000    open connections; a new one at the cap closes the connection
                             that has been idle longest (waiting for a request), and is
                             itself closed only when every connection is serving a request
==================  =======  =============================================================

A connection closed by a timeout is closed without an answer (the client sees the connection
end), as nginx does for ``client_header_timeout``. :func:`quiet_accept_errors` turns the
event loop's report of an ``accept()`` that failed for lack of resources (``EMFILE``: too
many open files) into one log line per ``interval`` instead of a traceback per attempt.

Example::

    config = uvicorn.Config(app, http=protocol(ConnectionLimits(header_timeout=5), "httptools"),
                            timeout_keep_alive=5)
"""

from __future__ import annotations

import asyncio
import importlib.util
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Final, Literal, cast

__all__ = [
    "DEFAULT_CONNECTION_LIMITS",
    "HTTP_PARSERS",
    "ConnectionLimits",
    "HttpParser",
    "fast_http",
    "protocol",
    "quiet_accept_errors",
]

_log = logging.getLogger("foldkit_agent.edge")


@dataclass(frozen=True, slots=True)
class ConnectionLimits:
    """Timeouts (seconds) and the connection cap of one HTTP server (module docs).

    Raises:
        ValueError: a timeout that is not a positive finite number, or ``max_connections``
            below 1.
    """

    header_timeout: float = 10.0
    body_timeout: float = 30.0
    keep_alive: float = 5.0
    max_connections: int = 1000

    def __post_init__(self) -> None:
        for name in ("header_timeout", "body_timeout", "keep_alive"):
            value = getattr(self, name)
            if not 0 < value < float("inf"):
                raise ValueError(f"{name} must be a positive number of seconds, got {value}")
        if self.max_connections < 1:
            raise ValueError(f"max_connections must be at least 1, got {self.max_connections}")


DEFAULT_CONNECTION_LIMITS: Final = ConnectionLimits()

HttpParser = Literal["h11", "httptools"]
"""uvicorn's two HTTP/1.1 protocols: the pure-Python ``h11`` or the C parser ``httptools``."""

HTTP_PARSERS: Final[tuple[HttpParser, ...]] = ("h11", "httptools")


def fast_http() -> HttpParser:
    """``"httptools"`` where it is installed (the ``web`` extra), else ``"h11"``.

    The C parser costs less per request than h11 (docs/benchmarks.md, "#20 per-call costs");
    every limit of :class:`ConnectionLimits` holds on both.

    Example:
        >>> fast_http()
        'httptools'
    """
    return "httptools" if importlib.util.find_spec("httptools") is not None else "h11"


def protocol(
    limits: ConnectionLimits = DEFAULT_CONNECTION_LIMITS, http: HttpParser = "h11"
) -> type[asyncio.Protocol]:
    """uvicorn's ``http`` protocol class with ``limits`` applied (pass it as
    ``Config(http=...)``).

    ``keep_alive`` is uvicorn's own ``timeout_keep_alive``: set that to the same value.

    Raises:
        ValueError: ``http`` is neither ``"h11"`` nor ``"httptools"``.
        ModuleNotFoundError: that parser is not installed.
    """
    from uvicorn.protocols.http.h11_impl import H11Protocol  # the ``web`` extra

    # Both classes keep the same state under the same names (``cycle`` with
    # ``response_complete`` and ``more_body``, ``flow.read_paused``, ``transport``, ``loop``,
    # ``connections``) and call the same hooks, so the rules below are typed against h11's;
    # tests/cli/test_serve_connections.py runs every limit on both.
    base: type[H11Protocol]
    if http == "h11":
        base = H11Protocol
    elif http == "httptools":
        from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

        base = cast("type[H11Protocol]", HttpToolsProtocol)
    else:
        raise ValueError(f"http takes 'h11' or 'httptools', got {http!r}")

    class LimitedProtocol(base):
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)
            self.read_timer: asyncio.TimerHandle | None = None
            self.body_of: object = None  # the request whose body deadline is armed
            self.idle_since = time.monotonic()

        # -- the states --------------------------------------------------------------------

        def serving(self) -> bool:
            """A request is in progress (its headers arrived, its answer is not complete)."""
            cycle: Any = self.cycle  # None until the first request's headers arrive
            return cycle is not None and not cycle.response_complete

        def reading_body(self) -> bool:
            return self.serving() and self.cycle.more_body

        def arm(self, seconds: float) -> None:
            self.disarm()
            self.read_timer = self.loop.call_later(seconds, self.read_timed_out)

        def disarm(self) -> None:
            if self.read_timer is not None:
                self.read_timer.cancel()
                self.read_timer = None

        def read_timed_out(self) -> None:
            self.read_timer = None
            if self.reading_body() and self.flow.read_paused:
                self.arm(limits.body_timeout)  # we paused reading: the client is not to blame
                return
            if self.serving() and not self.reading_body():
                return  # the request is being answered: not a read any more
            if not self.transport.is_closing():
                self.transport.close()

        # -- uvicorn's hooks ---------------------------------------------------------------

        def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
            if len(self.connections) >= limits.max_connections and not _make_room(self.connections):
                transport.close()  # every connection is serving a request
                return
            super().connection_made(transport)
            self.idle_since = time.monotonic()
            self.arm(limits.header_timeout)

        def connection_lost(self, exc: Exception | None) -> None:
            self.disarm()
            if self.transport is None:  # type: ignore[comparison-overlap]
                return  # refused at the cap before uvicorn saw it
            super().connection_lost(exc)

        def data_received(self, data: bytes) -> None:
            waiting = not self.serving()
            super().data_received(data)
            if self.transport.is_closing():
                self.disarm()
            elif self.reading_body():
                if self.body_of is not self.cycle:  # its headers just arrived: one deadline
                    self.body_of = self.cycle
                    self.arm(limits.body_timeout)
            elif self.serving():
                self.disarm()
            elif waiting and self.read_timer is None:
                self.arm(limits.header_timeout)  # the first byte of the next request

        def on_response_complete(self) -> None:
            self.disarm()
            self.idle_since = time.monotonic()
            super().on_response_complete()

    LimitedProtocol.__name__ = LimitedProtocol.__qualname__ = f"Limited{base.__name__}"
    return LimitedProtocol


def _make_room(connections: set[Any]) -> bool:
    """Close the connection idle longest (not serving a request); ``False`` if none is."""
    idle = [
        c
        for c in connections
        if hasattr(c, "idle_since")
        and not c.serving()
        and c.transport is not None
        and not c.transport.is_closing()
    ]
    if not idle:
        return False
    oldest = min(idle, key=lambda c: c.idle_since)
    oldest.disarm()
    oldest.transport.close()
    return True


_ACCEPT_FAILED = "socket.accept() out of system resource"


def _stale_retry(context: dict[str, Any]) -> bool:
    """A retry of a failed accept that fired after the listening socket was closed.

    asyncio schedules one retry per failed ``accept()`` (up to the backlog in one go); those
    still pending when the server shuts down each raise on the closed socket.
    """
    exc = context.get("exception")
    return isinstance(exc, ValueError) and "_start_serving" in repr(context.get("handle"))


def quiet_accept_errors(
    loop: asyncio.AbstractEventLoop, interval: float = 10.0
) -> Callable[[], None]:
    """Log a failed ``accept()`` (``EMFILE`` and the like) as one line per ``interval`` seconds.

    asyncio (3.11) reports each failed accept with a traceback, tries again up to the backlog
    in the same go, and schedules a retry for each failure; under a flood of connections that
    is thousands of tracebacks a second, and one more for each retry still pending when the
    server shuts down. Those retries are dropped silently; other reports go to the handler
    that was there before.

    Returns:
        a function that puts the previous handler back.
    """
    previous = loop.get_exception_handler()
    last = -float("inf")
    missed = 0

    def handler(loop_: asyncio.AbstractEventLoop, context: dict[str, Any]) -> None:
        nonlocal last, missed
        if _stale_retry(context):
            return
        if context.get("message") != _ACCEPT_FAILED:
            if previous is not None:
                previous(loop_, context)
            else:
                loop_.default_exception_handler(context)
            return
        now = time.monotonic()
        if now - last < interval:
            missed += 1
            return
        exc = context.get("exception")
        reason = getattr(exc, "strerror", None) or type(exc).__name__
        again = f" ({missed} more since the last report)" if missed else ""
        _log.warning("cannot accept new connections: %s; retrying every second%s", reason, again)
        last, missed = now, 0

    loop.set_exception_handler(handler)

    def restore() -> None:
        loop.set_exception_handler(previous)

    return restore
