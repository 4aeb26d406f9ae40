"""Audit sinks: a sink that raises or blocks never fails or delays a dispatch; durable sinks.

Blocking is simulated with ``threading.Event`` (never a sleep), and "never delays" is shown
structurally: dispatches complete while the sink is still blocked inside ``write``.
"""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import textwrap
import threading
from pathlib import Path
from typing import Any

import pytest

from foldkit_agent import (
    AuditEntry,
    AuditLog,
    AuditSinkError,
    Invocation,
    JsonlAuditSink,
    SqliteAuditSink,
    agent,
)
from tests.support.audit_app import bind
from tests.support.audit_app import record as _record
from tests.support.paths import ROOT

WAIT = 10.0  # generous upper bound for waits on events the code sets (never reached when green)


class RaisingSink:
    def __init__(self, exc: BaseException) -> None:
        self.exc = exc
        self.calls = 0

    def write(self, entries: list[AuditEntry]) -> None:
        self.calls += 1
        raise self.exc


class BlockingSink:
    """Blocks inside ``write`` until ``release`` is set."""

    def __init__(self) -> None:
        self.entered = threading.Event()
        self.release = threading.Event()
        self.written: list[AuditEntry] = []
        self.closed_on: str | None = None

    def write(self, entries: list[AuditEntry]) -> None:
        self.entered.set()
        assert self.release.wait(WAIT)
        self.written += entries

    def close(self) -> None:
        self.closed_on = threading.current_thread().name


class ListSink:
    def __init__(self) -> None:
        self.batches: list[list[AuditEntry]] = []
        self.closed_on: str | None = None

    def write(self, entries: list[AuditEntry]) -> None:
        self.batches.append(entries)

    def close(self) -> None:
        self.closed_on = threading.current_thread().name


async def _script(rt: Any) -> list[Any]:
    """The same calls, for comparing results with and without a misbehaving sink."""
    out: list[Any] = []
    for name, payload in (("increment", {"by": 1}), ("closed", {}), ("increment", {"by": "x"})):
        try:
            result = await rt.messages.dispatch(name, payload, Invocation(id=f"fixed-{name}"))
            out.append(("ok", result.name, result.message))
        except Exception as err:
            out.append(("error", type(err).__name__, str(err)))
    return out


async def test_a_sink_that_raises_never_fails_a_dispatch() -> None:
    sink = RaisingSink(OSError("disk full"))
    audit = agent.audit_log(sink=sink)
    _host, rt = bind(audit)
    _host2, baseline = bind(agent.audit_log())
    assert await _script(rt) == await _script(baseline)
    assert audit.flush(WAIT)
    assert audit.sink_failures >= 1
    assert audit.sink_failed_entries == 3
    assert audit.sink_written == 0
    assert audit.last_sink_error == "OSError: disk full"
    assert len(audit.entries()) == 3  # the in-memory log is complete regardless
    audit.close()


async def test_a_sink_that_raises_base_exceptions_does_not_stop_the_audit_thread() -> None:
    sink = RaisingSink(SystemExit(3))
    audit = agent.audit_log(sink=sink)
    _host, rt = bind(audit)
    await rt.messages.dispatch("increment", {"by": 1})
    assert audit.flush(WAIT)
    await rt.messages.dispatch("increment", {"by": 2})
    assert audit.flush(WAIT)  # handled after the first failure: the thread is alive
    assert sink.calls == 2
    assert audit.sink_failed_entries == 2
    audit.close()


async def test_a_sink_that_blocks_never_delays_a_dispatch() -> None:
    sink = BlockingSink()
    audit = AuditLog(sink=sink, sink_queue=4)
    host, rt = bind(audit)
    _host2, baseline = bind(agent.audit_log())
    await rt.messages.dispatch("increment", {"by": 0})
    assert sink.entered.wait(WAIT)  # the audit thread is now stuck inside write()
    results = await _script(rt)
    for i in range(10):
        await rt.messages.dispatch("increment", {"by": i})
    # Everything above completed while the sink was still blocked:
    assert not sink.release.is_set()
    assert sink.written == []
    assert results == await _script(baseline)
    assert len(host.dispatched) == 12
    assert len(audit.entries()) == 14
    assert audit.sink_pending == 5  # one batch inside write(), the bounded buffer full ...
    assert audit.sink_dropped == 9  # ... and the rest were counted, not waited for
    sink.release.set()
    assert audit.flush(WAIT)
    assert len(sink.written) == 5
    assert audit.close(WAIT)


def test_close_gives_up_on_a_blocked_sink_without_closing_it_under_its_feet() -> None:
    sink = BlockingSink()
    audit = AuditLog(sink=sink)
    _record(audit, "one")
    assert sink.entered.wait(WAIT)
    assert audit.close(timeout=0.01) is False
    assert sink.closed_on is None
    assert audit.flush(timeout=0) is False
    sink.release.set()
    assert audit.flush(WAIT)
    assert audit.close(WAIT)
    assert sink.closed_on == "foldkit-agent-audit"


def test_close_hands_over_everything_then_closes_the_sink_on_the_audit_thread() -> None:
    sink = ListSink()
    audit = AuditLog(sink=sink, sink_batch=7)
    for i in range(50):
        _record(audit, f"e{i}")
    assert audit.close(WAIT)
    written = [e.invocation_id for batch in sink.batches for e in batch]
    assert written == [f"e{i}" for i in range(50)]
    assert max(len(b) for b in sink.batches) <= 7
    assert sink.closed_on == "foldkit-agent-audit"
    _record(audit, "late")
    assert audit.sink_dropped == 1
    assert len(audit.entries()) == 51


def test_closing_a_log_whose_sink_never_received_anything_closes_the_sink() -> None:
    sink = ListSink()
    audit = AuditLog(sink=sink)
    assert audit.close()
    assert sink.closed_on is not None


def test_a_sink_without_write_is_refused() -> None:
    with pytest.raises(TypeError, match="write"):
        AuditLog(sink=object())  # type: ignore[arg-type]


# -- JSONL -------------------------------------------------------------------------------------


def test_the_jsonl_sink_writes_one_entry_per_line_and_reads_them_back(tmp_path: Path) -> None:
    path = tmp_path / "logs" / "audit.jsonl"
    sink = JsonlAuditSink(path)
    audit = AuditLog(sink=sink, include_input=True, record_principal=lambda p: p)
    kept = [_record(audit, f"i{n}", principal={"id": n}, input={"n": n}) for n in range(5)]
    assert audit.close(WAIT)
    lines = path.read_text(encoding="utf-8").splitlines()
    assert [json.loads(line)["invocation_id"] for line in lines] == [f"i{n}" for n in range(5)]
    assert list(sink.read()) == kept
    with pytest.raises(AuditSinkError):
        sink.write(kept)


def test_the_jsonl_reader_skips_a_torn_last_line(tmp_path: Path) -> None:
    path = tmp_path / "audit.jsonl"
    sink = JsonlAuditSink(path)
    audit = AuditLog(sink=sink)
    _record(audit, "whole")
    assert audit.close(WAIT)
    with path.open("a", encoding="utf-8") as fh:
        fh.write('{"at": "2026-01-01T00:00:00+00:00", "invocation_')
    assert [e.invocation_id for e in sink.read()] == ["whole"]


# -- SQLite ------------------------------------------------------------------------------------


def test_the_sqlite_sink_uses_wal_and_indexes_time_and_capability(tmp_path: Path) -> None:
    sink = SqliteAuditSink(tmp_path / "audit.db")
    sink.close()
    conn = sqlite3.connect(tmp_path / "audit.db")
    try:
        assert conn.execute("PRAGMA journal_mode").fetchone() == ("wal",)
        indexes = {
            row[1]: [c[2] for c in conn.execute(f"PRAGMA index_info({row[1]})")]
            for row in conn.execute("PRAGMA index_list(audit_entries)")
        }
    finally:
        conn.close()
    assert ["at"] in indexes.values()
    assert ["capability", "at"] in indexes.values()


def test_an_unopenable_sqlite_database_fails_when_the_sink_is_made(tmp_path: Path) -> None:
    (tmp_path / "audit.db").mkdir()
    with pytest.raises(AuditSinkError, match="cannot open the audit database"):
        SqliteAuditSink(tmp_path / "audit.db")


KILL_CHILD = textwrap.dedent(
    """
    import sys
    from foldkit_agent import AuditLog, SqliteAuditSink

    log = AuditLog(sink=SqliteAuditSink(sys.argv[1]), sink_batch=500, include_input=True)

    def rec(inv):
        log.record(invocation_id=inv, transport="in-app", capability="c", tag="T",
                   principal=None, decision="dispatched", outcome="ok",
                   input={"padding": "x" * 200})

    for i in range(1000):
        rec(f"pre-{i}")
    assert log.flush(30)
    print("flushed", flush=True)
    i = 0
    while True:
        rec(f"post-{i}")
        i += 1
        if i == 20000:
            print("busy", flush=True)
    """
)


def test_the_sqlite_sink_survives_a_kill_mid_batch(tmp_path: Path) -> None:
    path = tmp_path / "audit.db"
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    child = subprocess.Popen(
        [sys.executable, "-c", KILL_CHILD, str(path)], stdout=subprocess.PIPE, text=True, env=env
    )
    try:
        assert child.stdout is not None
        assert child.stdout.readline().strip() == "flushed"
        assert child.stdout.readline().strip() == "busy"  # writing batches right now
        child.send_signal(signal.SIGKILL)
        child.wait(WAIT)
    finally:
        if child.poll() is None:
            child.kill()
            child.wait(WAIT)
    assert child.returncode == -signal.SIGKILL
    conn = sqlite3.connect(path)
    try:
        assert conn.execute("PRAGMA integrity_check").fetchall() == [("ok",)]
    finally:
        conn.close()
    ids = [e.invocation_id for e in SqliteAuditSink(path).query()]
    assert ids[:1000] == [f"pre-{i}" for i in range(1000)]  # everything flushed is there
    post = ids[1000:]
    assert post == [f"post-{i}" for i in range(len(post))]  # whole batches, in order
