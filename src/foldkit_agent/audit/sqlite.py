"""The SQLite audit sink: stdlib ``sqlite3`` in WAL mode, batched, with a ``query()`` reader."""

from __future__ import annotations

import json
import os
import sqlite3
from collections.abc import Sequence
from datetime import datetime
from pathlib import Path
from typing import Any, Literal, cast

from .entry import iso_time
from .keys import SqlKeys
from .store import ADDED_COLUMNS, COLUMNS, DatabaseAuditSink, schema

__all__ = ["SqliteAuditSink"]


# ``at`` as UTC ISO 8601 text with microseconds (fixed width: text order = time order)
_SCHEMA = schema(key="INTEGER PRIMARY KEY", time="TEXT", json="TEXT", seconds="REAL")
_SCHEMA_VERSION = 6  # 2: the approval columns; 3: what the person was asked, and how often;
# 4: the idempotency_keys table; 5: the actor column;
# 6: who declined
_INSERT = (
    f"INSERT INTO audit_entries ({', '.join(COLUMNS)}) VALUES ({', '.join('?' for _ in COLUMNS)})"
)


class SqliteAuditSink(DatabaseAuditSink):
    """Store entries in a SQLite database (stdlib ``sqlite3``, WAL journal).

    One dedicated thread owns the write connection: it creates the schema, and each
    ``write(batch)`` is handed to it and committed as one transaction before ``write``
    returns, so a failure raises in the caller (the audit thread, which counts it). Behind
    :class:`AuditLog`, bursts of entries arrive as batches of up to 1000. A committed batch
    survives the process being killed (WAL with ``synchronous=NORMAL``; pass
    ``synchronous="FULL"`` to survive power loss too). :meth:`query` reads on its own
    short-lived connection, so it never waits for the writer.

    With ``durable=True`` an invocation's answer is released only once its entry is committed
    (group commit: the invocations pending while one batch commits share the next), so after a
    crash no answered call is missing. It costs each call one commit's wait; see
    ``docs/reliability.md`` for the measured cost and what happens when the database fails.

    Table ``audit_entries``: ``id``, ``at`` (UTC ISO 8601 text, fixed width), ``invocation_id``,
    ``transport``, ``capability``, ``tag``, ``principal`` (JSON), ``decision``, ``outcome``,
    ``input`` (JSON), ``approval``, ``approved_by``, ``approval_text``, ``approval_asks``,
    ``actor``, ``declined_by``; indexed on ``at`` and on ``(capability, at)``. A database
    written before those columns existed gains them when a sink opens it (schema version 6;
    old rows read ``None``).
    Table ``idempotency_keys`` (schema version 4) keeps the idempotency keys
    (:meth:`idempotency_keys`).

    Args:
        path: the database file; created (with parent directories) when missing.
        synchronous: ``"NORMAL"`` (default: a commit survives the process being killed) or
            ``"FULL"`` (an ``fsync`` per commit: survives power loss too).
        durable: answer each call only after its entry is committed.

    Raises:
        AuditSinkError: the database cannot be opened or its schema created.

    Example:
        >>> sink = SqliteAuditSink("audit.db", durable=True)
        >>> audit = agent.audit_log(sink=sink)
        >>> ...
        >>> audit.close()                      # flushes, then closes the sink
        >>> sink.query(capability="delete_todo", decision="refused")
        [AuditEntry(...), ...]
    """

    def __init__(
        self,
        path: str | os.PathLike[str],
        *,
        synchronous: Literal["NORMAL", "FULL"] = "NORMAL",
        durable: bool = False,
    ) -> None:
        if synchronous not in ("NORMAL", "FULL"):
            raise ValueError("synchronous must be 'NORMAL' or 'FULL'")
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._synchronous = synchronous
        super().__init__(durable=durable, where=f"the audit database {self.path}")

    def idempotency_keys(self) -> SqlKeys:
        """The idempotency keys kept in this database (table ``idempotency_keys``, made with
        the audit table), for :class:`~foldkit_agent.runtime.IdempotencyKeys`: every process
        using the file sees them. Its own connection; waits up to 10 s for a writer's lock.

        Example:
            >>> rt.idempotency = IdempotencyKeys(sink.idempotency_keys())
        """
        path = self.path

        def connect() -> sqlite3.Connection:
            return sqlite3.connect(path, isolation_level=None, check_same_thread=False, timeout=10)

        return SqlKeys(connect, "?")

    def _connect(self) -> sqlite3.Connection:
        conn = sqlite3.connect(self.path, isolation_level=None)
        try:
            conn.execute("PRAGMA journal_mode=WAL")
            conn.execute(f"PRAGMA synchronous={self._synchronous}")
            conn.execute("BEGIN IMMEDIATE")
            for statement in _SCHEMA:
                conn.execute(statement)
            have = {row[1] for row in conn.execute("PRAGMA table_info(audit_entries)")}
            for column, kind in ADDED_COLUMNS:
                if column not in have:
                    conn.execute(f"ALTER TABLE audit_entries ADD COLUMN {column} {kind}")
            conn.execute(f"PRAGMA user_version={_SCHEMA_VERSION}")
            conn.execute("COMMIT")
        except BaseException:
            conn.close()
            raise
        return conn

    def _insert(self, conn: Any, rows: list[tuple[Any, ...]]) -> None:
        db = cast(sqlite3.Connection, conn)
        db.execute("BEGIN")
        try:
            db.executemany(_INSERT, rows)
            db.execute("COMMIT")
        except BaseException:
            db.execute("ROLLBACK")
            raise

    def _disconnect(self, conn: Any) -> None:
        cast(sqlite3.Connection, conn).close()

    def _select(self, sql: str, args: Sequence[Any]) -> list[tuple[Any, ...]]:
        conn = sqlite3.connect(f"{self.path.resolve().as_uri()}?mode=ro", uri=True)
        try:
            return conn.execute(sql, args).fetchall()
        finally:
            conn.close()

    def _time(self, at: datetime) -> str:
        return iso_time(at)

    def _read_time(self, value: Any) -> datetime:
        return datetime.fromisoformat(value)

    def _read_json(self, value: Any) -> Any:
        return json.loads(value)
