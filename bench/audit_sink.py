"""Benchmark: the SQLite audit sink's throughput, and what it costs a dispatch.

    python -m bench.audit_sink [--entries 100000] [--dispatches 20000] [--rounds 10]

Prints a table and the two ratios the project targets:

* sink throughput >= 20,000 entries/s, measured end to end: ``AuditLog.record`` for every
  entry, then ``flush`` until SQLite has committed them (also the raw ``sink.write`` rate);
* dispatch p50 with the SQLite sink on <= 1.2x the p50 with the sink off (the same in-memory
  audit log without a sink). Both runs use the todo example's contract on a trivial host, in
  the same process, interleaved in rounds so that drift hits both alike.

Everything runs in a temporary directory; nothing is left behind.
"""

from __future__ import annotations

import argparse
import asyncio
import platform
import sqlite3
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from examples.todo import AppAgent, Model, Todo, TodoAgent, User, principal
from foldkit_agent import AuditEntry, AuditLog, Invocation, SqliteAuditSink, agent

THROUGHPUT_TARGET = 20_000.0
RATIO_TARGET = 1.2


def _entry(i: int) -> AuditEntry:
    return AuditEntry(
        at=datetime.now(UTC),
        invocation_id=f"inv-{i:08d}",
        transport="mcp",
        capability="create_todo",
        tag="RequestedCreateTodo",
        principal="alice",
        decision="dispatched",
        outcome="completed",
        input={"title": f"todo number {i}"},
    )


def raw_write_rate(path: Path, n: int, batch: int = 1000) -> float:
    """Entries/s committed by ``SqliteAuditSink.write`` in batches of ``batch``."""
    return write_rate(SqliteAuditSink(path), n, batch)


def write_rate(sink: Any, n: int, batch: int = 1000) -> float:
    """Entries/s committed by ``sink.write`` in batches of ``batch`` (the store's own cost,
    without the log's queue and thread); ``sink`` is closed afterwards."""
    entries = [_entry(i) for i in range(n)]
    sink.write(entries[:1])  # open the store (file, connection, table) before timing
    start = time.perf_counter()
    for i in range(0, n, batch):
        sink.write(entries[i : i + batch])
    elapsed = time.perf_counter() - start
    sink.close()
    return n / elapsed


def end_to_end_rate(path: Path, n: int) -> tuple[float, int]:
    """Entries/s from ``AuditLog.record`` to committed rows; also the rows found afterwards."""
    rate = record_rate(SqliteAuditSink(path), n)
    conn = sqlite3.connect(path)
    try:
        rows = int(conn.execute("SELECT count(*) FROM audit_entries").fetchone()[0])
    finally:
        conn.close()
    return rate, rows


def record_rate(sink: Any, n: int) -> float:
    """Entries/s from ``AuditLog.record`` to committed in ``sink`` (closed afterwards), one
    producer, the sink's writer thread batching up to 1,000."""
    audit = AuditLog(
        capacity=1000,
        record_principal=lambda who: who,
        include_input=True,
        sink=sink,
        sink_queue=n + 1,
    )
    start = time.perf_counter()
    for i in range(n):
        audit.record(
            invocation_id=f"inv-{i:08d}",
            transport="mcp",
            capability="create_todo",
            tag="RequestedCreateTodo",
            principal="alice",
            decision="dispatched",
            outcome="completed",
            input={"title": f"todo number {i}"},
        )
    assert audit.flush(timeout=120), "the sink did not keep up within 120 s"
    elapsed = time.perf_counter() - start
    assert audit.close(timeout=30)
    assert audit.sink_failures == 0
    assert audit.sink_dropped == 0
    assert audit.sink_written == n
    return n / elapsed


class _Host:
    """A host over one fixed Model that accepts every Message and does nothing."""

    def __init__(self) -> None:
        self._model = Model(todos=(Todo(id="todo-1", title="Read the guide"),))

    def model(self) -> Model:
        return self._model

    def dispatch(self, message: Any) -> None:
        return None

    def observe(self, cb: Callable[[Any], None]) -> Callable[[], None]:
        return lambda: None

    def subscribe(self, cb: Callable[[Any], None]) -> Callable[[], None]:
        return lambda: None


async def _timed(audit: AuditLog, n: int) -> list[float]:
    rt = TodoAgent.bind(definition=AppAgent, host=_Host(), audit=audit, principal=principal)
    who = User(id="alice")
    samples: list[float] = []
    clock = time.perf_counter_ns
    for _ in range(n):
        inv = Invocation(transport="mcp", credentials=who)
        t0 = clock()
        await rt.messages.dispatch("toggle_todo", {"id": "todo-1"}, inv)
        samples.append((clock() - t0) / 1000.0)
    rt.close()
    return samples


def dispatch_p50(path: Path, dispatches: int, rounds: int) -> tuple[float, float, int]:
    """p50 dispatch latency (µs) with the sink off and on, interleaved over ``rounds``."""

    def make(with_sink: bool) -> AuditLog:
        return agent.audit_log(
            capacity=1000,
            record_principal=lambda u: u.id,
            include_input=True,
            sink=SqliteAuditSink(path) if with_sink else None,
        )

    off_log, on_log = make(False), make(True)
    per_round = max(1, dispatches // rounds)
    off: list[float] = []
    on: list[float] = []

    async def run() -> None:
        await _timed(off_log, 500)  # warm-up: imports, caches, the sink thread
        await _timed(on_log, 500)
        for r in range(rounds):
            first, second = (off_log, on_log) if r % 2 == 0 else (on_log, off_log)
            a = await _timed(first, per_round)
            b = await _timed(second, per_round)
            (off if first is off_log else on).extend(a)
            (on if second is on_log else off).extend(b)

    asyncio.run(run())
    assert on_log.close(timeout=60)
    assert on_log.sink_failures == 0
    assert on_log.sink_dropped == 0
    return statistics.median(off), statistics.median(on), on_log.sink_written


def main(argv: list[str] | None = None) -> int:
    """Run the benchmark and print the table; exit 1 when a target is missed."""
    parser = argparse.ArgumentParser(prog="python -m bench.audit_sink", description=__doc__)
    parser.add_argument("--entries", type=int, default=100_000)
    parser.add_argument("--dispatches", type=int, default=20_000)
    parser.add_argument("--rounds", type=int, default=10)
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="foldkit-audit-bench-") as tmp:
        root = Path(tmp)
        raw = raw_write_rate(root / "raw.db", args.entries)
        e2e, rows = end_to_end_rate(root / "e2e.db", args.entries)
        assert rows == args.entries, f"expected {args.entries} rows, found {rows}"
        p50_off, p50_on, written = dispatch_p50(root / "dispatch.db", args.dispatches, args.rounds)
    ratio = p50_on / p50_off
    e2e_ok = e2e >= THROUGHPUT_TARGET
    ratio_ok = ratio <= RATIO_TARGET
    print(f"python {platform.python_version()}, sqlite {sqlite3.sqlite_version}, {sys.platform}")
    print()
    print(f"| {'measure':<44} | {'value':>14} | {'target':>10} |")
    print(f"| {'-' * 44} | {'-' * 14}:| {'-' * 10}:|")
    print(f"| {'sink.write, batches of 1000 (entries/s)':<44} | {raw:>14,.0f} | {'':>10} |")
    print(
        f"| {'record -> committed, end to end (entries/s)':<44} | {e2e:>14,.0f} | "
        f"{'>= 20,000':>10} |"
    )
    print(f"| {'dispatch p50, sink off (µs)':<44} | {p50_off:>14.1f} | {'':>10} |")
    print(f"| {'dispatch p50, SQLite sink on (µs)':<44} | {p50_on:>14.1f} | {'':>10} |")
    print(f"| {'p50 ratio, on / off':<44} | {ratio:>14.2f} | {'<= 1.2':>10} |")
    print()
    print(
        f"entries: {args.entries:,}; dispatches: {args.dispatches:,} per setting over "
        f"{args.rounds} interleaved rounds; entries the sink wrote while timing: {written:,}"
    )
    verdict = {True: "met", False: "MISSED"}
    print(f"throughput {verdict[e2e_ok]}; latency ratio {verdict[ratio_ok]}")
    return 0 if e2e_ok and ratio_ok else 1


if __name__ == "__main__":
    sys.exit(main())
