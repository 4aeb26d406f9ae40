"""The audit log and its durable sinks (JSON Lines, SQLite, PostgreSQL)."""

from __future__ import annotations

from .encode import UNRECORDABLE
from .jsonl import JsonlAuditSink
from .log import (
    REDACTED,
    AuditEntry,
    AuditLog,
    AuditSink,
    AuditSinkError,
    AuditTicket,
    audit_log,
    redact,
)
from .postgres import PostgresAuditSink
from .sqlite import SqliteAuditSink

__all__ = [
    "REDACTED",
    "UNRECORDABLE",
    "AuditEntry",
    "AuditLog",
    "AuditSink",
    "AuditSinkError",
    "AuditTicket",
    "JsonlAuditSink",
    "PostgresAuditSink",
    "SqliteAuditSink",
    "audit_log",
    "redact",
]
