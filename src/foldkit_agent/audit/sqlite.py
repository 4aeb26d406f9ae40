"""The SQLite audit sink: stdlib ``sqlite3`` in WAL mode, batched, with a ``query()`` reader."""

from __future__ import annotations

import json
import os
import queue
import sqlite3
import threading
from datetime import datetime
from pathlib import Path
from typing import Any, Literal, cast

from .log import DECISIONS, AuditEntry, AuditSinkError, Decision, iso_time, json_text

__all__ = ["SqliteAuditSink"]


_SCHEMA = (
    """
    CREATE TABLE IF NOT EXISTS audit_entries (
        id            INTEGER PRIMARY KEY,
        at            TEXT NOT NULL,  -- UTC ISO 8601 with microseconds: text order = time order
        invocation_id TEXT NOT NULL,
        transport     TEXT NOT NULL,
        capability    TEXT NOT NULL,
        tag           TEXT,
        principal     TEXT,           -- JSON, or NULL
        decision      TEXT NOT NULL,  -- dispatched | refused | unknown
        outcome       TEXT NOT NULL,  -- ok | completed | failed | the error tag
        input         TEXT            -- JSON, or NULL
    )
    """,
    "CREATE INDEX IF NOT EXISTS audit_entries_at ON audit_entries (at)",
    "CREATE INDEX IF NOT EXISTS audit_entries_capability_at ON audit_entries (capability, at)",
)
_INSERT = (
    "INSERT INTO audit_entries (at, invocation_id, transport, capability, tag, principal, "
    "decision, outcome, input) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)"
)
_COLUMNS = "at, invocation_id, transport, capability, tag, principal, decision, outcome, input"
_SCHEMA_VERSION = 1

_Job = tuple[list[AuditEntry] | None, threading.Event, list[BaseException]]


class SqliteAuditSink:
    """Store entries in a SQLite database (stdlib ``sqlite3``, WAL journal).

    One dedicated thread owns the write connection: it creates the schema, and each
    ``write(batch)`` is handed to it and committed as one transaction before ``write``
    returns, so a failure raises in the caller (the audit thread, which counts it). Behind
    :class:`AuditLog`, bursts of entries arrive as batches of up to 1000. A committed batch
    survives the process being killed (WAL with ``synchronous=NORMAL``; pass
    ``synchronous="FULL"`` to survive power loss too). :meth:`query` reads on its own
    short-lived connection, so it never waits for the writer.

    Table ``audit_entries``: ``id``, ``at`` (UTC ISO 8601 text, fixed width), ``invocation_id``,
    ``transport``, ``capability``, ``tag``, ``principal`` (JSON), ``decision``, ``outcome``,
    ``input`` (JSON); indexed on ``at`` and on ``(capability, at)``.

    Args:
        path: the database file; created (with parent directories) when missing.
        synchronous: ``"NORMAL"`` (default) or ``"FULL"``.

    Raises:
        AuditSinkError: the database cannot be opened or its schema created.

    Example:
        >>> sink = SqliteAuditSink("audit.db")
        >>> audit = agent.audit_log(sink=sink)
        >>> ...
        >>> audit.close()                      # flushes, then closes the sink
        >>> sink.query(capability="delete_todo", decision="refused")
        [AuditEntry(...), ...]
    """

    def __init__(
        self, path: str | os.PathLike[str], *, synchronous: Literal["NORMAL", "FULL"] = "NORMAL"
    ) -> None:
        if synchronous not in ("NORMAL", "FULL"):
            raise ValueError("synchronous must be 'NORMAL' or 'FULL'")
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._synchronous = synchronous
        self._jobs: queue.SimpleQueue[_Job] = queue.SimpleQueue()
        self._closed = False
        self._close_lock = threading.Lock()
        ready = threading.Event()
        startup: list[BaseException] = []
        self._thread = threading.Thread(
            target=self._run, args=(ready, startup), name="foldkit-agent-audit-sqlite", daemon=True
        )
        self._thread.start()
        ready.wait()
        if startup:
            raise AuditSinkError(
                f"cannot open the audit database {self.path}: {startup[0]}"
            ) from startup[0]

    # -- the writer thread ------------------------------------------------------------------------

    def _run(self, ready: threading.Event, startup: list[BaseException]) -> None:
        try:
            conn = sqlite3.connect(self.path, isolation_level=None)
            conn.execute("PRAGMA journal_mode=WAL")
            conn.execute(f"PRAGMA synchronous={self._synchronous}")
            conn.execute("BEGIN IMMEDIATE")
            for statement in _SCHEMA:
                conn.execute(statement)
            conn.execute(f"PRAGMA user_version={_SCHEMA_VERSION}")
            conn.execute("COMMIT")
        except BaseException as exc:
            startup.append(exc)
            ready.set()
            return
        ready.set()
        try:
            while True:
                batch, done, errors = self._jobs.get()
                if batch is None:
                    done.set()
                    return
                try:
                    rows = [_row(e) for e in batch]
                    conn.execute("BEGIN")
                    try:
                        conn.executemany(_INSERT, rows)
                        conn.execute("COMMIT")
                    except BaseException:
                        conn.execute("ROLLBACK")
                        raise
                except BaseException as exc:
                    errors.append(exc)
                finally:
                    done.set()
        finally:
            conn.close()

    # -- the sink --------------------------------------------------------------------------------

    def write(self, entries: list[AuditEntry], /) -> None:
        """Commit ``entries`` as one transaction; returns once they are durable.

        Raises:
            AuditSinkError: the sink is closed, or SQLite refused the batch (nothing of the
                batch is stored then).
        """
        if not entries:
            return
        done = threading.Event()
        errors: list[BaseException] = []
        with self._close_lock:  # a job is never queued behind the closing sentinel
            if self._closed:
                raise AuditSinkError(f"the audit database {self.path} is closed")
            self._jobs.put((list(entries), done, errors))
        done.wait()
        if errors:
            raise AuditSinkError(
                f"storing {len(entries)} audit entries failed: {errors[0]}"
            ) from errors[0]

    def close(self) -> None:
        """Finish the writes handed over so far, then close the connection; idempotent."""
        done = threading.Event()
        with self._close_lock:
            if self._closed:
                return
            self._closed = True
            self._jobs.put((None, done, []))
        done.wait()
        self._thread.join()

    @property
    def closed(self) -> bool:
        """Whether :meth:`close` was called."""
        return self._closed

    # -- reading -----------------------------------------------------------------------------------

    def query(
        self,
        *,
        since: datetime | None = None,
        until: datetime | None = None,
        capability: str | None = None,
        decision: Decision | None = None,
        limit: int | None = None,
    ) -> list[AuditEntry]:
        """Stored entries matching every filter given, oldest first.

        Reads what has been committed (use ``AuditLog.flush()`` first to include recent
        entries); works after :meth:`close` and from any thread.

        Args:
            since: only entries at or after this aware datetime.
            until: only entries before this aware datetime.
            capability: only this capability name.
            decision: only ``"dispatched"``, ``"refused"`` or ``"unknown"``.
            limit: at most this many (the oldest matching).

        Raises:
            ValueError: a naive datetime, an unknown decision, or a negative limit.
            AuditSinkError: the database cannot be read.

        Example:
            >>> sink.query(since=datetime.now(UTC) - timedelta(hours=1), decision="refused")
        """
        where: list[str] = []
        args: list[Any] = []
        for op, bound in ((">=", since), ("<", until)):
            if bound is not None:
                if bound.tzinfo is None:
                    raise ValueError("since/until must be timezone-aware datetimes")
                where.append(f"at {op} ?")
                args.append(iso_time(bound))
        if capability is not None:
            where.append("capability = ?")
            args.append(capability)
        if decision is not None:
            if decision not in DECISIONS:
                raise ValueError(f"decision must be one of {sorted(DECISIONS)}, not {decision!r}")
            where.append("decision = ?")
            args.append(decision)
        sql = f"SELECT {_COLUMNS} FROM audit_entries"
        if where:
            sql += " WHERE " + " AND ".join(where)
        sql += " ORDER BY at, id"
        if limit is not None:
            if limit < 0:
                raise ValueError("limit must not be negative")
            sql += " LIMIT ?"
            args.append(limit)
        try:
            conn = sqlite3.connect(f"{self.path.resolve().as_uri()}?mode=ro", uri=True)
            try:
                rows = conn.execute(sql, args).fetchall()
            finally:
                conn.close()
        except sqlite3.Error as exc:
            raise AuditSinkError(f"cannot read the audit database {self.path}: {exc}") from exc
        return [_entry(cast(tuple[Any, ...], r)) for r in rows]


def _row(e: AuditEntry) -> tuple[Any, ...]:
    return (
        iso_time(e.at),
        e.invocation_id,
        e.transport,
        e.capability,
        e.tag,
        json_text(e.principal),
        e.decision,
        e.outcome,
        json_text(e.input),
    )


def _entry(row: tuple[Any, ...]) -> AuditEntry:
    at, invocation_id, transport, capability, tag, principal, decision, outcome, inp = row
    return AuditEntry(
        at=datetime.fromisoformat(at),
        invocation_id=invocation_id,
        transport=transport,
        capability=capability,
        tag=tag,
        principal=None if principal is None else json.loads(principal),
        decision=decision,
        outcome=outcome,
        input=None if inp is None else json.loads(inp),
    )
