"""Scenarios 1 and 2: in-process dispatch vs a bare ``host.dispatch(Msg.model_validate(p))``.

Both sides run on this thread and never wait, so they are timed in the thread's CPU time
(``time.thread_time``): in wall time, on a machine other processes share, the ratio read 20-45×
where the CPU time reads 5× (see :func:`bench.harness.compare`).
"""

from __future__ import annotations

import time
from typing import Any

from pydantic import BaseModel

from foldkit_agent import Invocation, Message, Program, agent, message_union

from .harness import Row, compare, us


class Model(BaseModel, frozen=True):
    quantities: tuple[tuple[str, int], ...] = ()
    open: bool = True


class SetQuantity(Message):
    item_id: str
    qty: int


Msg = message_union(SetQuantity)


def update(model: Model, msg: Message) -> Model:
    return model


PAYLOAD = {"item_id": "sku-1", "qty": 2}


def plain_contract() -> Any:
    return agent.make(messages=agent.expose(Msg, {SetQuantity: "Set a quantity"}))


def guarded_contract() -> Any:
    return agent.make(
        messages=agent.expose(
            Msg,
            {
                SetQuantity: agent.variant(
                    description="Set a quantity",
                    available=lambda m: m.open,
                    authorize=lambda r: r.principal is not None,
                )
            },
        )
    )


async def run() -> list[Row]:
    rows: list[Row] = []
    async with Program(init=Model(), update=update).run() as running:
        host = running.host

        async def base() -> None:
            host.dispatch(SetQuantity.model_validate(PAYLOAD))

        plain = agent.bind(definition=plain_contract(), host=host, audit=agent.audit_log())

        async def ours_plain() -> None:
            await plain.messages.dispatch_unknown("set_quantity", PAYLOAD)

        c = await compare(ours_plain, base, clock=time.thread_time)
        rows.append(
            Row(
                "1. in-process dispatch",
                "2-field capability, audit in memory",
                f"p50 {us(c.ours_p50)}, p90 {us(c.ours_p90)}",
                f"p50 {us(c.base_p50)}, p90 {us(c.base_p90)}",
                c.ratio,
                "≤ 2.5×",
                c.ratio <= 2.5,
            )
        )

        guarded = agent.bind(
            definition=guarded_contract(),
            host=host,
            audit=agent.audit_log(include_input=True, redact=["qty"], record_principal=lambda p: p),
            principal=lambda inv: inv.credentials,
        )

        async def ours_guarded() -> None:
            await guarded.messages.dispatch_unknown(
                "set_quantity", PAYLOAD, Invocation(credentials="alice")
            )

        g = await compare(ours_guarded, base, clock=time.thread_time)
        rows.append(
            Row(
                "2. guarded dispatch",
                "available + authorize + redacting audit",
                f"p50 {us(g.ours_p50)}, p90 {us(g.ours_p90)}",
                f"p50 {us(g.base_p50)}, p90 {us(g.base_p90)}",
                g.ratio,
                "reported",
                None,
            )
        )
    return rows
