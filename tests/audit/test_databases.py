"""The database sinks (SQLite and PostgreSQL): one table, one batching writer, one reader.

Every test here runs on both stores (the ``database`` fixture in conftest.py); what only one
store does is tested beside it (test_sinks.py for SQLite, the end of this file for PostgreSQL).
"""

from __future__ import annotations

import subprocess
import sys
import threading
from datetime import UTC, datetime, timedelta

import pytest

from foldkit_agent import AuditLog, AuditSinkError, PostgresAuditSink
from tests.support.audit_app import record
from tests.support.audit_stores import Database

WAIT = 10.0


def test_a_database_sink_stores_what_the_log_recorded_and_queries_it(database: Database) -> None:
    sink = database.make()
    audit = AuditLog(sink=sink, include_input=True, record_principal=lambda p: p)
    start = datetime.now(UTC)
    for n in range(6):
        record(
            audit,
            f"i{n}",
            capability="delete" if n % 2 else "create",
            decision="refused" if n % 3 == 0 else "dispatched",
            principal={"id": "ann"},
            input={"n": [n, {"deep": True}], "x": 1.5},
        )
    assert audit.close(WAIT)
    stored = sink.query()
    assert stored == audit.entries()
    assert [e.invocation_id for e in sink.query(capability="delete")] == ["i1", "i3", "i5"]
    assert [e.invocation_id for e in sink.query(decision="refused")] == ["i0", "i3"]
    assert [e.invocation_id for e in sink.query(capability="delete", decision="refused")] == ["i3"]
    assert sink.query(since=start - timedelta(seconds=1), limit=2) == stored[:2]
    assert sink.query(since=datetime.now(UTC) + timedelta(seconds=1)) == []
    assert sink.query(until=start) == []
    assert stored[0].at.tzinfo is not None
    with pytest.raises(ValueError, match="timezone-aware"):
        sink.query(since=datetime.now())
    with pytest.raises(ValueError, match="decision"):
        sink.query(decision="maybe")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="limit"):
        sink.query(limit=-1)


def test_the_write_connection_is_used_by_one_thread_whoever_writes(database: Database) -> None:
    sink = database.make()
    audit = AuditLog()
    entries = [record(audit, f"t{n}") for n in range(4)]
    threads = [threading.Thread(target=sink.write, args=([e],)) for e in entries]
    for t in threads:
        t.start()
    for t in threads:
        t.join(WAIT)
    sink.write([])
    assert sorted(e.invocation_id for e in sink.query()) == ["t0", "t1", "t2", "t3"]
    sink.close()
    sink.close()
    assert sink.closed
    with pytest.raises(AuditSinkError, match="closed"):
        sink.write(entries)
    assert len(sink.query()) == 4  # reading works after close


def test_a_refused_batch_is_counted_on_the_log_and_stores_nothing(database: Database) -> None:
    sink = database.make()
    database.refuse("bad")
    audit = AuditLog(sink=sink, sink_linger=0.5)
    record(audit, "a")
    record(audit, "b", capability="bad")  # same batch as "a": the whole batch is refused
    assert audit.flush(WAIT)
    assert audit.sink_failed_entries == 2
    assert audit.last_sink_error is not None
    assert audit.last_sink_error.startswith("AuditSinkError: storing 2 audit entries failed")
    record(audit, "c")
    assert audit.close(WAIT)
    assert [e.invocation_id for e in sink.query()] == ["c"]


def test_a_durable_database_sink_says_so_and_stores_the_same(database: Database) -> None:
    sink = database.make(durable=True)
    assert sink.durable is True
    audit = AuditLog(sink=sink)
    assert audit.durable is True
    record(audit, "d1")
    assert audit.close(WAIT)
    assert [e.invocation_id for e in sink.query()] == ["d1"]
    assert database.make().durable is False


# -- PostgreSQL only ---------------------------------------------------------------------------


def test_several_workers_create_the_postgres_table_at_once(postgres_dsn: str) -> None:
    made: list[PostgresAuditSink] = []
    errors: list[BaseException] = []

    def open_one() -> None:
        try:
            made.append(PostgresAuditSink(postgres_dsn))
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=open_one) for _ in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(WAIT * 3)
    assert errors == []
    audit = AuditLog()
    for n, sink in enumerate(made):
        sink.write([record(audit, f"w{n}")])
    assert sorted(e.invocation_id for e in made[0].query()) == [f"w{n}" for n in range(6)]
    for sink in made:
        sink.close()


def test_a_postgres_connection_that_broke_is_replaced_on_the_next_batch(postgres_dsn: str) -> None:
    import psycopg

    sink = PostgresAuditSink(postgres_dsn)
    audit = AuditLog()
    sink.write([record(audit, "before")])
    with psycopg.connect(postgres_dsn, autocommit=True) as admin:
        killed = admin.execute(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
            "WHERE application_name = 'foldkit-agent-audit' AND pid <> pg_backend_pid()"
        ).fetchall()
    assert killed == [(True,)]
    with pytest.raises(AuditSinkError, match="storing 1 audit entries failed"):
        sink.write([record(audit, "lost")])  # the server closed the connection under it
    sink.write([record(audit, "after")])
    assert [e.invocation_id for e in sink.query()] == ["before", "after"]
    sink.close()


def test_an_unreachable_postgres_fails_when_the_sink_is_made(postgres_cluster: object) -> None:
    with pytest.raises(AuditSinkError, match="cannot open the PostgreSQL audit database"):
        PostgresAuditSink("host=/nonexistent-socket-dir dbname=x user=x connect_timeout=2")


def test_the_front_door_imports_without_psycopg_and_the_sink_says_what_to_install() -> None:
    code = (
        "import sys; sys.modules['psycopg'] = None\n"
        "from foldkit_agent import PostgresAuditSink, agent\n"
        "assert agent.PostgresAuditSink is PostgresAuditSink\n"
        "try:\n"
        "    PostgresAuditSink('dbname=x')\n"
        "except ModuleNotFoundError as exc:\n"
        "    print(exc)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60
    )
    assert out.stdout.strip() == (
        "the 'postgres' extra is needed for PostgresAuditSink: "
        "pip install 'foldkit-agent[postgres]' (no module named 'psycopg')"
    )
