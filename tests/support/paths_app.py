"""An application with one capability for each path a 2026-era MCP call over HTTP can take.

``foldkit-agent serve tests.support.paths_app:runtime --mcp http`` serves:

* ``bump`` (``{"by": int}``): plain, nothing to wait for, so answered inline (one JSON
  response);
* ``wait_for_gate``: closes the gate and completes when it is open again (a completion
  contract, up to 30 s), so it takes the streaming path;
* ``open_gate``: plain; opens the gate, completing every ``wait_for_gate`` waiting;
* ``approve_bump`` (``{"by": int}``): ``confirm=True``, so it may wait for a person and streams.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator
from contextlib import asynccontextmanager
from typing import Any

from pydantic import BaseModel

from foldkit_agent import AgentRuntime, Message, Program, agent, message_union, projection, surface


class Model(BaseModel, frozen=True):
    bumps: int = 0
    gate_open: bool = True


class Bumped(Message):
    by: int


class ClosedGate(Message):
    pass


class OpenedGate(Message):
    pass


class ApprovedBump(Message):
    by: int


Msg = message_union(Bumped, ClosedGate, OpenedGate, ApprovedBump)
App = surface.application(model=Model, message=Msg, initial=Model())
Paths = agent.for_application(App)


def update(model: Model, message: Message) -> Model:
    match message:
        case Bumped(by=by) | ApprovedBump(by=by):
            return model.model_copy(update={"bumps": model.bumps + by})
        case ClosedGate():
            return model.model_copy(update={"gate_open": False})
        case OpenedGate():
            return model.model_copy(update={"gate_open": True})
        case _:
            return model


Definition = Paths.make(
    context=projection.pick(App.model.bumps, App.model.gate_open),
    messages=Paths.expose(
        Msg,
        {
            Bumped: Paths.variant(name="bump", description="Add to the count"),
            ClosedGate: Paths.variant(
                name="wait_for_gate",
                description="Close the gate; completes when it is open again",
                completion=agent.when(
                    projection=projection.pick(App.model.gate_open),
                    predicate=lambda value, _request: bool(value["gate_open"]),
                    timeout=30.0,
                ),
            ),
            OpenedGate: Paths.variant(name="open_gate", description="Open the gate"),
            ApprovedBump: Paths.variant(
                name="approve_bump",
                description="Add to the count once a person says yes",
                confirm=True,
            ),
        },
    ),
)


@asynccontextmanager
async def runtime() -> AsyncGenerator[AgentRuntime[Any, Any]]:
    """The runtime ``serve`` runs (audited in memory)."""
    async with Program(init=Model(), update=update).run() as running:
        rt = Paths.bind(definition=Definition, host=running.host, audit=agent.audit_log())
        try:
            yield rt
        finally:
            rt.close()
