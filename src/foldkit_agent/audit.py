"""The audit log: a bounded record of every decision the runtime makes.

Each invocation writes exactly one :class:`AuditEntry`: dispatched, refused (with the error
tag) or unknown (the host was called and the outcome could not be known). What it will not
keep: the Model (never, by any setting), the input (unless ``include_input=True``, and then
with ``redact`` fields replaced at any depth), and the principal (unless a ``principal=``
projection picks what to record, such as a user id).

A sink forwards entries somewhere durable. Sinks run on a background thread behind a bounded
queue, so a sink that raises or blocks never fails or delays a dispatch; failures and drops
are counted on the log (:attr:`AuditLog.sink_failures`, :attr:`AuditLog.sink_dropped`).
"""

from __future__ import annotations

import logging
import queue
import threading
from collections import deque
from collections.abc import Callable, Iterable, Mapping
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from typing import Any, Literal, Protocol, runtime_checkable

__all__ = ["REDACTED", "AuditEntry", "AuditLog", "AuditSink", "audit_log"]

_log = logging.getLogger("foldkit_agent.audit")

REDACTED = "[redacted]"
"""The value that replaces a redacted input field."""

Decision = Literal["dispatched", "refused", "unknown"]


@dataclass(frozen=True, slots=True)
class AuditEntry:
    """One decision.

    Attributes:
        at: when the decision was made (UTC, aware).
        invocation_id: ``Invocation.id``.
        transport: ``Invocation.transport``.
        capability: the name the call asked for (as received, for unknown names).
        tag: the Message tag, or ``None`` when the name resolved to nothing.
        principal: the ``principal=`` projection of the caller, or ``None``.
        decision: ``"dispatched"``, ``"refused"`` or ``"unknown"``.
        outcome: ``"ok"``, ``"completed"``, ``"failed"``, or the error tag.
        input: the (redacted) input when ``include_input=True``, else ``None``.
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

    def to_json(self) -> dict[str, Any]:
        """The entry as JSON data (``at`` as an ISO 8601 string)."""
        data = asdict(self)
        data["at"] = self.at.isoformat()
        return data


@runtime_checkable
class AuditSink(Protocol):
    """Anything that accepts entries. ``write`` runs on the audit thread, never the caller's."""

    def write(self, entries: list[AuditEntry], /) -> None: ...


class AuditLog:
    """A bounded ring buffer of :class:`AuditEntry`. Build it with :func:`audit_log`.

    Attributes:
        capacity: how many entries are kept; older ones are evicted.
        evicted: how many entries were evicted so far.
        sink_failures: how many sink writes raised.
        sink_dropped: how many entries were dropped because the sink fell too far behind.
    """

    def __init__(
        self,
        *,
        capacity: int = 1000,
        principal: Callable[[Any], Any] | None = None,
        include_input: bool = False,
        redact: Iterable[str] = (),
        sink: AuditSink | None = None,
        sink_queue: int = 100_000,
    ) -> None:
        if capacity < 1:
            raise ValueError("audit capacity must be at least 1")
        self.capacity = capacity
        self._entries: deque[AuditEntry] = deque(maxlen=capacity)
        self._principal = principal
        self._include_input = include_input
        self._redact = frozenset(redact)
        self.evicted = 0
        self.sink_failures = 0
        self.sink_dropped = 0
        self._sink = sink
        self._queue: queue.Queue[AuditEntry | None] | None = None
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()
        if sink is not None:
            self._queue = queue.Queue(maxsize=sink_queue)

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
        input: Any = None,  # noqa: A002
    ) -> AuditEntry:
        """Record one decision; the runtime calls this once per invocation."""
        who = None
        if principal is not None and self._principal is not None:
            try:
                who = self._principal(principal)
            except Exception:
                who = None
        entry = AuditEntry(
            at=datetime.now(UTC),
            invocation_id=invocation_id,
            transport=transport,
            capability=capability,
            tag=tag,
            principal=who,
            decision=decision,
            outcome=outcome,
            input=redact(input, self._redact) if self._include_input else None,
        )
        if len(self._entries) == self.capacity:
            self.evicted += 1
        self._entries.append(entry)
        if self._queue is not None:
            self._forward(entry)
        return entry

    def _forward(self, entry: AuditEntry) -> None:
        if self._thread is None:
            with self._lock:
                if self._thread is None:
                    self._thread = threading.Thread(target=self._pump, name="foldkit-agent-audit", daemon=True)
                    self._thread.start()
        try:
            self._queue.put_nowait(entry)  # type: ignore[union-attr]
        except queue.Full:
            self.sink_dropped += 1

    def _pump(self) -> None:
        q = self._queue
        sink = self._sink
        assert q is not None and sink is not None
        while True:
            first = q.get()
            batch: list[AuditEntry] = []
            stop = first is None
            if first is not None:
                batch.append(first)
            while not stop and len(batch) < 1000:
                try:
                    item = q.get_nowait()
                except queue.Empty:
                    break
                if item is None:
                    stop = True
                else:
                    batch.append(item)
            if batch:
                try:
                    sink.write(batch)
                except Exception:
                    self.sink_failures += 1
                    _log.warning("audit sink %r failed to write %d entries", type(sink).__name__, len(batch))
            for _ in range(len(batch) + (1 if stop else 0)):
                q.task_done()
            if stop:
                return

    # -- reading --------------------------------------------------------------------------------

    def entries(self) -> list[AuditEntry]:
        """The kept entries, oldest first."""
        return list(self._entries)

    def __len__(self) -> int:
        return len(self._entries)

    def flush(self, timeout: float | None = None) -> bool:
        """Wait until the sink has been handed every entry so far (``timeout`` seconds).

        Returns ``True`` when everything was handed over, ``False`` on timeout.
        """
        q = self._queue
        if q is None or self._thread is None:
            return True
        done = threading.Event()

        def waiter() -> None:
            q.join()
            done.set()

        threading.Thread(target=waiter, daemon=True).start()
        return done.wait(timeout)

    def close(self, timeout: float | None = 5.0) -> None:
        """Flush, stop the sink thread and close the sink (if it has ``close``)."""
        if self._queue is not None and self._thread is not None:
            self._queue.put(None)
            self._thread.join(timeout)
            self._thread = None
        closer = getattr(self._sink, "close", None)
        if callable(closer):
            try:
                closer()
            except Exception:
                self.sink_failures += 1


def redact(value: Any, fields: frozenset[str]) -> Any:
    """A copy of JSON-like ``value`` with every key in ``fields`` replaced, at any depth."""
    if isinstance(value, Mapping):
        items: Mapping[Any, Any] = value  # pyright: ignore[reportUnknownVariableType]
        return {k: (REDACTED if k in fields else redact(v, fields)) for k, v in items.items()}
    if isinstance(value, list | tuple):
        seq: Iterable[Any] = value  # pyright: ignore[reportUnknownVariableType]
        return [redact(v, fields) for v in seq]
    return value


def audit_log(
    *,
    capacity: int = 1000,
    principal: Callable[[Any], Any] | None = None,
    include_input: bool = False,
    redact: Iterable[str] = (),  # noqa: A002 - shadowing the helper is fine here
    sink: AuditSink | None = None,
) -> AuditLog:
    """A bounded audit log to pass to ``bind(audit=...)``.

    Args:
        capacity: entries kept in memory (oldest evicted first; see ``AuditLog.evicted``).
        principal: ``(principal) -> JSON value`` choosing what to record of the caller, such as
            ``lambda user: user.id``. Without it no principal is recorded.
        include_input: record the call's input (off by default: it may carry anything).
        redact: field names replaced by ``"[redacted]"`` at any depth of the recorded input.
        sink: an :class:`AuditSink` receiving batches on a background thread.

    Example:
        >>> audit = audit_log(capacity=500, principal=lambda u: u.id, include_input=True,
        ...                   redact=["password"])
    """
    return AuditLog(capacity=capacity, principal=principal, include_input=include_input, redact=redact, sink=sink)
