"""Every part of uvicorn (0.54) and of its HTTP/1.1 parsers (``h11``, ``httptools``) that
foldkit-agent reaches beyond their public API, in one place.

The connection limits (:mod:`.connections`) need hooks into uvicorn's protocol classes and
the parsers' state, and the draining server (:mod:`.serving`) needs uvicorn's signal
handling; neither has a public extension point. ``tests/edge/test_uvicorn.py`` fails when an
upgrade moves any of it; nothing else in :mod:`foldkit_agent` reads uvicorn's or a parser's
protocol objects.
"""

from __future__ import annotations

import asyncio
import contextlib
import signal
import threading
import time
from collections.abc import Callable, Generator, Sequence
from types import FrameType
from typing import Any, Literal, cast

from .connections import (
    HEAD_STATUS,
    ConnectionLimits,
    HttpParser,
    Refusal,
    head_refusal,
    too_large,
    too_many,
)

__all__ = ["limited_protocol", "signalled_server", "stop"]

_PHRASES = {400: "Bad Request", 431: "Request Header Fields Too Large"}
SIGNALS = (signal.SIGINT, signal.SIGTERM)


def _answer(status: int, text: str, default_headers: Sequence[tuple[bytes, bytes]]) -> bytes:
    body = text.encode()
    lines = [f"HTTP/1.1 {status} {_PHRASES[status]}".encode()]
    lines += [name + b": " + value for name, value in default_headers]
    lines += [
        b"content-type: text/plain; charset=utf-8",
        b"content-length: " + str(len(body)).encode(),
        b"connection: close",
    ]
    return b"\r\n".join(lines) + b"\r\n\r\n" + body


class _Refused(Exception):
    """Raised from an httptools callback to stop the parser (it raises
    ``HttpParserCallbackError``, which uvicorn answers through ``send_400_response``)."""


def limited_protocol(limits: ConnectionLimits, http: HttpParser) -> type[asyncio.Protocol]:
    """uvicorn's ``h11`` or ``httptools`` protocol class with ``limits`` applied
    (:func:`.connections.protocol`).

    Reaches: ``H11Protocol`` and ``HttpToolsProtocol`` (``uvicorn.protocols.http``), their
    ``cycle`` (``response_complete``, ``more_body``), ``flow.read_paused``, ``transport``,
    ``loop``, ``connections``, ``server_state.default_headers``, ``headers``, ``url``,
    ``parser``, the hooks ``connection_made``, ``connection_lost``, ``data_received``,
    ``on_response_complete``, ``send_400_response`` and httptools' ``on_message_begin``,
    ``on_url``, ``on_header``, ``on_headers_complete``, ``on_message_complete``; h11's
    ``Connection`` (``their_state``, ``next_event``, ``max_incomplete_event_size``) and
    ``RemoteProtocolError.error_status_hint``.
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
            self.refusal: Refusal | None = None  # why the head being read is refused

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

        # -- a refused head ----------------------------------------------------------------

        def refuse(self, refusal: Refusal) -> None:
            """Answer ``refusal`` and close at once (an answer already under way for an
            earlier pipelined request is not cut into: the connection just closes)."""
            self.disarm()
            if self.transport.is_closing():
                return
            if not self.serving():
                status, text = refusal
                defaults = self.server_state.default_headers
                self.transport.write(_answer(status, text, defaults))
            self.transport.close()

        def send_400_response(self, msg: str) -> None:
            refusal, self.refusal = self.refusal, None
            if refusal is None:
                super().send_400_response(msg)
            else:
                self.refuse(refusal)

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

    limited: type[LimitedProtocol]
    if http == "h11":
        import h11

        class CheckedH11(h11.Connection):
            """h11's server side, its buffer for an unfinished head capped at
            ``max_header_bytes`` and every whole head checked (:func:`head_refusal`)."""

            def __init__(self, refused: Callable[[Refusal], None]) -> None:
                super().__init__(h11.SERVER, max_incomplete_event_size=limits.max_header_bytes)
                self.refused = refused

            def next_event(self) -> Any:
                waiting = self.their_state is h11.IDLE  # the next bytes are a request's head
                try:
                    event = super().next_event()
                except h11.RemoteProtocolError as exc:
                    if waiting and exc.error_status_hint == HEAD_STATUS:  # h11's buffer cap
                        self.refused(too_large(limits))
                    raise
                if isinstance(event, h11.Request):
                    fields = [(name.lower(), value) for name, value in event.headers]
                    version = event.http_version.decode("ascii")
                    refusal = head_refusal(limits, event.method, event.target, version, fields)
                    if refusal is not None:
                        self.refused(refusal)
                        raise h11.RemoteProtocolError(refusal[1], error_status_hint=refusal[0])
                return event

        class LimitedH11(LimitedProtocol):
            def __init__(self, *args: Any, **kwargs: Any) -> None:
                super().__init__(*args, **kwargs)
                self.conn = CheckedH11(self.refused)

            def refused(self, refusal: Refusal) -> None:
                self.refusal = refusal

        limited = LimitedH11
    else:

        class LimitedHttpTools(LimitedProtocol):
            """httptools hands a field over only once it is whole, and keeps the one in
            progress itself: the whole fields are counted as they come (``on_url``,
            ``on_header``), the bytes of an unfinished head after each read."""

            def __init__(self, *args: Any, **kwargs: Any) -> None:
                super().__init__(*args, **kwargs)
                self.head: Literal["idle", "head", "body"] = "idle"  # the parser's place
                self.heads = 0  # heads begun on this connection
                self.head_bytes = 0  # bytes read while this head was unfinished
                self.head_counted = 0  # head_size of its whole parts so far

            def stop(self, refusal: Refusal) -> None:
                self.refusal = refusal
                raise _Refused(refusal[1])

            def on_message_begin(self) -> None:
                cast(Any, super()).on_message_begin()
                self.head, self.heads = "head", self.heads + 1
                self.head_bytes = self.head_counted = 0

            def on_url(self, url: bytes) -> None:
                cast(Any, super()).on_url(url)
                self.head_counted += len(url)
                if self.head_counted > limits.max_header_bytes:
                    self.stop(too_large(limits))

            def on_header(self, name: bytes, value: bytes) -> None:
                cast(Any, super()).on_header(name, value)
                self.head_counted += len(name) + len(value) + 4
                if len(self.headers) > limits.max_headers:
                    self.stop(too_many(limits))
                if self.head_counted > limits.max_header_bytes:
                    self.stop(too_large(limits))

            def on_headers_complete(self) -> None:
                self.head = "body"
                tools: Any = self  # httptools' own state: its parser, the target so far
                version = tools.parser.get_http_version()
                method = tools.parser.get_method()
                refusal = head_refusal(limits, method, tools.url, version, self.headers)
                if refusal is not None:
                    self.stop(refusal)
                cast(Any, super()).on_headers_complete()

            def on_message_complete(self) -> None:
                self.head = "idle"
                cast(Any, super()).on_message_complete()

            def data_received(self, data: bytes) -> None:
                before, heads = self.head, self.heads
                super().data_received(data)
                if self.head != "head" or self.transport.is_closing():
                    return
                # Counted only when this read began the head or went on with it (a head begun
                # after an earlier request's end in the same read starts at the next read).
                if (before, self.heads) in (("head", heads), ("idle", heads + 1)):
                    self.head_bytes += len(data)
                    if self.head_bytes > limits.max_header_bytes:
                        self.refuse(too_large(limits))

        limited = LimitedHttpTools

    limited.__name__ = limited.__qualname__ = f"Limited{base.__name__}"
    return limited


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


OnSignal = Callable[[int, int], None]
"""``(signal number, how many signals so far)``, called on the server's event loop."""


def signalled_server(config: Any, on_signal: OnSignal) -> Any:
    """A ``uvicorn.Server`` for ``config`` whose SIGINT and SIGTERM call ``on_signal`` on its
    event loop instead of uvicorn's handler (which stops serving at once and re-raises the
    signal when ``serve()`` returns); a third signal still stops at once (uvicorn's forced
    exit). Outside the main thread no handler is installed, as uvicorn does.

    Reaches: ``uvicorn.Server.capture_signals`` and ``handle_exit`` (overridden),
    ``should_exit`` and ``force_exit``.
    """
    import uvicorn

    class SignalledServer(uvicorn.Server):
        loop: asyncio.AbstractEventLoop | None = None
        signals = 0

        @contextlib.contextmanager
        def capture_signals(self) -> Generator[None]:
            if threading.current_thread() is not threading.main_thread():
                yield
                return
            saved = {sig: signal.signal(sig, self.handle_exit) for sig in SIGNALS}
            try:
                yield
            finally:
                for sig, handler in saved.items():
                    signal.signal(sig, handler)

        def handle_exit(self, sig: int, frame: FrameType | None) -> None:
            self.signals += 1
            if self.loop is None or self.signals > 2:
                self.should_exit = True
                self.force_exit = True
                return
            self.loop.call_soon_threadsafe(on_signal, sig, self.signals)

        async def serve(self, sockets: list[Any] | None = None) -> None:
            self.loop = asyncio.get_running_loop()
            await super().serve(sockets=sockets)

    return SignalledServer(config)


def stop(server: Any) -> None:
    """Tell a ``uvicorn.Server`` to shut down as a signal does (connections closed, lifespans
    left)."""
    server.should_exit = True
