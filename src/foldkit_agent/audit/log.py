"""The audit log: a bounded record of every decision the runtime makes.

Each invocation writes exactly one :class:`AuditEntry`: dispatched, refused (with the error
tag) or unknown (the host was called and the outcome could not be known). What it will not
keep: the Model (never, by any setting), the input (unless ``include_input=True``, and then
with ``redact`` fields replaced at any depth), and the principal (unless a ``record_principal=``
projection picks what to record of it, such as a user id).

A sink forwards entries somewhere durable. The log hands entries to its sink on a background
thread, in batches, behind a bounded buffer: recording never waits for the sink, so a sink
that raises or blocks never fails or delays a dispatch. What went wrong is counted on the log
(:attr:`AuditLog.sink_failures`, :attr:`AuditLog.sink_dropped`, :attr:`AuditLog.last_sink_error`).

A sink made with ``durable=True`` turns that around for the one invocation it records:
:meth:`AuditLog.note` hands back an :class:`AuditTicket`, and the runtime releases the answer
only after :meth:`AuditLog.committed` says the entry is stored ("answered means audited").
Whatever is pending when the sink takes a batch goes in that batch, so concurrent invocations
share one transaction (group commit). The wait is bounded by ``commit_timeout``; an entry the
sink could not store in time is logged with its invocation id and counted in
:attr:`AuditLog.unconfirmed`, and the answer is released as it was (the Message was already
applied: reporting a failure would invite a retry that applies it twice).

Three durable sinks ship here: :class:`JsonlAuditSink` (one JSON object per line),
:class:`SqliteAuditSink` (stdlib ``sqlite3`` in WAL mode) and :class:`PostgresAuditSink`
(psycopg 3), the last two with a ``query()`` reader.
"""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import logging
import threading
import time
import weakref
from collections import deque
from collections.abc import Callable, Iterable, Mapping
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from typing import Any, Literal, Protocol, cast, runtime_checkable

from .encode import UNRECORDABLE, no_surrogates

__all__ = [
    "REDACTED",
    "UNRECORDABLE",
    "AuditEntry",
    "AuditLog",
    "AuditSink",
    "AuditSinkError",
    "AuditTicket",
    "audit_log",
    "redact",
]

_log = logging.getLogger("foldkit_agent.audit")

REDACTED = "[redacted]"
"""The value that replaces a redacted input field."""

Decision = Literal["dispatched", "refused", "unknown"]
DECISIONS: frozenset[str] = frozenset({"dispatched", "refused", "unknown"})
APPROVALS: frozenset[str] = frozenset({"approved", "declined", "timeout", "unavailable"})
"""The values of :attr:`AuditEntry.approval` besides ``None`` (nobody was asked)."""


@dataclass(frozen=True, slots=True)
class AuditEntry:
    """One decision.

    Attributes:
        at: when the decision was made (UTC, aware).
        invocation_id: ``Invocation.id``.
        transport: ``Invocation.transport``.
        capability: the name the call asked for (as received, for unknown names).
        tag: the Message tag, or ``None`` when the name resolved to nothing.
        principal: what ``record_principal=`` recorded of the caller, or ``None``.
        decision: ``"dispatched"``, ``"refused"`` or ``"unknown"``.
        outcome: ``"ok"``, ``"completed"``, ``"failed"``, or the error tag.
        input: the (redacted) input when ``include_input=True``, else ``None``.
        approval: for a capability declared with ``confirm``: ``"approved"``,
            ``"declined"``, ``"timeout"`` or ``"unavailable"`` (no person could be asked);
            ``None`` when nobody was asked (no ``confirm``, its predicate said no, or the call
            ended before the question, or was cancelled while it was open).
        approved_by: who approved (``Approval.by``), only when ``approval == "approved"``.
    """

    at: datetime
    invocation_id: str
    transport: str
    capability: str
    tag: str | None
    principal: Any
    decision: Decision
    outcome: str
    input: Any = None
    approval: str | None = None
    approved_by: str | None = None

    def to_json(self) -> dict[str, Any]:
        """The entry as JSON data (``at`` as an ISO 8601 string with microseconds).

        Example:
            >>> entry.to_json()["decision"]
            'refused'
        """
        data = asdict(self)
        data["at"] = iso_time(self.at)
        return data

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> AuditEntry:
        """Rebuild an entry from :meth:`to_json` data.

        Entries written before approval existed (no ``approval`` key) read as ``None``.

        Raises:
            ValueError: a field is missing or ``at``/``decision``/``approval`` is malformed.
        """
        try:
            at = datetime.fromisoformat(data["at"])
            decision = data["decision"]
            if decision not in DECISIONS:
                raise ValueError(f"unknown audit decision {decision!r}")
            approval = data.get("approval")
            if approval is not None and approval not in APPROVALS:
                raise ValueError(f"unknown audit approval {approval!r}")
            return cls(
                at=at if at.tzinfo is not None else at.replace(tzinfo=UTC),
                invocation_id=data["invocation_id"],
                transport=data["transport"],
                capability=data["capability"],
                tag=data.get("tag"),
                principal=data.get("principal"),
                decision=decision,
                outcome=data["outcome"],
                input=data.get("input"),
                approval=approval,
                approved_by=data.get("approved_by"),
            )
        except KeyError as exc:
            raise ValueError(f"audit entry lacks {exc.args[0]!r}") from None


def iso_time(at: datetime) -> str:
    """Fixed-width UTC ISO 8601, so text order is time order."""
    return at.astimezone(UTC).isoformat(timespec="microseconds")


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

    def __init__(self, row: tuple[Any, ...], state: TicketState = _PENDING) -> None:
        self.invocation_id: str = row[1]
        self.capability: str = row[3]
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


_live_logs: weakref.WeakSet[AuditLog] = weakref.WeakSet()


@atexit.register
def _close_live_logs() -> None:  # pragma: no cover - runs at interpreter exit
    for log in list(_live_logs):
        log.close(timeout=2.0)


class AuditLog:
    """A bounded ring buffer of :class:`AuditEntry`, optionally forwarded to a sink.

    Build it with :func:`audit_log`. Recording is cheap and never waits: with a sink, each
    entry is also appended to a bounded pending buffer that a background thread hands to the
    sink in batches. The thread starts with the first entry and is stopped by :meth:`close`
    (which also runs at interpreter exit).

    Attributes:
        capacity: how many entries are kept in memory; older ones are evicted.
        evicted: how many entries were evicted from memory so far.
        sink_written: entries the sink accepted.
        sink_failures: sink ``write`` calls that raised (each loses its batch).
        sink_failed_entries: entries lost in those failed writes.
        sink_dropped: entries never handed to the sink, because it fell ``sink_queue``
            entries behind or the log was closed.
        last_sink_error: ``"ExceptionType: message"`` of the latest sink failure, or ``None``.
        durable: the sink is durable (``sink.durable is True``): :meth:`note` returns tickets
            and the runtime waits on :meth:`committed` before answering.
        commit_timeout: seconds :meth:`committed` waits at most for one entry.
        unconfirmed: answers released without their entry confirmed stored (the sink
            failed, fell behind ``commit_timeout``, or the entry was dropped); each is
            logged at ERROR with its invocation id.
    """

    def __init__(
        self,
        *,
        capacity: int = 1000,
        record_principal: Callable[[Any], Any] | None = None,
        include_input: bool = False,
        redact: Iterable[str] = (),
        sink: AuditSink | None = None,
        sink_queue: int = 100_000,
        sink_batch: int = 1000,
        sink_linger: float = 0.005,
        commit_timeout: float = 5.0,
    ) -> None:
        if capacity < 1:
            raise ValueError("audit capacity must be at least 1")
        if sink_queue < 1 or sink_batch < 1:
            raise ValueError("sink_queue and sink_batch must be at least 1")
        if not commit_timeout > 0:
            raise ValueError("commit_timeout must be a positive number of seconds")
        self.capacity = capacity
        # Rows, not entries: building an AuditEntry (and its datetime) costs more than the rest
        # of recording, so it happens when entries are read or handed to a sink.
        self._entries: deque[_Row] = deque(maxlen=capacity)
        self._record_principal = record_principal
        self._include_input = include_input
        self._redact = frozenset(redact)
        self.evicted = 0
        self.sink_written = 0
        self.sink_failures = 0
        self.sink_failed_entries = 0
        self.sink_dropped = 0
        self.last_sink_error: str | None = None
        self._sink: AuditSink | None = None
        self._sink_queue = sink_queue
        self._sink_batch = sink_batch
        self.durable = False
        self.commit_timeout = commit_timeout
        self.unconfirmed = 0
        self._sink_linger = max(0.0, sink_linger)
        self._tickets: deque[AuditTicket] = deque()  # durable: one per row in _pending
        self._lock = threading.Lock()  # the ring buffer and eviction counter
        self._cond = threading.Condition(threading.Lock())  # everything below
        self._pending: deque[_Row] = deque()  # rows; the pump thread builds the entries
        self._accepted = 0  # entries put in _pending, ever
        self._handled = 0  # entries taken out of _pending and written (or failed), ever
        self._flushing = 0  # flush() callers waiting: the pump skips its linger
        self._closing = False
        self._thread: threading.Thread | None = None
        self._followers: tuple[Callable[[AuditEntry], None], ...] = ()
        self.follower_failures = 0
        if sink is not None:
            self.use_sink(sink)

    @property
    def records_principal(self) -> bool:
        """Whether entries record a principal (a ``record_principal=`` projection was given)."""
        return self._record_principal is not None

    def use_sink(self, sink: AuditSink) -> None:
        """Forward the entries recorded from now on to ``sink``, on a log made without one.

        What ``foldkit-agent serve --audit`` does with the runtime's own log, so its
        ``record_principal=``/``include_input`` choices stay. Entries already kept in memory are not
        forwarded.

        Raises:
            ValueError: the log already has a sink, or was closed.
            TypeError: ``sink`` has no ``write``.

        Example:
            >>> runtime.audit.use_sink(SqliteAuditSink("audit.db", durable=True))
        """
        if not callable(getattr(sink, "write", None)):
            raise TypeError("audit sink must have write(entries)")
        with self._cond:
            if self._sink is not None or self._closing:
                raise ValueError("this audit log already has a sink (or was closed)")
            self.durable = getattr(sink, "durable", False) is True
            if self.durable:
                # Callers wait on a durable sink: lingering would only add to their wait, and
                # group commit happens anyway (what arrives while a batch commits is the next).
                self._sink_linger = 0.0
            self._sink = sink
        _live_logs.add(self)

    # -- recording (called by the runtime) ---------------------------------------------------

    def record(
        self,
        *,
        invocation_id: str,
        transport: str,
        capability: str,
        tag: str | None,
        principal: Any,
        decision: Decision,
        outcome: str,
        input: Any = None,
        approval: str | None = None,
        approved_by: str | None = None,
    ) -> AuditEntry:
        """Record one decision (see :meth:`note`) and return the :class:`AuditEntry` kept.

        Never raises for what it is given: a principal projection that raises records no
        principal, and an input that cannot be copied is recorded as ``"[unrecordable]"``.
        Never blocks on the sink, durable or not (use :meth:`flush` to wait).
        """
        row = self._row(
            invocation_id,
            transport,
            capability,
            tag,
            principal,
            decision,
            outcome,
            input,
            approval,
            approved_by,
        )
        self._keep(row)
        return _entry_of(row)

    def note(
        self,
        invocation_id: str,
        transport: str,
        capability: str,
        tag: str | None,
        principal: Any,
        decision: Decision,
        outcome: str,
        input: Any = None,
        approval: str | None = None,
        approved_by: str | None = None,
    ) -> AuditTicket | None:
        """Record one decision without building its entry yet; what the runtime calls.

        Same rules as :meth:`record`. Returns ``None``, or with a durable sink an
        :class:`AuditTicket` to pass to :meth:`committed` before answering the call.

        Example:
            >>> ticket = audit.note(invocation_id=inv.id, transport="mcp", capability="c",
            ...                     tag="T", principal=None, decision="dispatched", outcome="ok")
            >>> if ticket is not None:
            ...     await audit.committed(ticket)
        """
        return self._keep(
            self._row(
                invocation_id,
                transport,
                capability,
                tag,
                principal,
                decision,
                outcome,
                input,
                approval,
                approved_by,
            )
        )

    def _row(
        self,
        invocation_id: str,
        transport: str,
        capability: str,
        tag: str | None,
        principal: Any,
        decision: Decision,
        outcome: str,
        input: Any,
        approval: str | None = None,
        approved_by: str | None = None,
    ) -> _Row:
        who = None
        if principal is not None and self._record_principal is not None:
            try:
                who = self._record_principal(principal)
            except Exception:
                _log.warning("the audit principal projection raised; no principal recorded")
                who = None
            if isinstance(who, str):
                who = _text(who)
        kept_input = None
        if self._include_input and input is not None:
            try:
                kept_input = redact(input, self._redact)
            except RecursionError:
                kept_input = UNRECORDABLE
        # On the path of every dispatch: _text's check is written out for the usual ASCII.
        row: _Row = (
            _now(),
            invocation_id
            if type(invocation_id) is str and invocation_id.isascii()
            else _text(invocation_id),
            transport if type(transport) is str and transport.isascii() else _text(transport),
            capability if type(capability) is str and capability.isascii() else _text(capability),
            tag,
            who,
            decision,
            outcome,
            kept_input,
            approval,
            None if approved_by is None else _text(str(approved_by)[:200]),
        )
        return row

    def _keep(self, row: _Row) -> AuditTicket | None:
        with self._lock:
            if len(self._entries) == self.capacity:
                self.evicted += 1
            self._entries.append(row)
        if self._followers:
            self._tell(row)
        if self._sink is None:
            return None
        return self._forward(row)

    def _forward(self, entry: _Row) -> AuditTicket | None:
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
                rows = [self._pending.popleft() for _ in range(n)]
            failed: str | None = None
            batch = [_entry_of(row) for row in rows]
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
            if failed is not None and _should_log(self.sink_failures):
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

    def follow(self, on_entry: Callable[[AuditEntry], None]) -> Callable[[], None]:
        """Call ``on_entry(entry)`` with every entry recorded from now on; returns the unfollow.

        ``on_entry`` runs on the recording thread (the runtime's event loop, usually), right
        after the entry is kept: it must be quick and must not block (hand the entry over, as
        :class:`foldkit_agent.edge.ActivityFeed` does). One that raises is logged and counted in
        :attr:`follower_failures`; the dispatch that recorded the entry never sees it. Entries
        are given as recorded: no Model, and the input only under ``include_input=True``
        (redacted), so a follower that shows entries to people should still leave ``input``
        out.

        Example:
            >>> unfollow = audit.follow(lambda e: print(e.capability, e.decision))
            >>> unfollow()
        """
        with self._lock:
            self._followers = (*self._followers, on_entry)

        def unfollow() -> None:
            with self._lock:
                kept = list(self._followers)
                if on_entry in kept:
                    kept.remove(on_entry)
                self._followers = tuple(kept)

        return unfollow

    def _tell(self, row: _Row) -> None:
        entry = _entry_of(row)
        for on_entry in self._followers:
            try:
                on_entry(entry)
            except Exception:
                self.follower_failures += 1
                if _should_log(self.follower_failures):
                    _log.warning("an audit follower raised; the entry is kept", exc_info=True)

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

    # -- reading --------------------------------------------------------------------------------

    def entries(self) -> list[AuditEntry]:
        """The kept entries, oldest first (a copy)."""
        with self._lock:
            rows = list(self._entries)
        return [_entry_of(row) for row in rows]

    def __len__(self) -> int:
        return len(self._entries)

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

    def close(self, timeout: float | None = 5.0) -> bool:
        """Hand every pending entry to the sink, stop the thread and close the sink.

        Entries recorded after ``close`` are kept in memory and counted in
        :attr:`sink_dropped`. The sink's ``close()`` runs on the audit thread after the last
        batch; when the sink is still blocked after ``timeout`` seconds the log gives up
        waiting (and the sink is not closed under its feet).

        Returns:
            ``True`` when the sink was flushed and closed within ``timeout``.
        """
        with self._cond:
            already = self._closing
            self._closing = True
            thread = self._thread
            self._cond.notify_all()
        _live_logs.discard(self)
        if self._sink is None:
            return True
        if thread is None:
            if not already:
                self._close_sink()
            return True
        thread.join(timeout)
        if thread.is_alive():
            _log.warning(
                "audit sink %s did not finish within %ss", type(self._sink).__name__, timeout
            )
            return False
        return True

    def __enter__(self) -> AuditLog:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


_now = time.time


def _should_log(failures: int) -> bool:
    """Log the 1st, 10th, 100th, ... failure, so a broken sink cannot flood the logs."""
    return failures in (1, 10) or (failures % 100 == 0)


_Row = tuple[
    float, str, str, str, "str | None", Any, "Decision", str, Any, "str | None", "str | None"
]


def _entry_of(row: tuple[Any, ...]) -> AuditEntry:
    return AuditEntry(datetime.fromtimestamp(row[0], UTC), *row[1:])


def _text(value: str) -> str:
    """``value`` as storable text: a lone UTF-16 surrogate (valid in a JSON escape, but not
    encodable as UTF-8) becomes U+FFFD, so no sink can fail on an entry that carries one."""
    if type(value) is str:
        return value if value.isascii() else no_surrogates(value)
    return str(value)  # not a str after all (a host passing something else)


_ATOMS: frozenset[type] = frozenset({int, float, bool, type(None)})


def _key_text(key: Any) -> Any:
    return _text(key) if isinstance(key, str) else key


def redact(value: Any, fields: frozenset[str]) -> Any:
    """A copy of JSON-like ``value`` with every key in ``fields`` replaced, at any depth.

    Mappings are copied to dicts and sequences to lists; strings (keys too) holding a lone
    surrogate get U+FFFD in its place; other values are returned as is.

    Example:
        >>> redact({"a": {"token": "x"}, "b": [{"token": "y"}]}, frozenset({"token"}))
        {'a': {'token': '[redacted]'}, 'b': [{'token': '[redacted]'}]}
    """
    kind = type(value)  # pyright: ignore[reportUnknownVariableType] - exact types first
    if kind in _ATOMS:
        return value
    if kind is str:
        return value if value.isascii() else no_surrogates(value)
    if isinstance(value, str):
        return _text(value)
    if kind is dict or isinstance(value, Mapping):
        items = cast(Mapping[Any, Any], value)
        return {
            (_key_text(k) if type(k) is not str or not k.isascii() else k): (
                REDACTED if k in fields else redact(v, fields)
            )
            for k, v in items.items()
        }
    if isinstance(value, list | tuple):
        seq = cast(Iterable[Any], value)
        return [redact(v, fields) for v in seq]
    return value


def audit_log(
    *,
    capacity: int = 1000,
    record_principal: Callable[[Any], Any] | None = None,
    include_input: bool = False,
    redact: Iterable[str] = (),
    sink: AuditSink | None = None,
    commit_timeout: float = 5.0,
) -> AuditLog:
    """A bounded audit log to pass to ``bind(audit=...)``.

    Args:
        capacity: entries kept in memory (oldest evicted first; see ``AuditLog.evicted``).
        record_principal: ``(principal) -> JSON value`` choosing what to record of the caller
            (the principal ``bind(principal=...)`` provided), such as ``lambda user: user.id``.
            Without it no principal is recorded.
        include_input: record the call's input (off by default: it may carry anything).
        redact: field names replaced by ``"[redacted]"`` at any depth of the recorded input.
        sink: an :class:`AuditSink` receiving batches on a background thread, such as
            :class:`SqliteAuditSink`. Call ``audit.close()`` when done to flush it. With a
            durable sink (``SqliteAuditSink(path, durable=True)``) each answer waits until its
            entry is stored.
        commit_timeout: with a durable sink, the longest an answer waits for its entry
            (seconds); past it the answer is released and the miss logged (see
            :meth:`AuditLog.committed`).

    Raises:
        ValueError: ``capacity`` is below 1, or ``commit_timeout`` is not positive.

    Example:
        >>> audit = audit_log(capacity=500, record_principal=lambda u: u.id, include_input=True,
        ...                   redact=["password"], sink=SqliteAuditSink("audit.db"))
    """
    return AuditLog(
        capacity=capacity,
        record_principal=record_principal,
        include_input=include_input,
        redact=redact,
        sink=sink,
        commit_timeout=commit_timeout,
    )
