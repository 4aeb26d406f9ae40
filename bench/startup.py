"""Scenario 11: start-up frozen or not, as the garbage collector sees a started server.

    python -m bench.startup

The bench MCP server (``bench.servers``' contract on a running Program) is built with
``http_app`` and its lifespan entered, as uvicorn starts it, in this process (which has also
imported everything a ``foldkit-agent serve`` process imports), next to ``mcp_server`` for the
same runtime. Then, in alternating batches, with what start-up allocated frozen
(``freeze_startup()``, as ``serve`` and ``frozen_lifespan`` do) and unfrozen:

* a full collection (``gc.collect()``) is timed: the pause a busy server takes every few
  hundred milliseconds, for every call in flight;
* ``tools/call`` through the official ``mcp.Client`` over its in-memory transport: per-call
  p50 and p99, and the time the collector's full (generation 2) passes took meanwhile.
"""

from __future__ import annotations

import asyncio
import gc
import statistics
import time

from mcp import Client

from foldkit_agent import Program, agent
from foldkit_agent.adapters.mcp import http_app, mcp_server
from foldkit_agent.edge import freeze_startup

from .harness import Row, us
from .servers import Contract, Model, update


def _full_collection() -> float:
    started = time.perf_counter()
    gc.collect()
    return (time.perf_counter() - started) * 1e6


class _FullPasses:
    """Time spent in the collector's generation-2 passes while installed (µs)."""

    def __init__(self) -> None:
        self.total = 0.0
        self.count = 0
        self._started = 0.0

    def __call__(self, phase: str, info: dict[str, int]) -> None:
        if info.get("generation") != 2:
            return
        if phase == "start":
            self._started = time.perf_counter()
        else:
            self.total += (time.perf_counter() - self._started) * 1e6
            self.count += 1


def _pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


async def run(rounds: int = 8, batch: int = 5, calls: int = 1_500) -> list[Row]:
    """Scenario 11 as result rows (see the module docstring)."""
    frozen: list[float] = []
    thawed: list[float] = []
    call_times: dict[bool, list[float]] = {True: [], False: []}
    passes = {True: _FullPasses(), False: _FullPasses()}
    frozen_count = 0
    async with Program(init=Model(), update=update).run() as running:
        rt = agent.bind(
            definition=Contract, host=running.host, audit=agent.audit_log(capacity=1000)
        )
        app = http_app(rt, name="bench", version="1")
        async with (
            app.router.lifespan_context(app),
            Client(mcp_server(rt, name="bench", version="1")) as client,
        ):
            for _ in range(200):
                await client.call_tool("increment", {"by": 1})
            gc.collect()
            tracked = len(gc.get_objects())
            for i in range(rounds):
                for freeze in (True, False) if i % 2 == 0 else (False, True):
                    if freeze:
                        frozen_count = freeze_startup()
                    (frozen if freeze else thawed).extend(_full_collection() for _ in range(batch))
                    gc.callbacks.append(passes[freeze])
                    try:
                        for _ in range(calls):
                            started = time.perf_counter()
                            await client.call_tool("increment", {"by": 1})
                            call_times[freeze].append((time.perf_counter() - started) * 1e6)
                    finally:
                        gc.callbacks.remove(passes[freeze])
                    if freeze:
                        gc.unfreeze()
    ours, base = statistics.median(frozen), statistics.median(thawed)
    on, off = call_times[True], call_times[False]
    return [
        Row(
            "11. start-up frozen",
            f"a full collection in a started MCP server ({tracked:,} objects tracked): "
            "start-up frozen vs not",
            f"p50 {us(ours)} ({frozen_count:,} frozen)",
            f"p50 {us(base)}",
            ours / base,
            "≤ 0.25×",
            ours / base <= 0.25,
        ),
        Row(
            "11. start-up frozen",
            f"tools/call in memory, {len(on):,} calls a side: p99, start-up frozen vs not",
            f"p50 {us(statistics.median(on))}, p99 {us(_pct(on, 0.99))}; "
            f"{passes[True].count} full passes, {us(passes[True].total)}",
            f"p50 {us(statistics.median(off))}, p99 {us(_pct(off, 0.99))}; "
            f"{passes[False].count} full passes, {us(passes[False].total)}",
            _pct(on, 0.99) / _pct(off, 0.99),
            "reported",
            None,
        ),
    ]


if __name__ == "__main__":
    for row in asyncio.run(run()):
        print(row)
