"""Measuring helpers: ours and a baseline, interleaved in one process and one run.

Ratios are what the suite reports: both sides run in alternating batches on the same event
loop, so a noisy machine slows both alike. Timings are never asserted in tests.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass


@dataclass(frozen=True)
class Row:
    """One line of the results table."""

    scenario: str
    measure: str
    ours: str
    baseline: str
    ratio: float | None
    target: str
    met: bool | None
    note: str = ""


@dataclass(frozen=True)
class Comparison:
    """Per-call times in microseconds: medians and 90th percentiles of batch means."""

    ours_p50: float
    ours_p90: float
    base_p50: float
    base_p90: float

    @property
    def ratio(self) -> float:
        return self.ours_p50 / self.base_p50


def _pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


async def compare(
    ours: Callable[[], Awaitable[object]],
    base: Callable[[], Awaitable[object]],
    *,
    batch: int = 200,
    rounds: int = 40,
    warmup: int = 500,
    clock: Callable[[], float] = time.perf_counter,
) -> Comparison:
    """Time ``ours`` against ``base``: ``rounds`` alternating batches of ``batch`` calls each.

    ``clock`` is wall time by default. For calls that never wait (pure work on this thread),
    pass ``time.thread_time``: on a machine other processes share, a batch that takes longer
    spans more of the moments the scheduler runs someone else, so wall-time medians of the
    longer side swell and those of the shorter side (whose batches fit between them) do not;
    the thread's CPU time counts only the work.
    """
    for _ in range(warmup):
        await ours()
        await base()
    ours_t: list[float] = []
    base_t: list[float] = []
    for i in range(rounds):
        order = (ours, base) if i % 2 == 0 else (base, ours)
        for fn in order:
            start = clock()
            for _ in range(batch):
                await fn()
            per_call = (clock() - start) / batch * 1e6
            (ours_t if fn is ours else base_t).append(per_call)
    return Comparison(
        statistics.median(ours_t), _pct(ours_t, 0.9), statistics.median(base_t), _pct(base_t, 0.9)
    )


def us(value: float) -> str:
    """Format microseconds (as nanoseconds below 1 µs, milliseconds above 1,000 µs)."""
    if value < 1:
        return f"{value * 1000:.0f} ns"
    return f"{value:.1f} µs" if value < 1000 else f"{value / 1000:.2f} ms"
