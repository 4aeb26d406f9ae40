"""An application whose one capability reports the garbage collector's frozen objects.

``foldkit-agent serve tests.support.gc_probe:runtime`` must freeze what start-up allocated
(issue 20): calling ``probe`` records ``gc.get_freeze_count()`` as seen inside the serving
process into the Model, where the context shows it. (Reading the collector makes ``update``
impure; that is this probe's whole purpose.)
"""

from __future__ import annotations

import gc
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from pydantic import BaseModel

from foldkit_agent import AgentRuntime, Message, Program, agent, message_union, projection, surface


class Model(BaseModel, frozen=True):
    frozen_objects: int = -1
    """What ``gc.get_freeze_count()`` was at the last probe; -1 before any."""


class Probed(Message):
    pass


ProbeMessage = message_union(Probed)
ProbeApp = surface.application(model=Model, message=ProbeMessage, initial=Model())

PROBE = agent.make(
    context=projection.pick(ProbeApp.model.frozen_objects),
    messages=agent.expose(
        ProbeMessage,
        {
            Probed: agent.variant(
                name="probe", description="Record how many objects the collector froze"
            )
        },
    ),
)


def update(model: Model, message: Message) -> Model:
    return Model(frozen_objects=gc.get_freeze_count())


@asynccontextmanager
async def runtime() -> AsyncIterator[AgentRuntime[Model, Any]]:
    """What ``serve`` runs: the probe's runtime on a Program."""
    async with Program(init=Model(), update=update).run() as running:
        rt = agent.bind(definition=PROBE, host=running.host)
        try:
            yield rt
        finally:
            rt.close()
