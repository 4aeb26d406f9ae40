"""Scenario 7: bytes per bound runtime beyond its Model, 10,000 runtimes in one process."""

from __future__ import annotations

import gc
import tracemalloc
from collections.abc import Callable
from typing import Any

from foldkit_agent import agent

from .dispatch import Model, guarded_contract


class Host:
    """One tenant's host: it holds that tenant's Model (not counted against the runtime)."""

    def __init__(self, model: Model) -> None:
        self._model = model

    def model(self) -> Model:
        return self._model

    def dispatch(self, message: Any) -> None:
        pass

    def subscribe(self, cb: Callable[[Model], None]) -> Callable[[], None]:
        return lambda: None


async def run() -> list[Any]:
    from .harness import Row

    n = 10_000
    definition = guarded_contract()
    hosts = [Host(Model()) for _ in range(n)]
    gc.collect()
    tracemalloc.start()
    before = tracemalloc.take_snapshot()
    runtimes = [
        agent.bind(definition=definition, host=h, principal=lambda inv: inv.credentials)
        for h in hosts
    ]
    gc.collect()
    after = tracemalloc.take_snapshot()
    tracemalloc.stop()
    grown = sum(s.size_diff for s in after.compare_to(before, "filename"))
    per = grown / n
    assert len(runtimes) == n
    return [
        Row(
            "7. memory",
            f"bytes per bound runtime beyond its Model ({n:,} bound)",
            f"{per / 1024:.1f} KB",
            "—",
            None,
            "≤ 20 KB",
            per <= 20 * 1024,
        )
    ]
