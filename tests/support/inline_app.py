"""An application whose capabilities a 2026-era ``tools/call`` answered inline can reach with
every kind of answer (``adapters/mcp/inline.py``): a plain call, bad arguments, a capability
not available now, one ``authorize`` refuses, and text that is not ASCII.

* ``add`` (``{"by": int, "note": str | None}``): adds ``by`` to the count;
* ``reset``: available only while the count is above zero;
* ``guarded_add`` (``{"by": int}``): ``authorize`` refuses every caller without a principal.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator
from contextlib import asynccontextmanager
from typing import Any

from pydantic import BaseModel

from foldkit_agent import AgentRuntime, Message, Program, agent, message_union, projection, surface


class Model(BaseModel, frozen=True):
    count: int = 0
    note: str | None = None


class Added(Message):
    by: int
    note: str | None = None


class Reset(Message):
    pass


class GuardedAdded(Message):
    by: int


Msg = message_union(Added, Reset, GuardedAdded)
App = surface.application(model=Model, message=Msg, initial=Model())
Counter = agent.for_application(App)


def update(model: Model, message: Message) -> Model:
    match message:
        case Added(by=by, note=note):
            return model.model_copy(update={"count": model.count + by, "note": note})
        case GuardedAdded(by=by):
            return model.model_copy(update={"count": model.count + by})
        case Reset():
            return model.model_copy(update={"count": 0})
        case _:
            return model


def _signed_in(request: Any) -> bool | agent.Deny:
    return True if request.principal is not None else agent.Deny("sign in to add this way")


Definition = Counter.make(
    context=projection.pick(App.model.count, App.model.note),
    messages=Counter.expose(
        Msg,
        {
            Added: Counter.variant(name="add", description="Add to the count, with a note"),
            Reset: Counter.variant(
                name="reset",
                description="Set the count back to zero",
                available=lambda model: model.count > 0,
            ),
            GuardedAdded: Counter.variant(
                name="guarded_add", description="Add, signed in", authorize=_signed_in
            ),
        },
    ),
)


@asynccontextmanager
async def runtime() -> AsyncGenerator[AgentRuntime[Any, Any]]:
    """A fresh runtime (audited in memory) at count 0."""
    async with Program(init=Model(), update=update).run() as running:
        rt = Counter.bind(
            definition=Definition,
            host=running.host,
            audit=agent.audit_log(),
            principal=lambda inv: inv.credentials,
        )
        try:
            yield rt
        finally:
            rt.close()
