"""The database audit stores under test, each with a way to make it refuse a batch."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from foldkit_agent import PostgresAuditSink, SqliteAuditSink
from foldkit_agent.audit.store import DatabaseAuditSink


@dataclass
class Database:
    """One store: ``make(durable=...)`` opens a sink on it; ``refuse(capability)`` installs a
    rule that makes the store refuse any batch holding that capability."""

    kind: str
    make: Callable[..., DatabaseAuditSink]
    refuse: Callable[[str], None]
    target: str  # the file or the DSN


def sqlite_database(path: Path) -> Database:
    def refuse(capability: str) -> None:
        conn = sqlite3.connect(path)
        conn.execute(
            "CREATE TRIGGER refuse BEFORE INSERT ON audit_entries "
            f"WHEN NEW.capability = '{capability}' "
            "BEGIN SELECT RAISE(ABORT, 'refused by the store'); END"
        )
        conn.commit()
        conn.close()

    return Database("sqlite", lambda **kw: SqliteAuditSink(path, **kw), refuse, str(path))


def postgres_database(dsn: str) -> Database:
    def refuse(capability: str) -> None:
        import psycopg

        with psycopg.connect(dsn, autocommit=True) as conn:
            conn.execute(
                "ALTER TABLE audit_entries ADD CONSTRAINT refuse "  # pyright: ignore[reportArgumentType]
                f"CHECK (capability <> '{capability}')"
            )

    return Database("postgres", lambda **kw: PostgresAuditSink(dsn, **kw), refuse, dsn)
