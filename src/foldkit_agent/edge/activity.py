"""Who did what on one runtime, for a person to watch: the activity feed.

:class:`ActivityFeed` follows an :class:`~foldkit_agent.audit.AuditLog` and keeps the last
``keep`` entries as :class:`ActivityItem` — the part of an audit entry a page may show: who
(the transport and the principal the audit recorded), which capability, the decision
(dispatched / refused / unknown, and the approval) and the outcome. Never the input (even when
the log keeps it) and never the Model (the log has none). An application adds what the person
did in its own page with :meth:`ActivityFeed.add_person`, so one feed tells the whole story.

Refusals are kept apart: a refused call goes to a ring of its own (``keep`` items too), so a
burst of cheap refused calls never pushes an agent's real action out of view; a view then
folds them ("20 refused calls": the console's activity view does).

Memory is bounded: two rings of ``keep`` items (actions, refusals), shared by every reader; a
reader remembers only the sequence number it has seen, and one that fell more than ``keep``
items behind is told how many it missed.
:func:`foldkit_agent.adapters.web.activity_endpoint` streams a feed to a page.

Example::

    feed = ActivityFeed(runtime.audit, keep=50)
    items, missed = feed.since(0)
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import threading
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from ..audit.entry import AuditEntry, iso_time
from ..audit.log import AuditLog

__all__ = ["ActivityFeed", "ActivityItem"]

_PRINCIPAL_CHARS = 100


@dataclass(frozen=True, slots=True)
class ActivityItem:
    """One thing that happened, as a page may show it.

    Attributes:
        seq: its place in the feed (1, 2, ...).
        at: when (UTC).
        by_person: the application reported it as the person's own action
            (:meth:`ActivityFeed.add_person`); otherwise an agent's call, from the audit.
        transport: ``"mcp"``, ``"a2a"``, ``"webmcp"``, ``"agent-native"``, an in-process
            framework's name, or what the application named the person's page.
        principal: what the audit recorded of the caller, as text (at most 100 characters),
            or ``None`` (nothing recorded, or not a string or number).
        capability: the capability name the call asked for.
        decision: ``"dispatched"``, ``"refused"`` or ``"unknown"``.
        outcome: ``"ok"``, ``"completed"``, ``"failed"`` or the error tag of the refusal.
        approval: ``"approved"``, ``"declined"``, ``"timeout"``, ``"unavailable"`` or ``None``.
        approved_by: who approved, when someone did.
    """

    seq: int
    at: datetime
    by_person: bool
    transport: str
    principal: str | None
    capability: str
    decision: str
    outcome: str
    approval: str | None
    approved_by: str | None

    def to_json(self) -> dict[str, Any]:
        """``{"seq", "at", "who", "transport", "principal", "capability", "decision",
        "outcome", "approval", "approvedBy"}`` with ``who`` ``"person"`` or ``"agent"``."""
        return {
            "seq": self.seq,
            "at": iso_time(self.at),
            "who": "person" if self.by_person else "agent",
            "transport": self.transport,
            "principal": self.principal,
            "capability": self.capability,
            "decision": self.decision,
            "outcome": self.outcome,
            "approval": self.approval,
            "approvedBy": self.approved_by,
        }


def _principal_text(value: Any) -> str | None:
    if isinstance(value, bool) or not isinstance(value, str | int):
        return None
    return str(value)[:_PRINCIPAL_CHARS]


class ActivityFeed:
    """The last ``keep`` actions and the last ``keep`` refusals on a runtime, for readers to
    wait on.

    Args:
        audit: the log to follow (``runtime.audit``); ``None`` for a feed the application
            fills alone.
        keep: items kept of each kind, actions and refusals (at least 1; default 50).

    The feed is fed from any thread (the audit log calls it on the recording thread) and read
    on one event loop. Call :meth:`close` to stop following the log.

    Raises:
        ValueError: ``keep`` below 1.
    """

    def __init__(self, audit: AuditLog | None = None, *, keep: int = 50) -> None:
        if keep < 1:
            raise ValueError("an activity feed keeps at least 1 item")
        self.keep = keep
        self._items: deque[ActivityItem] = deque(maxlen=keep)
        self._refused: deque[ActivityItem] = deque(maxlen=keep)
        self._seq = itertools.count(1)
        self._last = 0
        self._lock = threading.Lock()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._changed = asyncio.Event()
        self._unfollow: Callable[[], None] | None = None
        if audit is not None:
            self._unfollow = audit.follow(self._add_entry)

    def close(self) -> None:
        """Stop following the audit log (items already kept stay readable)."""
        if self._unfollow is not None:
            self._unfollow()
            self._unfollow = None

    # -- writing ---------------------------------------------------------------------------------

    def _add_entry(self, entry: AuditEntry) -> None:
        self._add(entry, by_person=False)

    def add_person(
        self,
        *,
        transport: str,
        principal: Any,
        capability: str,
        decision: str = "dispatched",
        outcome: str = "ok",
    ) -> ActivityItem:
        """Record the person's own action in their page (what the audit never sees).

        Args:
            transport: how the application names its page (``"page"``).
            principal: the signed-in user, as it should read (``user.id``).
            capability: what they did, by the capability name an agent would use.
            decision: ``"dispatched"`` or ``"refused"``.
            outcome: ``"ok"`` or why it was refused.
        """
        entry = AuditEntry(
            at=datetime.now(UTC),
            invocation_id="",
            transport=transport,
            capability=capability,
            tag=None,
            principal=principal,
            decision="refused" if decision == "refused" else "dispatched",
            outcome=outcome,
        )
        return self._add(entry, by_person=True)

    def _add(self, entry: AuditEntry, *, by_person: bool) -> ActivityItem:
        with self._lock:
            item = ActivityItem(
                seq=next(self._seq),
                at=entry.at,
                by_person=by_person,
                transport=entry.transport[:40],
                principal=_principal_text(entry.principal),
                capability=entry.capability[:128],
                decision=entry.decision,
                outcome=entry.outcome[:80],
                approval=entry.approval,
                approved_by=None if entry.approved_by is None else entry.approved_by[:100],
            )
            (self._refused if item.decision == "refused" else self._items).append(item)
            self._last = item.seq
            loop = self._loop
        if loop is not None:
            with contextlib.suppress(RuntimeError):  # a closed loop: nobody reads any more
                loop.call_soon_threadsafe(self._wake)
        return item

    def _wake(self) -> None:
        changed, self._changed = self._changed, asyncio.Event()
        changed.set()

    # -- reading ---------------------------------------------------------------------------------

    @property
    def last_seq(self) -> int:
        """The sequence number of the newest item (0 before the first)."""
        return self._last

    def since(self, seq: int, *, at_most: int | None = None) -> tuple[list[ActivityItem], int]:
        """The items after ``seq`` (oldest first) and how many of those were already evicted.

        ``at_most`` keeps only the newest that many (the rest count as missed).
        """
        with self._lock:
            items = [i for i in self._items if i.seq > seq]
            refused = [i for i in self._refused if i.seq > seq]
            last = self._last
        if refused:
            items = sorted(items + refused, key=lambda i: i.seq)
        if at_most is not None and len(items) > at_most:
            items = items[len(items) - at_most :]
        missed = last - seq - len(items) if last > seq else 0
        return items, missed

    async def wait(self, seq: int) -> None:
        """Return once the feed holds an item after ``seq`` (at once if it already does)."""
        if self._loop is None:
            self._loop = asyncio.get_running_loop()
        while self._last <= seq:
            await self._changed.wait()
