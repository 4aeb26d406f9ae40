"""The audit log and its durable sinks (JSON Lines, SQLite, PostgreSQL).

These are the audit part's public names (the ``agent`` namespace and the front door
re-export them whole); each is defined in one module of the part: the log in :mod:`.log`,
the record in :mod:`.entry` and :mod:`.record`, the sink protocol in :mod:`.forward`, and
one module per sink."""

from __future__ import annotations

from .encode import UNRECORDABLE
from .entry import AuditEntry
from .forward import AuditSink, AuditSinkError, AuditTicket
from .jsonl import JsonlAuditSink
from .keys import KeyStore, MemoryKeys
from .log import AuditLog, audit_log
from .postgres import PostgresAuditSink
from .record import REDACTED, redact
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
    "KeyStore",
    "MemoryKeys",
    "PostgresAuditSink",
    "SqliteAuditSink",
    "audit_log",
    "redact",
]
