"""Scenario 10: what "answered means audited" costs a dispatch (``durable=True`` sinks).

    python -m bench.durable [--calls 20000]

The todo example's ``toggle_todo`` on a trivial host (as scenario 8), through one audit log
per setting: no sink, the SQLite sink, the SQLite sink with ``durable=True`` (WAL,
``synchronous=NORMAL``: survives the process being killed), the same with
``synchronous="FULL"`` (an fsync per commit: survives power loss), and PostgreSQL without and
with ``durable=True`` when Debian's server binaries are installed (a throwaway cluster on a
Unix socket, as the tests start it). Two measures, settings interleaved in rounds:

* one call at a time: p50 latency, where a durable call waits out one whole commit;
* 64 calls in flight: time per call (wall time / calls), where concurrent calls share
  commits; the mean entries per commit shows the group commit.

Scenario 16 sets the PostgreSQL sink against the SQLite one from the same run: both
measures, durable and not, and the sink's throughput (``sink.write`` in batches, and
``AuditLog.record`` to committed with one producer; the two stores alternated over rounds).
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from examples.todo import AppAgent, TodoAgent, User, principal
from foldkit_agent import AuditEntry, AuditLog, Invocation, PostgresAuditSink, SqliteAuditSink

from .audit_sink import _Host, record_rate, write_rate
from .harness import Row, us

CONCURRENCY = 64
SCENARIO = "10. answered means audited"
VERSUS = "16. PostgreSQL vs SQLite audit sink"


class _Counting:
    """Counts the sink's commits (``write`` calls) to show how many entries share one."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.durable = getattr(inner, "durable", False)
        self.commits = 0

    def write(self, entries: list[AuditEntry]) -> None:
        self.commits += 1
        self.inner.write(entries)

    def close(self) -> None:
        self.inner.close()


@dataclass
class Setting:
    name: str
    sink: _Counting | None
    log: AuditLog = field(init=False)
    p50_samples: list[float] = field(default_factory=list[float])
    per_call: list[float] = field(default_factory=list[float])
    written_at_load: int = 0
    commits_at_load: int = 0

    def __post_init__(self) -> None:
        self.log = AuditLog(capacity=1000, record_principal=lambda u: u.id, sink=self.sink)


async def _sequential(rt: Any, n: int) -> list[float]:
    who = User(id="alice")
    clock = time.perf_counter_ns
    samples: list[float] = []
    for _ in range(n):
        inv = Invocation(transport="mcp", credentials=who)
        t0 = clock()
        await rt.messages.dispatch("toggle_todo", {"id": "todo-1"}, inv)
        samples.append((clock() - t0) / 1000.0)
    return samples


async def _concurrent(rt: Any, n: int) -> float:
    """µs per call with ``CONCURRENCY`` calls in flight."""
    who = User(id="alice")
    per_task = max(1, n // CONCURRENCY)

    async def worker() -> None:
        for _ in range(per_task):
            await rt.messages.dispatch(
                "toggle_todo", {"id": "todo-1"}, Invocation(transport="mcp", credentials=who)
            )

    t0 = time.perf_counter()
    await asyncio.gather(*(worker() for _ in range(CONCURRENCY)))
    return (time.perf_counter() - t0) / (per_task * CONCURRENCY) * 1e6


@contextmanager
def _postgres() -> Iterator[str | None]:
    """A throwaway cluster's DSN, or ``None`` when PostgreSQL is not installed."""
    from tests.support.postgres import cluster, server_bin

    if server_bin() is None:
        yield None
        return
    with cluster() as running, running.database() as dsn:
        yield dsn


def settings(root: Path, dsn: str | None, stack: ExitStack) -> list[Setting]:
    made = [
        Setting("no sink", None),
        Setting("SQLite", _Counting(SqliteAuditSink(root / "plain.db"))),
        Setting("SQLite durable", _Counting(SqliteAuditSink(root / "durable.db", durable=True))),
        Setting(
            "SQLite durable, FULL",
            _Counting(SqliteAuditSink(root / "full.db", durable=True, synchronous="FULL")),
        ),
    ]
    if dsn is not None:
        made.append(Setting("PostgreSQL", _Counting(PostgresAuditSink(dsn))))
        made.append(Setting("PostgreSQL durable", _Counting(PostgresAuditSink(dsn, durable=True))))
    for s in made:
        stack.callback(s.log.close, 60)
    return made


async def measure(made: list[Setting], calls: int, rounds: int) -> None:
    runtimes = {
        s.name: TodoAgent.bind(definition=AppAgent, host=_Host(), audit=s.log, principal=principal)
        for s in made
    }
    for s in made:  # warm-up: imports, caches, the sink threads, the connections
        await _sequential(runtimes[s.name], 200)
    per_round = max(1, calls // rounds)
    for r in range(rounds):
        order = made if r % 2 == 0 else list(reversed(made))
        for s in order:
            s.p50_samples.extend(await _sequential(runtimes[s.name], per_round // 4))
        for s in order:
            await asyncio.to_thread(s.log.flush, 60)
            before = (s.log.sink_written, s.sink.commits if s.sink else 0)
            s.per_call.append(await _concurrent(runtimes[s.name], per_round))
            await asyncio.to_thread(s.log.flush, 60)
            if s.sink is not None:
                s.written_at_load += s.log.sink_written - before[0]
                s.commits_at_load += s.sink.commits - before[1]
    for rt in runtimes.values():
        rt.close()
    for s in made:
        assert s.log.sink_failures == 0, (s.name, s.log.last_sink_error)
        assert s.log.unconfirmed == 0, s.name


def rows(made: list[Setting]) -> list[Row]:
    by = {s.name: s for s in made}
    p50 = {s.name: statistics.median(s.p50_samples) for s in made}
    load = {s.name: statistics.median(s.per_call) for s in made}

    def group(name: str) -> str:
        s = by[name]
        return f"{s.written_at_load / max(1, s.commits_at_load):.1f} entries per commit"

    out: list[Row] = []
    pairs = [("SQLite durable", "no sink", SCENARIO), ("SQLite durable", "SQLite", SCENARIO)]
    pairs += [("SQLite durable, FULL", "no sink", SCENARIO)]
    if "PostgreSQL durable" in by:
        pairs += [("PostgreSQL", "no sink", SCENARIO), ("PostgreSQL durable", "no sink", SCENARIO)]
        pairs += [
            ("PostgreSQL", "SQLite", VERSUS),
            ("PostgreSQL durable", "SQLite durable", VERSUS),
        ]
    for ours, base, scenario in pairs:
        out.append(
            Row(
                scenario,
                f"one call at a time: {ours} vs {base}",
                f"p50 {us(p50[ours])}",
                f"p50 {us(p50[base])}",
                p50[ours] / p50[base],
                "reported",
                None,
            )
        )
    for ours, base, scenario in pairs:
        out.append(
            Row(
                scenario,
                f"{CONCURRENCY} calls in flight, time per call: {ours} vs {base}",
                f"{us(load[ours])}" + (f" ({group(ours)})" if by[ours].sink else ""),
                f"{us(load[base])}" + (f" ({group(base)})" if by[base].sink else ""),
                load[ours] / load[base],
                "reported",
                None,
            )
        )
    return out


def throughput(root: Path, dsn: str, entries: int, rounds: int = 4) -> list[Row]:
    """Scenario 16's throughput rows, PostgreSQL vs SQLite, the two alternated over
    ``rounds``: ``sink.write`` in batches of 1,000 (the store alone), and ``record`` to
    committed through the log (one producer; its queue and writer thread included)."""
    rates: dict[tuple[str, str], list[float]] = {}
    for r in range(rounds):
        order = ("SQLite", "PostgreSQL") if r % 2 == 0 else ("PostgreSQL", "SQLite")
        for store in order:

            def sink(tag: str, store: str = store, r: int = r) -> Any:
                if store == "SQLite":
                    return SqliteAuditSink(root / f"rate-{tag}-{r}.db")
                return PostgresAuditSink(dsn)

            rates.setdefault(("write", store), []).append(write_rate(sink("w"), entries))
            rates.setdefault(("record", store), []).append(record_rate(sink("r"), entries))
    out: list[Row] = []
    for kind, measure in (
        ("write", f"sink.write, batches of 1,000, {entries:,} entries"),
        ("record", f"record → committed, {entries:,} entries, one producer"),
    ):
        pg = statistics.median(rates[(kind, "PostgreSQL")])
        lite = statistics.median(rates[(kind, "SQLite")])
        out.append(
            Row(
                VERSUS,
                f"{measure}: PostgreSQL vs SQLite",
                f"{pg:,.0f} entries/s",
                f"{lite:,.0f} entries/s",
                pg / lite,
                "reported",
                None,
            )
        )
    return out


async def run(calls: int = 20_000, rounds: int = 8) -> list[Row]:
    with (
        tempfile.TemporaryDirectory(prefix="foldkit-bench-durable-") as tmp,
        _postgres() as dsn,
        ExitStack() as stack,
    ):
        made = settings(Path(tmp), dsn, stack)
        await measure(made, calls, rounds)
        out = rows(made)
        if dsn is not None:
            out.extend(await asyncio.to_thread(throughput, Path(tmp), dsn, max(calls, 20_000)))
        return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.durable", description=__doc__)
    parser.add_argument("--calls", type=int, default=20_000)
    args = parser.parse_args(argv)
    for row in asyncio.run(run(args.calls)):
        ratio = "" if row.ratio is None else f"{row.ratio:.2f}x"
        print(f"{row.measure:<70} {row.ours:>36} {row.baseline:>36} {ratio:>8}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
