"""The audit record: one :class:`AuditEntry` per invocation, and its field list.

:data:`FIELDS` is the one list of the record's fields, in order: the log captures a decision
in that order, the database sinks store those columns, the JSON Lines sink and
:meth:`AuditEntry.to_json` write those keys.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass, fields
from datetime import UTC, datetime
from typing import Any, Literal

__all__ = [
    "APPROVALS",
    "DECISIONS",
    "FIELDS",
    "AuditEntry",
    "Decision",
    "Row",
    "entry_of",
    "iso_time",
]

Decision = Literal["dispatched", "refused", "unknown"]
DECISIONS: frozenset[str] = frozenset({"dispatched", "refused", "unknown"})
APPROVALS: frozenset[str] = frozenset({"approved", "declined", "timeout", "unavailable", "stale"})
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
        principal: what ``audit_log(principal=...)`` recorded of the caller, or ``None``.
        decision: ``"dispatched"``, ``"refused"`` or ``"unknown"``.
        outcome: ``"ok"``, ``"completed"``, ``"failed"``, or the error tag.
        input: the (redacted) input when ``include_input=True``, else ``None``.
        approval: for a capability declared with ``confirm``: ``"approved"``,
            ``"declined"``, ``"timeout"`` or ``"unavailable"`` (no person could be asked);
            ``None`` when nobody was asked (no ``confirm``, its predicate said no, or the call
            ended before the question, or was cancelled while it was open).
            ``"stale"``: the Model changed while the person decided, again after they were
            asked once more, so nothing was sent.
        approved_by: who approved (``Approval.by``), only when ``approval == "approved"``.
        approval_text: what the person was asked, in one line (the variant's ``describe=``
            sentence, else the title and the input fields; ``ApprovalRequest.shown``), as
            visible text; ``None`` when nobody was asked.
        approval_asks: how many times the person was asked: ``1``, or ``2`` when they were
            asked again because the Model changed while they decided (re-asked) or they
            edited the input; ``None`` when nobody was asked.
        actor: who pressed the call, as its transport was told (``Invocation.actor``: on MCP
            ``"agent"`` or ``"view"``); ``None`` when the transport says nothing.
        declined_by: who declined (``Approval.by``), only when ``approval == "declined"``.
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
    approval_text: str | None = None
    approval_asks: int | None = None
    actor: str | None = None
    declined_by: str | None = None

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
        missing = next((name for name in _REQUIRED if name not in data), None)
        if missing is not None:
            raise ValueError(f"audit entry lacks {missing!r}")
        at = datetime.fromisoformat(data["at"])
        decision = data["decision"]
        if decision not in DECISIONS:
            raise ValueError(f"unknown audit decision {decision!r}")
        approval = data.get("approval")
        if approval is not None and approval not in APPROVALS:
            raise ValueError(f"unknown audit approval {approval!r}")
        values: dict[str, Any] = {name: data.get(name) for name in FIELDS}
        values["at"] = at if at.tzinfo is not None else at.replace(tzinfo=UTC)
        return cls(**values)


FIELDS: tuple[str, ...] = tuple(f.name for f in fields(AuditEntry))
"""The record's fields, in order (``at`` first)."""

_REQUIRED = ("at", "invocation_id", "transport", "capability", "decision", "outcome")
"""The fields every stored entry has; the others read as ``None`` when absent."""

Row = tuple[Any, ...]
"""One decision as the log captures it: the :data:`FIELDS` in order, ``at`` as a POSIX
timestamp (seconds). :func:`entry_of` makes it the :class:`AuditEntry`."""


def entry_of(row: Row) -> AuditEntry:
    """The :class:`AuditEntry` of a captured row (the one place a row becomes an entry)."""
    return AuditEntry(datetime.fromtimestamp(row[0], UTC), *row[1:])


def iso_time(at: datetime) -> str:
    """Fixed-width UTC ISO 8601, so text order is time order."""
    return at.astimezone(UTC).isoformat(timespec="microseconds")
