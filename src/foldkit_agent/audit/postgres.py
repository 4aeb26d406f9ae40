"""The PostgreSQL audit sink (psycopg 3): the SQLite sink's table, batching and ``query()``.

psycopg is imported when a sink is made, so ``from foldkit_agent import PostgresAuditSink``
works without it; install it with ``pip install 'foldkit-agent[postgres]'``.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, LiteralString, cast

from ..errors import needs_extra
from .keys import SqlKeys
from .store import ADDED_COLUMNS, COLUMNS, DatabaseAuditSink, schema

if TYPE_CHECKING:
    import psycopg

__all__ = ["PostgresAuditSink"]

_SCHEMA = (
    *schema(
        key="BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY",
        time="TIMESTAMPTZ",
        json="JSONB",
        seconds="DOUBLE PRECISION",
    ),
    # a table made before the added columns existed gains them
    *(
        f"ALTER TABLE audit_entries ADD COLUMN IF NOT EXISTS {c} {kind}"
        for c, kind in ADDED_COLUMNS
    ),
)
_COPY = f"COPY audit_entries ({', '.join(COLUMNS)}) FROM STDIN"
_SCHEMA_LOCK = 0x666B_6175_6469_74  # pg_advisory_xact_lock key: workers create the table once


class PostgresAuditSink(DatabaseAuditSink):
    """Store entries in PostgreSQL (psycopg 3), for audit shared by several workers.

    Same table, batching and :meth:`query` as :class:`SqliteAuditSink`, with ``at`` as
    ``TIMESTAMPTZ`` and ``principal``/``input`` as ``JSONB`` (numbers are kept as numerics: a
    float written in exponent form, such as ``1e16``, reads back as the int of that value).
    One writer thread owns one connection and commits each batch as one transaction; a
    connection that broke (the server restarted) is replaced on the next batch, and the failed
    batch is counted on the log.
    Several processes may share one database: the schema is created under an advisory lock.
    Table ``idempotency_keys`` keeps the idempotency keys (:meth:`idempotency_keys`).

    With ``durable=True`` an invocation's answer is released only once its entry is committed
    (group commit: the invocations pending while one batch commits share the next); a commit
    is flushed to PostgreSQL's WAL (``synchronous_commit``, on by default), so it survives a
    crash of either process.

    Args:
        dsn: a libpq connection string or URI (``"postgresql://audit@db/app"``,
            ``"host=/run/postgresql dbname=app"``).
        durable: answer each call only after its entry is committed.
        connect_timeout: seconds to wait for a connection, unless ``dsn`` sets its own.

    Raises:
        AuditSinkError: the database cannot be reached or the table created.
        MissingExtra: psycopg is not installed (its text says
            ``pip install 'foldkit-agent[postgres]'``).

    Example:
        >>> sink = PostgresAuditSink("postgresql://audit@db/app", durable=True)
        >>> audit = agent.audit_log(principal=lambda u: u.id, sink=sink)
        >>> sink.query(capability="delete_todo", decision="refused", limit=50)
        [AuditEntry(...), ...]
    """

    placeholder = "%s"

    def __init__(self, dsn: str, *, durable: bool = False, connect_timeout: float = 10.0) -> None:
        with needs_extra(__name__):
            import psycopg
            from psycopg.conninfo import conninfo_to_dict

        self._psycopg = psycopg
        self._dsn = dsn
        self._options: dict[str, Any] = {"application_name": "foldkit-agent-audit"}
        if "connect_timeout" not in conninfo_to_dict(dsn):
            self._options["connect_timeout"] = max(1, round(connect_timeout))
        super().__init__(durable=durable, where="the PostgreSQL audit database")

    def _open(self) -> psycopg.Connection[tuple[Any, ...]]:
        return self._psycopg.connect(self._dsn, autocommit=True, **self._options)

    def idempotency_keys(self) -> SqlKeys:
        """The idempotency keys kept in this database (table ``idempotency_keys``, made with
        the audit table), for :class:`~foldkit_agent.runtime.IdempotencyKeys`: every worker
        sharing the database sees them. Its own connection, made again after a failure.

        Example:
            >>> rt.idempotency = IdempotencyKeys(sink.idempotency_keys())
        """
        return SqlKeys(self._open, "%s")

    def _connect(self) -> psycopg.Connection[tuple[Any, ...]]:
        conn = self._open()
        try:
            with conn.transaction():
                conn.execute("SELECT pg_advisory_xact_lock(%s)", (_SCHEMA_LOCK,))
                for statement in _SCHEMA:
                    conn.execute(cast(LiteralString, statement))  # constants only
        except BaseException:
            conn.close()
            raise
        return conn

    def _insert(self, conn: Any, rows: list[tuple[Any, ...]]) -> None:
        db = cast("psycopg.Connection[tuple[Any, ...]]", conn)
        # COPY: about three times the rows per second of executemany at 1,000 a batch.
        with db.transaction(), db.cursor() as cur, cur.copy(cast(LiteralString, _COPY)) as copy:
            for row in rows:
                copy.write_row(row)

    def _broken(self, conn: Any) -> bool:
        db = cast("psycopg.Connection[tuple[Any, ...]]", conn)
        return db.closed or db.broken

    def _disconnect(self, conn: Any) -> None:
        cast("psycopg.Connection[tuple[Any, ...]]", conn).close()

    def _select(self, sql: str, args: Sequence[Any]) -> list[tuple[Any, ...]]:
        with self._open() as conn:
            return conn.execute(cast(LiteralString, sql), args).fetchall()  # constants only

    def _time(self, at: datetime) -> datetime:
        return at

    def _read_time(self, value: Any) -> datetime:
        return cast(datetime, value).astimezone(UTC)

    def _read_json(self, value: Any) -> Any:
        return value  # psycopg decodes jsonb
