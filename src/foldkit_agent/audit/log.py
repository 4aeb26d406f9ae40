"""The audit log: a bounded record of every decision the runtime makes.

Each invocation writes exactly one :class:`AuditEntry`: dispatched, refused (with the error
tag) or unknown (the host was called and the outcome could not be known). What it will not
keep: the Model (never, by any setting), the input (unless ``include_input=True``, and then
with ``redact`` fields replaced at any depth), and the principal (unless a ``principal=``
projection picks what to record of it, such as a user id; ``record_principal=`` is the same
option under its other name).

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

import atexit
import logging
import threading
import time
import weakref
from collections import deque
from collections.abc import Callable, Iterable
from typing import Any

from .encode import UNRECORDABLE
from .entry import AuditEntry, Decision, Row, entry_of
from .forward import AuditSink, AuditTicket, SinkForwarding, should_log
from .record import DEFAULT_MAX_INPUT_BYTES, recorded, short_text, text

__all__ = ["AuditLog", "audit_log"]

_log = logging.getLogger("foldkit_agent.audit")
_now = time.time

_SLACK = 64
"""Entries the ring may hold past its capacity before a trim evicts the oldest."""

DEFAULT_MAX_BYTES = 16 * 1024 * 1024
"""The most bytes of recorded inputs the ring holds, by default (16 MiB; ``max_bytes=``)."""

_ENTRY_BYTES = 256
"""What an entry counts towards ``max_bytes`` besides its input (its other fields, roughly)."""

_live_logs: weakref.WeakSet[AuditLog] = weakref.WeakSet()

_APPROVAL_TEXT_MAX = 300
"""The longest ``approval_text`` kept, in characters (the sentence, cut)."""


@atexit.register
def _close_live_logs() -> None:  # pragma: no cover - runs at interpreter exit
    for log in list(_live_logs):
        log.close(timeout=2.0)


class AuditLog(SinkForwarding):
    """A bounded ring buffer of :class:`AuditEntry`, optionally forwarded to a sink.

    Build it with :data:`audit_log` (this class under its documented name). Recording is
    cheap and never waits: with a sink, each entry is also appended to a bounded pending
    buffer that a background thread hands to the sink in batches. The thread starts with the
    first entry and is stopped by :meth:`close` (which also runs at interpreter exit).

    Args:
        capacity: entries kept in memory (oldest evicted first; see ``evicted``).
        principal: ``(principal) -> JSON value`` choosing what to record of the caller
            (the principal ``bind(principal=...)`` provided), such as ``lambda user: user.id``.
            Without it no principal is recorded.
        include_input: record the call's input (off by default: it may carry anything).
        redact: field names replaced by ``"[redacted]"`` at any depth of the recorded input.
        max_input_bytes: the most bytes of one recorded input (16 KiB by default), counted
            as its JSON in UTF-8; what is past it is cut where it stands, with a marker
            (``…[cut: N bytes]``, ``"[cut]": "N more fields"``, ``"[cut: N more items]"``;
            :mod:`foldkit_agent.audit.record`). ``None`` records inputs whole.
        max_bytes: with ``include_input``, the most bytes the kept entries may hold (16 MiB
            by default; each entry counts 256 bytes plus its input's bytes): past it the
            oldest are evicted as past ``capacity``. Without inputs an entry is at most a few
            KiB (capability names and invocation ids are cut at 1,024 characters), so
            ``capacity`` bounds it.
        sink: an :class:`AuditSink` receiving batches on a background thread, such as
            :class:`SqliteAuditSink`. Call ``audit.close()`` when done to flush it. With a
            durable sink (``SqliteAuditSink(path, durable=True)``) each answer waits until its
            entry is stored.
        record_principal: ``principal=`` under its other name (kept working); give one.
        sink_queue: entries the sink may fall behind before new ones are dropped (counted
            in ``sink_dropped``).
        sink_batch: the most entries handed to the sink in one ``write``.
        sink_linger: seconds the forwarding thread waits to fill a batch (0 with a durable
            sink: its callers are waiting).
        commit_timeout: with a durable sink, the longest an answer waits for its entry
            (seconds); past it the answer is released and the miss logged (see
            :meth:`committed`).

    Raises:
        ValueError: ``capacity``, ``sink_queue``, ``sink_batch``, ``max_input_bytes`` or
            ``max_bytes`` is below 1, or ``commit_timeout`` is not positive.
        TypeError: both ``principal=`` and ``record_principal=`` are given; ``sink`` has no
            ``write``.

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
        max_input_bytes: the most bytes of one recorded input (``None``: whole).
        max_bytes: the most bytes the kept entries may hold (with ``include_input``).
        held_bytes: the bytes the kept entries count now (with ``include_input``; else 0).
        unconfirmed: answers released without their entry confirmed stored (the sink
            failed, fell behind ``commit_timeout``, or the entry was dropped); each is
            logged at ERROR with its invocation id.
    """

    def __init__(
        self,
        *,
        capacity: int = 1000,
        principal: Callable[[Any], Any] | None = None,
        include_input: bool = False,
        redact: Iterable[str] = (),
        sink: AuditSink | None = None,
        record_principal: Callable[[Any], Any] | None = None,
        sink_queue: int = 100_000,
        sink_batch: int = 1000,
        sink_linger: float = 0.005,
        commit_timeout: float = 5.0,
        max_input_bytes: int | None = DEFAULT_MAX_INPUT_BYTES,
        max_bytes: int = DEFAULT_MAX_BYTES,
    ) -> None:
        if capacity < 1:
            raise ValueError("audit capacity must be at least 1")
        if (max_input_bytes is not None and max_input_bytes < 1) or max_bytes < 1:
            raise ValueError("max_input_bytes and max_bytes must be at least 1 byte")
        if sink_queue < 1 or sink_batch < 1:
            raise ValueError("sink_queue and sink_batch must be at least 1")
        if not commit_timeout > 0:
            raise ValueError("commit_timeout must be a positive number of seconds")
        self.capacity = capacity
        # A decision is captured as a row (its FIELDS in order, the time as a timestamp) and
        # becomes its AuditEntry once, the first time it is needed: at once when a follower
        # or a sink takes it, else when the kept entries are first read. Building an entry
        # (and its datetime) costs more than the rest of recording.
        # The ring takes no lock per entry: it grows past capacity by a slack and is trimmed
        # back (under the lock, with the eviction count) once the slack is used up.
        self._entries: deque[Row | AuditEntry] = deque()
        self._trim_at = capacity + min(capacity, _SLACK)
        self._trimmed = 0
        self._record_principal = _principal_projection(principal, record_principal)
        self._include_input = include_input
        self._redact = frozenset(redact)
        self.max_input_bytes = max_input_bytes
        self.max_bytes = max_bytes
        # With inputs the ring is kept under the lock with each entry's size beside it (the
        # walk that copies an input costs far more than the lock); without, entries are small.
        self._sizes: deque[int] = deque()
        self.held_bytes = 0
        self._lock = threading.Lock()  # trims, eviction count, entries(), followers
        self._start_forwarding(sink_queue, sink_batch, sink_linger, commit_timeout)
        self._followers: tuple[Callable[[AuditEntry], None], ...] = ()
        self.follower_failures = 0
        if sink is not None:
            self.use_sink(sink)

    @property
    def records_principal(self) -> bool:
        """Whether entries record a principal (a ``principal=`` projection was given)."""
        return self._record_principal is not None

    def use_sink(self, sink: AuditSink) -> None:
        """Forward the entries recorded from now on to ``sink``, on a log made without one.

        What ``foldkit-agent serve --audit`` does with the runtime's own log, so its
        ``principal=``/``include_input`` choices stay. Entries already kept in memory are not
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
        approval_text: str | None = None,
        approval_asks: int | None = None,
        actor: str | None = None,
        declined_by: str | None = None,
    ) -> AuditTicket | None:
        """Record one decision; what the runtime calls, once per invocation.

        Captures what of the decision is kept (see :mod:`.record`), keeps it in the ring
        buffer and hands it to the followers and the sink. Never raises for what it is given:
        a principal projection that raises records no principal, and an input that cannot be
        copied is recorded as ``"[unrecordable]"``. Never blocks on the sink, durable or not
        (use :meth:`flush` to wait), and takes no lock unless the ring is due a trim.

        Returns:
            ``None``, or with a durable sink an :class:`AuditTicket` to pass to
            :meth:`committed` before answering the call.

        Example:
            >>> ticket = audit.note(invocation_id=inv.id, transport="mcp", capability="c",
            ...                     tag="T", principal=None, decision="dispatched", outcome="ok")
            >>> if ticket is not None:
            ...     await audit.committed(ticket)
        """
        who = None
        if principal is not None and self._record_principal is not None:
            try:
                who = self._record_principal(principal)
            except Exception:
                _log.warning("the audit principal projection raised; no principal recorded")
                who = None
            if isinstance(who, str):
                who = text(who)
        kept_input = None
        size = _ENTRY_BYTES
        if self._include_input and input is not None:
            try:
                kept_input, used = recorded(input, self._redact, self.max_input_bytes)
                size += used
            except RecursionError:
                kept_input = UNRECORDABLE
        # On the path of every dispatch: text()'s check is written out for the usual ASCII.
        row: Row = (
            _now(),
            invocation_id
            if type(invocation_id) is str and invocation_id.isascii() and len(invocation_id) < 1024
            else short_text(invocation_id),
            transport if type(transport) is str and transport.isascii() else text(transport),
            capability
            if type(capability) is str and capability.isascii() and len(capability) < 1024
            else short_text(capability),
            tag,
            who,
            decision,
            outcome,
            kept_input,
            approval,
            None if approved_by is None else text(str(approved_by)[:200]),
            None if approval_text is None else text(approval_text[:_APPROVAL_TEXT_MAX]),
            approval_asks,
            actor
            if actor is None or (type(actor) is str and actor.isascii() and len(actor) <= 40)
            else text(str(actor)[:40]),
            None if declined_by is None else text(str(declined_by)[:200]),
        )
        kept: Row | AuditEntry = row
        if self._followers or self._sink is not None:
            kept = entry_of(row)  # followers and the sink share the one entry
        if self._include_input:
            self._keep_sized(kept, size)
        else:
            ring = self._entries
            ring.append(kept)  # atomic: another thread's entry goes beside it without a lock
            if len(ring) > self._trim_at:
                self._trim()
        if type(kept) is not AuditEntry:
            return None
        entry: AuditEntry = kept  # pyright: ignore[reportAssignmentType]
        if self._followers:
            self._tell(entry)
        if self._sink is None:
            return None
        return self._forward(entry)

    def record(self, **decision: Any) -> AuditEntry:
        """Record one decision (the keywords of :meth:`note`) and return its :class:`AuditEntry`.

        The entry is the one the followers are told of and :meth:`entries` lists.

        Example:
            >>> audit.record(invocation_id="i-1", transport="in-app", capability="c",
            ...              tag="T", principal=None, decision="refused", outcome="x").decision
            'refused'
        """
        # note() tells its followers on the recording thread, right after keeping the entry:
        # a follower of this thread's next entry is handed exactly this decision's.
        me = threading.get_ident()
        taken: list[AuditEntry] = []

        def take(entry: AuditEntry) -> None:
            if not taken and threading.get_ident() == me:
                taken.append(entry)

        with self._lock:
            self._followers = (take, *self._followers)  # first: a follower may record too
        try:
            self.note(**decision)
        finally:
            self._unfollow(take)
        return taken[0]

    def _trim(self) -> None:
        """Evict the oldest entries beyond ``capacity`` (the ring grows by a slack between
        trims, so recording takes this lock once per slack of entries, not per entry)."""
        with self._lock:
            ring = self._entries
            excess = len(ring) - self.capacity
            for _ in range(excess):
                ring.popleft()
            if excess > 0:
                self._trimmed += excess

    def _keep_sized(self, kept: Row | AuditEntry, size: int) -> None:
        """Keep an entry of ``size`` bytes, evicting the oldest past ``capacity`` or
        ``max_bytes`` (the newest is always kept)."""
        with self._lock:
            ring, sizes = self._entries, self._sizes
            ring.append(kept)
            sizes.append(size)
            self.held_bytes += size
            while len(ring) > 1 and (len(ring) > self.capacity or self.held_bytes > self.max_bytes):
                ring.popleft()
                self.held_bytes -= sizes.popleft()
                self._trimmed += 1

    @property
    def evicted(self) -> int:
        """How many entries were evicted from memory so far."""
        with self._lock:
            return self._trimmed + max(0, len(self._entries) - self.capacity)

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

        return lambda: self._unfollow(on_entry)

    def _unfollow(self, on_entry: Callable[[AuditEntry], None]) -> None:
        with self._lock:
            kept = list(self._followers)
            if on_entry in kept:
                kept.remove(on_entry)
            self._followers = tuple(kept)

    def _tell(self, entry: AuditEntry) -> None:
        for on_entry in self._followers:
            try:
                on_entry(entry)
            except Exception:
                self.follower_failures += 1
                if should_log(self.follower_failures):
                    _log.warning("an audit follower raised; the entry is kept", exc_info=True)

    # -- reading --------------------------------------------------------------------------------

    def entries(self) -> list[AuditEntry]:
        """The kept entries, oldest first (a copy)."""
        with self._lock:  # no trim moves the ring meanwhile; appends only add on the right
            ring = self._entries
            kept = list(ring)  # one C-level copy: no other thread runs during it
            first = max(0, len(kept) - self.capacity)
            built: list[AuditEntry] = []
            for at in range(first, len(kept)):
                item = kept[at]
                if type(item) is not AuditEntry:
                    # Each row becomes its entry once: the ring keeps the entry from now on.
                    item = ring[at] = entry_of(item)  # pyright: ignore[reportArgumentType]
                built.append(item)  # pyright: ignore[reportArgumentType]
        return built

    def __len__(self) -> int:
        return min(len(self._entries), self.capacity)

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


def _principal_projection(
    principal: Callable[[Any], Any] | None, record_principal: Callable[[Any], Any] | None
) -> Callable[[Any], Any] | None:
    """The one projection of the caller that ``principal=`` or ``record_principal=`` gave.

    ``principal=`` is the name DESIGN §3 and the original give; ``record_principal=`` is the
    name this log had before, kept working.

    Raises:
        TypeError: both were given.
    """
    if principal is not None and record_principal is not None:
        raise TypeError(
            "audit_log takes principal= or record_principal= (the same option), not both"
        )
    return principal if principal is not None else record_principal


audit_log = AuditLog
"""A bounded audit log to pass to ``bind(audit=...)``: the :class:`AuditLog` class under the
name DESIGN §3 gives it, so ``audit_log(capacity=, principal=, include_input=, redact=, sink=,
commit_timeout=)`` and the constructor are one signature.

Example:
    >>> audit = audit_log(capacity=500, principal=lambda u: u.id, include_input=True,
    ...                   redact=["password"], sink=SqliteAuditSink("audit.db"))
"""
