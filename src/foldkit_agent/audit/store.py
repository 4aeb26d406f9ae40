"""What the database sinks share: one table, one row mapping, one batching writer, one reader.

:class:`SqliteAuditSink` and :class:`PostgresAuditSink` differ only in how they connect, how a
batch is inserted and committed, how a query is run, and how a time and a JSON column are
passed; everything else is here, so the two stores hold the same rows and answer
:meth:`DatabaseAuditSink.query` alike.

Table ``audit_entries``: ``id`` (ascending in insertion order), ``at`` (UTC), ``invocation_id``,
``transport``, ``capability``, ``tag``, ``principal`` (JSON), ``decision``, ``outcome``,
``input`` (JSON), ``approval``, ``approved_by``, ``approval_text``, ``approval_asks``,
``actor``, ``declined_by``; indexed on ``at`` and on ``(capability, at)``. A table written
before the approval columns (or the actor, or who declined) existed gains them (NULL in its
old rows) when a sink connects.
"""

from __future__ import annotations

import queue
import threading
from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from datetime import datetime
from typing import Any

from .encode import json_text, storable_text
from .entry import DECISIONS, FIELDS, AuditEntry, Decision
from .forward import AuditSinkError

__all__ = ["ADDED_COLUMNS", "COLUMNS", "DatabaseAuditSink", "schema"]

COLUMNS = FIELDS
"""The stored columns besides ``id``, in row order."""

ADDED_COLUMNS = (
    ("approval", "TEXT"),
    ("approved_by", "TEXT"),
    ("approval_text", "TEXT"),
    ("approval_asks", "INTEGER"),
    ("actor", "TEXT"),
    ("declined_by", "TEXT"),
)
"""Columns added after the first schema, in order; a sink adds them to an older table."""

_SCHEMA = (
    """
    CREATE TABLE IF NOT EXISTS audit_entries (
        id            {key},
        at            {time} NOT NULL,
        invocation_id TEXT NOT NULL,
        transport     TEXT NOT NULL,
        capability    TEXT NOT NULL,
        tag           TEXT,
        principal     {json},
        decision      TEXT NOT NULL,  -- dispatched | refused | unknown
        outcome       TEXT NOT NULL,  -- ok | completed | failed | the error tag
        input         {json},
        approval      TEXT,           -- approved | declined | timeout | unavailable | stale
        approved_by   TEXT,           -- who approved, or NULL
        approval_text TEXT,           -- what the person was asked, or NULL
        approval_asks INTEGER,        -- how many times they were asked, or NULL
        actor         TEXT,           -- agent | view (who pressed it), or NULL
        declined_by   TEXT            -- who declined, or NULL
    )
    """,
    "CREATE INDEX IF NOT EXISTS audit_entries_at ON audit_entries (at)",
    "CREATE INDEX IF NOT EXISTS audit_entries_capability_at ON audit_entries (capability, at)",
    # idempotency keys (foldkit_agent.audit.keys), kept with the audit so every worker and
    # every later process sees them
    """
    CREATE TABLE IF NOT EXISTS idempotency_keys (
        key         TEXT PRIMARY KEY,  -- hash of the caller, the capability and the key
        capability  TEXT NOT NULL,
        fingerprint TEXT NOT NULL,     -- hash of the first call's decoded input
        state       TEXT NOT NULL,     -- running | done
        owner       TEXT NOT NULL,     -- the process running the first call
        lease_until {seconds} NOT NULL,  -- epoch seconds: the owner vouches it is alive
        expires_at  {seconds} NOT NULL,  -- epoch seconds
        outcome     TEXT               -- JSON, once done
    )
    """,
    "CREATE INDEX IF NOT EXISTS idempotency_keys_expires_at ON idempotency_keys (expires_at)",
)


def schema(*, key: str, time: str, json: str, seconds: str) -> tuple[str, ...]:
    """The statements that create both tables and their indexes, in one database's types.

    Args:
        key: the ``id`` column (an ascending integer key).
        time: the ``at`` column's type.
        json: the type of the JSON columns (``principal``, ``input``; NULL allowed).
        seconds: the type of the epoch-seconds columns of ``idempotency_keys``.

    Example:
        >>> schema(key="INTEGER PRIMARY KEY", time="TEXT", json="TEXT", seconds="REAL")[1]
        'CREATE INDEX IF NOT EXISTS audit_entries_at ON audit_entries (at)'
    """
    types = {"key": key, "time": time, "json": json, "seconds": seconds}
    return tuple(statement.format_map(types) for statement in _SCHEMA)


def _text_or_none(value: str | None) -> str | None:
    return None if value is None else storable_text(value)


def _as_is(value: Any) -> Any:
    return value


_JSON = frozenset({"principal", "input"})
"""The columns stored as JSON (any value the entry holds); the others are text."""
_CHECKED = frozenset({"decision", "approval", "approval_asks"})
"""Columns from a closed set of values (never from the wire), stored as they are."""
_STORED: tuple[tuple[str, Callable[[Any], Any] | None], ...] = tuple(
    (
        name,
        None  # the time: as the driver stores it (DatabaseAuditSink._time)
        if name == "at"
        else json_text
        if name in _JSON
        else _as_is
        if name in _CHECKED
        else _text_or_none,
    )
    for name in COLUMNS
)
"""How each column of :data:`COLUMNS` is written down, in order."""

_Job = tuple[list[AuditEntry] | None, threading.Event, list[BaseException]]


class DatabaseAuditSink(ABC):
    """A sink whose one writer thread owns the write connection; the shared part.

    Each ``write(batch)`` is handed to the writer thread and committed as one transaction
    before ``write`` returns, so a failure raises in the caller (the audit log's thread, which
    counts it). Behind :class:`~foldkit_agent.audit.AuditLog`, whatever is pending when the
    writer is free goes in one batch (up to 1000 entries): concurrent invocations share a
    commit. A connection that broke is replaced on the next batch.

    Attributes:
        durable: answers wait for their entry to be committed (see ``AuditLog.committed``).
    """

    placeholder = "?"
    """The driver's parameter marker."""

    def __init__(self, *, durable: bool, where: str) -> None:
        self.durable = durable
        self._where = where
        self._jobs: queue.SimpleQueue[_Job] = queue.SimpleQueue()
        self._closed = False
        self._close_lock = threading.Lock()
        ready = threading.Event()
        startup: list[BaseException] = []
        self._thread = threading.Thread(
            target=self._run,
            args=(ready, startup),
            name=f"foldkit-agent-audit-{type(self).__name__}",
            daemon=True,
        )
        self._thread.start()
        ready.wait()
        if startup:
            raise AuditSinkError(f"cannot open {where}: {startup[0]}") from startup[0]

    # -- what each database supplies ---------------------------------------------------------

    @abstractmethod
    def _connect(self) -> Any:
        """A new write connection, with the schema in place (runs on the writer thread)."""

    @abstractmethod
    def _insert(self, conn: Any, rows: list[tuple[Any, ...]]) -> None:
        """Insert ``rows`` (values in :data:`COLUMNS` order) and commit, as one transaction;
        raise on failure."""

    @abstractmethod
    def _disconnect(self, conn: Any) -> None:
        """Close a write connection."""

    @abstractmethod
    def _select(self, sql: str, args: Sequence[Any]) -> list[tuple[Any, ...]]:
        """Run a read-only query on a connection of its own."""

    def _broken(self, conn: Any) -> bool:
        """Whether ``conn`` must be replaced after a failed batch."""
        return False

    @abstractmethod
    def _time(self, at: datetime) -> Any:
        """``at`` as the driver stores it."""

    @abstractmethod
    def _read_time(self, value: Any) -> datetime:
        """A stored ``at`` back as an aware UTC datetime."""

    @abstractmethod
    def _read_json(self, value: Any) -> Any:
        """A stored JSON column (never ``NULL``) back as data."""

    # -- the writer thread -------------------------------------------------------------------

    def _run(self, ready: threading.Event, startup: list[BaseException]) -> None:
        try:
            conn: Any = self._connect()
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
                    if conn is None:
                        conn = self._connect()
                    self._insert(conn, [self._row(e) for e in batch])
                except BaseException as exc:
                    errors.append(exc)
                    if conn is not None and self._broken(conn):
                        self._disconnect(conn)
                        conn = None
                finally:
                    done.set()
        finally:
            if conn is not None:
                self._disconnect(conn)

    def _row(self, e: AuditEntry) -> tuple[Any, ...]:
        """The stored row of ``e``: each column encoded as :data:`_STORED` says."""
        return tuple(
            self._time(e.at) if how is None else how(getattr(e, name)) for name, how in _STORED
        )

    def _entry(self, row: Sequence[Any]) -> AuditEntry:
        values = dict(zip(COLUMNS, row, strict=False))
        values["at"] = self._read_time(values["at"])
        for name in _JSON:
            if values[name] is not None:
                values[name] = self._read_json(values[name])
        return AuditEntry(**values)

    # -- the sink ----------------------------------------------------------------------------

    def write(self, entries: list[AuditEntry], /) -> None:
        """Commit ``entries`` as one transaction; returns once they are stored.

        Raises:
            AuditSinkError: the sink is closed, or the database refused the batch (nothing of
                the batch is stored then).
        """
        if not entries:
            return
        done = threading.Event()
        errors: list[BaseException] = []
        with self._close_lock:  # a job is never queued behind the closing sentinel
            if self._closed:
                raise AuditSinkError(f"{self._where} is closed")
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

    # -- reading -----------------------------------------------------------------------------

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
        mark = self.placeholder
        where: list[str] = []
        args: list[Any] = []
        for op, bound in ((">=", since), ("<", until)):
            if bound is not None:
                if bound.tzinfo is None:
                    raise ValueError("since/until must be timezone-aware datetimes")
                where.append(f"at {op} {mark}")
                args.append(self._time(bound))
        if capability is not None:
            where.append(f"capability = {mark}")
            args.append(capability)
        if decision is not None:
            if decision not in DECISIONS:
                raise ValueError(f"decision must be one of {sorted(DECISIONS)}, not {decision!r}")
            where.append(f"decision = {mark}")
            args.append(decision)
        sql = f"SELECT {', '.join(COLUMNS)} FROM audit_entries"
        if where:
            sql += " WHERE " + " AND ".join(where)
        sql += " ORDER BY at, id"
        if limit is not None:
            if limit < 0:
                raise ValueError("limit must not be negative")
            sql += f" LIMIT {mark}"
            args.append(limit)
        try:
            rows = self._select(sql, args)
        except Exception as exc:
            raise AuditSinkError(f"cannot read {self._where}: {exc}") from exc
        return [self._entry(r) for r in rows]
