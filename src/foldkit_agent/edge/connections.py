"""What one HTTP connection may hold: read timeouts, an idle keep-alive, a cap on connections.

uvicorn closes an idle keep-alive connection (``timeout_keep_alive``) but waits for ever on a
client that opens a connection and never finishes its headers, or stops half-way through its
body, and it takes every connection the kernel hands it. :func:`protocol` returns one of
uvicorn's own HTTP/1.1 protocols (``httptools``, the C parser, where it is installed, else the
pure-Python ``h11``; :func:`fast_http`) with the missing rules added, through uvicorn's extension
point for the HTTP protocol class (``uvicorn.Config(http=...)``). Both parsers get the same
rules, tested on both:

====================  =======  ===========================================================
limit                 default  rule
====================  =======  ===========================================================
``header_timeout``    10 s     a request's headers must arrive whole within this many
                               seconds of the connection opening (or of the first byte
                               after a keep-alive pause); else the connection is closed
``body_timeout``      30 s     a request's body must arrive whole within this many seconds
                               of its headers, however it is paced (a body dripped a byte
                               at a time is closed at the deadline, before anything is
                               dispatched); time when the server itself paused reading
                               (its buffer full) is not counted against the client
``keep_alive``        5 s      an idle connection between requests is closed after this
                               long (uvicorn's ``timeout_keep_alive``)
``max_connections``   1,000    open connections; a new one at the cap closes the connection
                               that has been idle longest (waiting for a request), and is
                               itself closed only when every connection is serving a
                               request
``max_header_bytes``  32 KiB   a request's head: its request line and header fields, each
                               counted as ``name: value`` with its line end; past it the
                               request is answered 431 and the connection closed, whether
                               the head is whole or still arriving (so no more than this
                               and one read of the socket is buffered for it)
``max_headers``       100      header fields in one request; past it the request is
                               answered 431 and the connection closed
====================  =======  ===========================================================

A connection closed by a timeout is closed without an answer (the client sees the connection
end), as nginx does for ``client_header_timeout``. A head over a cap is answered ``431
Request Header Fields Too Large`` (text/plain, ``Connection: close``) and the connection
closed at once, as nginx does; nothing of the rest is read. Both parsers also refuse, with
uvicorn's own ``400 Invalid HTTP request received.``, what one of them let through before
(:func:`head_refusal`): an HTTP/1.1 request without one ``Host``, a request with both
``Content-Length`` and ``Transfer-Encoding``, a ``Transfer-Encoding`` other than ``chunked``,
and a target that is not origin-form (``/path``; ``*`` for ``OPTIONS``), so the authority of
an absolute-form target (``POST http://evil.example/mcp``) never stands in for ``Host``.

:func:`quiet_accept_errors` turns the event loop's report of an ``accept()`` that failed for
lack of resources (``EMFILE``: too many open files) into one log line per ``interval``
instead of a traceback per attempt.

Example::

    config = uvicorn.Config(app, http=protocol(ConnectionLimits(header_timeout=5), "httptools"),
                            timeout_keep_alive=5)
"""

from __future__ import annotations

import asyncio
import importlib.util
import logging
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Final, Literal

__all__ = [
    "DEFAULT_CONNECTION_LIMITS",
    "HEAD_STATUS",
    "HTTP_PARSERS",
    "ConnectionLimits",
    "HttpParser",
    "Refusal",
    "fast_http",
    "head_refusal",
    "head_size",
    "protocol",
    "quiet_accept_errors",
]

_log = logging.getLogger("foldkit_agent.edge")


_MIN_HEAD: Final = 1024  # a request line and a Host field fit, with room to spare


@dataclass(frozen=True, slots=True)
class ConnectionLimits:
    """Timeouts (seconds), the connection cap and the caps on a request's head (bytes,
    fields) of one HTTP server (module docs).

    Raises:
        ValueError: a timeout that is not a positive finite number, ``max_connections`` or
            ``max_headers`` below 1, ``max_header_bytes`` below 1,024.
    """

    header_timeout: float = 10.0
    body_timeout: float = 30.0
    keep_alive: float = 5.0
    max_connections: int = 1000
    max_header_bytes: int = 32 * 1024
    max_headers: int = 100

    def __post_init__(self) -> None:
        for name in ("header_timeout", "body_timeout", "keep_alive"):
            value = getattr(self, name)
            if not 0 < value < float("inf"):
                raise ValueError(f"{name} must be a positive number of seconds, got {value}")
        if self.max_connections < 1:
            raise ValueError(f"max_connections must be at least 1, got {self.max_connections}")
        if self.max_header_bytes < _MIN_HEAD:
            raise ValueError(
                f"max_header_bytes must be at least {_MIN_HEAD}, got {self.max_header_bytes}"
            )
        if self.max_headers < 1:
            raise ValueError(f"max_headers must be at least 1, got {self.max_headers}")


DEFAULT_CONNECTION_LIMITS: Final = ConnectionLimits()

HttpParser = Literal["h11", "httptools"]
"""uvicorn's two HTTP/1.1 protocols: the pure-Python ``h11`` or the C parser ``httptools``."""

HTTP_PARSERS: Final[tuple[HttpParser, ...]] = ("h11", "httptools")


def fast_http() -> HttpParser:
    """``"httptools"`` where it is installed (the ``web`` extra), else ``"h11"``.

    The C parser costs less per request than h11 (docs/benchmarks.md, "per-call costs");
    every limit of :class:`ConnectionLimits` holds on both.

    Example:
        >>> fast_http()
        'httptools'
    """
    return "httptools" if importlib.util.find_spec("httptools") is not None else "h11"


HEAD_STATUS: Final = 431
"""The status of a request whose head is over a cap (431 Request Header Fields Too Large,
RFC 6585 §5)."""

_INVALID = "Invalid HTTP request received."  # uvicorn's own 400, on both parsers

Refusal = tuple[int, str]
"""``(status, text)`` of a request refused before it reaches the application."""


def too_large(limits: ConnectionLimits) -> Refusal:
    """The 431 of a head over ``max_header_bytes``."""
    return HEAD_STATUS, (
        f"The request's headers are larger than the {limits.max_header_bytes}-byte limit; "
        "send fewer or smaller headers."
    )


def too_many(limits: ConnectionLimits) -> Refusal:
    """The 431 of a head with more than ``max_headers`` fields."""
    return HEAD_STATUS, (
        f"The request has more than {limits.max_headers} header fields, the most one request "
        "may carry; send fewer."
    )


def head_size(method: bytes, target: bytes, fields: Sequence[tuple[bytes, bytes]]) -> int:
    """Bytes of a request's head as :class:`ConnectionLimits` counts them: the request line
    (``METHOD target HTTP/1.1`` and its line end), each field as ``name: value`` and its line
    end, and the blank line.

    Example:
        >>> head_size(b"GET", b"/", [(b"host", b"a")])  # GET / HTTP/1.1, host: a, blank line
        27
    """
    return len(method) + len(target) + 12 + sum(len(n) + len(v) + 4 for n, v in fields) + 2


def head_refusal(
    limits: ConnectionLimits,
    method: bytes,
    target: bytes,
    http_version: str,
    fields: Sequence[tuple[bytes, bytes]],
) -> Refusal | None:
    """Why a whole request head is refused before the application sees it, else ``None``.

    ``fields`` are ``(lower-case name, value)``. 431 past ``max_headers`` fields or
    ``max_header_bytes`` (:func:`head_size`); 400 (uvicorn's words) for what h11 refuses and
    httptools did not (a ``Host`` missing from an HTTP/1.1 request, or more than one), what
    httptools refuses and h11 did not (``Content-Length`` with ``Transfer-Encoding``), a
    ``Transfer-Encoding`` other than one ``chunked`` (h11 refuses it; httptools read
    ``gzip, chunked`` as chunked) and a target that is not origin-form (``*`` only for
    ``OPTIONS``): httptools served ``POST http://evil.example/mcp`` as ``/mcp`` with the
    authority unchecked, h11 as a path nothing serves.

    Example:
        >>> head_refusal(ConnectionLimits(), b"GET", b"/", "1.1", [(b"host", b"a")]) is None
        True
        >>> head_refusal(ConnectionLimits(), b"GET", b"/", "1.1", [])
        (400, 'Invalid HTTP request received.')
    """
    if len(fields) > limits.max_headers:
        return too_many(limits)
    if head_size(method, target, fields) > limits.max_header_bytes:
        return too_large(limits)
    hosts = lengths = 0
    encodings: list[bytes] = []
    for name, value in fields:
        if name == b"host":
            hosts += 1
        elif name == b"content-length":
            lengths += 1
        elif name == b"transfer-encoding":
            encodings.append(value.strip().lower())
    if hosts > 1 or (hosts == 0 and http_version == "1.1"):
        return 400, _INVALID
    if encodings and (lengths or encodings != [b"chunked"]):
        return 400, _INVALID
    if not (target.startswith(b"/") or (target == b"*" and method == b"OPTIONS")):
        return 400, _INVALID
    return None


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
    from ._uvicorn import limited_protocol  # uvicorn is the ``web`` extra

    return limited_protocol(limits, http)


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
