"""Scenario 6: completion with 1,000 and 10,000 invocations in flight (cost per result)."""

from __future__ import annotations

import asyncio
import gc
import time
from collections.abc import Callable
from typing import Any

from pydantic import BaseModel

from foldkit_agent import Message, agent, message_union

from .harness import Row, us


class Model(BaseModel, frozen=True):
    pass


class Requested(Message):
    request_id: str | None = None


class Done(Message):
    request_id: str | None = None


class Input(BaseModel):
    pass


Msg = message_union(Requested, Done)


def contract(correlate: Any) -> Any:
    return agent.make(
        messages=agent.expose(
            Msg,
            {
                Requested: agent.variant(
                    name="work",
                    description="Work",
                    input=Input,
                    to_message=lambda _, ctx: Requested(request_id=ctx.invocation.id),
                    completion=agent.Completion(success=Done, correlate=correlate, timeout=120),
                )
            },
        )
    )


class Host:
    def __init__(self, expected: int) -> None:
        self.sent: list[Requested] = []
        self.observers: list[Callable[[Any], None]] = []
        self.expected = expected
        self.all_sent = asyncio.Event()

    def model(self) -> Model:
        return Model()

    def dispatch(self, message: Requested) -> None:
        self.sent.append(message)
        if len(self.sent) == self.expected:
            self.all_sent.set()

    def observe(self, cb: Callable[[Any], None]) -> Callable[[], None]:
        self.observers.append(cb)
        return lambda: self.observers.remove(cb)


async def per_result(n: int, correlate: Any) -> float:
    """Seconds per result Message to route and resolve, with ``n`` calls in flight."""
    host = Host(n)
    rt = agent.bind(definition=contract(correlate), host=host)
    tasks = [asyncio.ensure_future(rt.messages.dispatch_unknown("work", {})) for _ in range(n)]
    await host.all_sent.wait()
    results = [Done(request_id=m.request_id) for m in reversed(host.sent)]
    # The collector's full passes scan every live object, so their cost grows with the heap
    # (10,000 pending tasks) whatever the routing does; they are held off while timing it.
    gc.collect()
    gc.disable()
    try:
        start = time.perf_counter()
        for message in results:
            for cb in host.observers:
                cb(message)
        routed = time.perf_counter() - start
    finally:
        gc.enable()
    await asyncio.gather(*tasks)
    assert rt.pending() == 0
    return routed / n


async def run() -> list[Row]:
    rows: list[Row] = []
    keyed = agent.by_invocation_id("request_id")
    k1 = min([await per_result(1_000, keyed) for _ in range(3)])
    k10 = min([await per_result(10_000, keyed) for _ in range(3)])
    ratio = k10 / k1
    rows.append(
        Row(
            "6. completion in flight",
            "keyed correlate: per-result routing, 10,000 vs 1,000 pending",
            f"{us(k10 * 1e6)} at 10,000",
            f"{us(k1 * 1e6)} at 1,000",
            ratio,
            "flat (≤ 1.5×)",
            ratio <= 1.5,
        )
    )

    def scan(req: Any, res: Any, call: Any) -> bool:
        return res.request_id == call.invocation.id

    s1 = await per_result(1_000, scan)
    rows.append(
        Row(
            "6. completion in flight",
            "predicate correlate (scanned in order), 1,000 pending",
            f"{us(s1 * 1e6)} per result",
            f"{us(k1 * 1e6)} keyed",
            s1 / k1,
            "reported (linear by design)",
            None,
        )
    )
    return rows
