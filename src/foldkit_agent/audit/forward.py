"""Handing entries to a sink: the background thread, batching, and "answered means audited".

:class:`SinkForwarding` is the part of :class:`~foldkit_agent.audit.AuditLog` that forwards
entries to its sink. The log hands entries to the sink on a background thread, in batches,
behind a bounded buffer: recording never waits for the sink, so a sink that raises or blocks
never fails or delays a dispatch. What went wrong is counted on the log.

With a durable sink, :meth:`~foldkit_agent.audit.AuditLog.note` hands back an
:class:`AuditTicket` and the runtime releases the answer only after
:meth:`SinkForwarding.committed` says the entry is stored. Whatever is pending when the sink
takes a batch goes in that batch, so concurrent invocations share one transaction (group
commit).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import threading
from collections import deque
from typing import Literal, Protocol, runtime_checkable

from .entry import AuditEntry

__all__ = ["AuditSink", "AuditSinkError", "AuditTicket", "SinkForwarding", "should_log"]

_log = logging.getLogger("foldkit_agent.audit")


@runtime_checkable
class AuditSink(Protocol):
    """Anything that accepts batches of entries.

    ``write`` runs on the audit log's own thread, never the caller's, and may block or raise:
    the log counts that and carries on. An optional ``close()`` is called by
    :meth:`AuditLog.close` on that same thread, after the last batch. A sink whose ``durable``
    attribute is ``True`` promises that ``write`` returns only once the batch is stored; the
    log then holds each invocation's answer until its batch was written (see
    :meth:`AuditLog.committed`).
    """

    def write(self, entries: list[AuditEntry], /) -> None: ...


class AuditSinkError(RuntimeError):
    """A durable sink could not store or read entries (closed, or the storage failed)."""


_PENDING, _COMMITTED, _FAILED, _DROPPED = "pending", "committed", "failed", "dropped"
TicketState = Literal["pending", "committed", "failed", "dropped"]


class AuditTicket:
    """One entry on its way to a durable sink; :meth:`AuditLog.note` returns it.

    Attributes:
        invocation_id: the entry's invocation.
        capability: the entry's capability name.
        state: ``"pending"`` (not written yet), ``"committed"`` (the sink stored it),
            ``"failed"`` (its batch raised in the sink) or ``"dropped"`` (never handed to the
            sink: the log was closed, or ``sink_queue`` entries were already waiting).
    """

    __slots__ = ("_waiter", "capability", "invocation_id", "state")

    def __init__(self, entry: AuditEntry, state: TicketState = _PENDING) -> None:
        self.invocation_id: str = entry.invocation_id
        self.capability: str = entry.capability
        self.state: TicketState = state
        self._waiter: tuple[asyncio.AbstractEventLoop, asyncio.Future[None]] | None = None

    def __repr__(self) -> str:
        return f"AuditTicket({self.invocation_id!r}, {self.state!r})"


def _settle(futures: list[asyncio.Future[None]]) -> None:
    for fut in futures:
        if not fut.done():
            fut.set_result(None)


def _wake(waiters: list[tuple[asyncio.AbstractEventLoop, asyncio.Future[None]]]) -> None:
    """Resolve futures from the audit thread: one wake-up per event loop per batch."""
    by_loop: dict[asyncio.AbstractEventLoop, list[asyncio.Future[None]]] = {}
    for loop, fut in waiters:
        by_loop.setdefault(loop, []).append(fut)
    for loop, futures in by_loop.items():
        with contextlib.suppress(RuntimeError):  # a closed loop: nobody waits any more
            loop.call_soon_threadsafe(_settle, futures)


class SinkForwarding:
    """The sink side of the audit log: the pending buffer, its thread and the counters.

    Attributes: see :class:`~foldkit_agent.audit.AuditLog` (``sink_written``,
    ``sink_failures``, ``sink_failed_entries``, ``sink_dropped``, ``last_sink_error``,
    ``durable``, ``commit_timeout``, ``unconfirmed``).
    """

    sink_written: int
    sink_failures: int
    sink_failed_entries: int
    sink_dropped: int
    last_sink_error: str | None
    durable: bool
    commit_timeout: float
    unconfirmed: int
    _sink: AuditSink | None
    _sink_queue: int
    _sink_batch: int
    _sink_linger: float
    _tickets: deque[AuditTicket]
    _cond: threading.Condition
    _pending: deque[AuditEntry]
    _accepted: int
    _handled: int
    _flushing: int
    _closing: bool
    _thread: threading.Thread | None

    def _start_forwarding(
        self, sink_queue: int, sink_batch: int, sink_linger: float, commit_timeout: float
    ) -> None:
        self.sink_written = 0
        self.sink_failures = 0
        self.sink_failed_entries = 0
        self.sink_dropped = 0
        self.last_sink_error = None
        self._sink = None
        self._sink_queue = sink_queue
        self._sink_batch = sink_batch
        self.durable = False
        self.commit_timeout = commit_timeout
        self.unconfirmed = 0
        self._sink_linger = max(0.0, sink_linger)
        self._tickets = deque()  # durable: one per entry in _pending
        self._cond = threading.Condition(threading.Lock())  # everything above and below
        self._pending = deque()
        self._accepted = 0  # entries put in _pending, ever
        self._handled = 0  # entries taken out of _pending and written (or failed), ever
        self._flushing = 0  # flush() callers waiting: the pump skips its linger
        self._closing = False
        self._thread = None

    def _forward(self, entry: AuditEntry) -> AuditTicket | None:
        ticket: AuditTicket | None = None
        with self._cond:
            if self._closing or len(self._pending) >= self._sink_queue:
                self.sink_dropped += 1
                return AuditTicket(entry, _DROPPED) if self.durable else None
            self._pending.append(entry)
            if self.durable:
                ticket = AuditTicket(entry)
                self._tickets.append(ticket)
            self._accepted += 1
            if self._thread is None:
                self._thread = threading.Thread(
                    target=self._pump, name="foldkit-agent-audit", daemon=True
                )
                self._thread.start()
            elif len(self._pending) == 1 or len(self._pending) >= self._sink_batch:
                self._cond.notify_all()
        return ticket

    def _pump(self) -> None:
        sink = self._sink
        assert sink is not None
        cond = self._cond
        while True:
            with cond:
                while not self._pending and not self._closing:
                    cond.wait()
                # Linger briefly so that a burst becomes one batch (fewer thread switches
                # while the event loop is busy); flush() and close() cut the wait short.
                if self._sink_linger and len(self._pending) < self._sink_batch:
                    cond.wait_for(
                        lambda: (
                            self._closing
                            or self._flushing > 0
                            or len(self._pending) >= self._sink_batch
                        ),
                        self._sink_linger,
                    )
                if not self._pending and self._closing:
                    break
                n = min(len(self._pending), self._sink_batch)
                batch = [self._pending.popleft() for _ in range(n)]
            failed: str | None = None
            try:
                sink.write(batch)
            except BaseException as exc:  # a sink must never take the pump down
                failed = f"{type(exc).__name__}: {exc}"[:500]
            waiters: list[tuple[asyncio.AbstractEventLoop, asyncio.Future[None]]] = []
            with cond:
                if failed is None:
                    self.sink_written += len(batch)
                else:
                    self.sink_failures += 1
                    self.sink_failed_entries += len(batch)
                    self.last_sink_error = failed
                self._handled += len(batch)
                if self.durable:
                    state: TicketState = _COMMITTED if failed is None else _FAILED
                    for _ in range(len(batch)):
                        ticket = self._tickets.popleft()
                        ticket.state = state
                        if ticket._waiter is not None:  # pyright: ignore[reportPrivateUsage]
                            waiters.append(ticket._waiter)  # pyright: ignore[reportPrivateUsage]
                cond.notify_all()
            if waiters:
                _wake(waiters)
            if failed is not None and should_log(self.sink_failures):
                _log.warning(
                    "audit sink %s failed to write %d entries (%d failures so far): %s",
                    type(sink).__name__,
                    len(batch),
                    self.sink_failures,
                    failed,
                )
        self._close_sink()

    def _close_sink(self) -> None:
        closer = getattr(self._sink, "close", None)
        if not callable(closer):
            return
        try:
            closer()
        except Exception as exc:
            with self._cond:
                self.sink_failures += 1
                self.last_sink_error = f"{type(exc).__name__}: {exc}"[:500]
            _log.warning("audit sink %s failed to close: %s", type(self._sink).__name__, exc)

    # -- answered means audited ----------------------------------------------------------------

    async def committed(self, ticket: AuditTicket) -> bool:
        """Wait until the entry behind ``ticket`` is stored by the durable sink.

        Waits at most :attr:`commit_timeout` seconds. Cancelling the awaiting task stops the
        wait (the entry stays queued and is still written).

        Returns:
            ``True`` once the sink committed the entry. ``False`` when its batch failed, it
            was dropped, or the timeout passed: then the miss is counted in
            :attr:`unconfirmed` and logged at ERROR with the invocation id, and the caller
            should release the answer anyway (the runtime does).

        Example:
            >>> ticket = audit.note(...)
            >>> if ticket is not None and not await audit.committed(ticket):
            ...     ...  # answered, but not audited: the log names the invocation
        """
        state = ticket.state
        if state == _PENDING:
            loop = asyncio.get_running_loop()
            fut: asyncio.Future[None] = loop.create_future()
            with self._cond:
                state = ticket.state
                if state == _PENDING:
                    ticket._waiter = (loop, fut)  # pyright: ignore[reportPrivateUsage]
            if state == _PENDING:
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(fut, self.commit_timeout)
                state = ticket.state
        if state == _COMMITTED:
            return True
        with self._cond:
            self.unconfirmed += 1
            why = {
                _FAILED: f"the sink failed ({self.last_sink_error})",
                _DROPPED: "it was dropped (the log was closed or its sink_queue was full)",
            }.get(state, f"the sink did not store it within {self.commit_timeout}s")
        _log.error(  # %r and a cut: both may be text from the wire
            "answered invocation %r (%r) without its audit entry stored: %s",
            ticket.invocation_id[:200],
            ticket.capability[:200],
            why,
        )
        return False

    @property
    def sink_pending(self) -> int:
        """Entries waiting to be handed to the sink."""
        with self._cond:
            return self._accepted - self._handled

    def flush(self, timeout: float | None = None) -> bool:
        """Block until the sink has handled every entry recorded so far.

        Handled means written, or lost in a failed write (see :attr:`sink_failures`). Call it
        from a thread, not the event loop, when the sink may be slow.

        Args:
            timeout: seconds to wait at most; ``None`` waits for as long as it takes.

        Returns:
            ``True`` when everything was handled, ``False`` on timeout.

        Example:
            >>> audit.flush(timeout=5.0)
            True
        """
        with self._cond:
            target = self._accepted
            self._flushing += 1
            self._cond.notify_all()
            try:
                return self._cond.wait_for(lambda: self._handled >= target, timeout)
            finally:
                self._flushing -= 1


def should_log(failures: int) -> bool:
    """Log the 1st, 10th, 100th, ... failure, so a broken sink cannot flood the logs."""
    return failures in (1, 10) or (failures % 100 == 0)
