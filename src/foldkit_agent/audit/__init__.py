"""The audit log and its durable sinks (JSON Lines, SQLite)."""

from __future__ import annotations

from .jsonl import (
    JsonlAuditSink,
)
from .log import (
    REDACTED,
    UNRECORDABLE,
    AuditEntry,
    AuditLog,
    AuditSink,
    AuditSinkError,
    audit_log,
    redact,
)
from .sqlite import (
    SqliteAuditSink,
)

__all__ = [
    "REDACTED",
    "UNRECORDABLE",
    "AuditEntry",
    "AuditLog",
    "AuditSink",
    "AuditSinkError",
    "JsonlAuditSink",
    "SqliteAuditSink",
    "audit_log",
    "redact",
]
