"""What travels with one invocation (DESIGN §3 ``Invocation``, §4.3, §4.10): its id, its
transport, and the one Model snapshot it sees."""

from __future__ import annotations

import asyncio
import re
from typing import Any

import pytest
from pydantic import BaseModel

from foldkit_agent import (
    AgentContractError,
    Invocation,
    Message,
    agent,
    message_union,
    new_invocation_id,
    surface,
)
from tests.support.hosts import RecordingHost


class Model(BaseModel, frozen=True):
    items: tuple[str, ...] = ()


class Added(Message):
    item: str


class Saved(Message):
    request_id: str | None = None


class AddInput(BaseModel):
    item: str


Msg = message_union(Added, Saved)
App = surface.application(model=Model, message=Msg)
Builder = agent.for_application(App)


def test_new_invocation_ids_are_process_random_hex_and_a_counter_and_never_repeat() -> None:
    ids = [new_invocation_id() for _ in range(1000)]
    assert len(set(ids)) == 1000
    assert all(re.fullmatch(r"[0-9a-f]{16}-[0-9a-f]+", i) for i in ids)
    assert len({i.split("-")[0] for i in ids}) == 1  # one random prefix per process
    counters = [int(i.split("-")[1], 16) for i in ids]
    assert counters == sorted(counters)


def test_an_invocation_defaults_to_a_fresh_id_and_the_in_app_transport() -> None:
    a, b = Invocation(), Invocation()
    assert (a.transport, a.signal, a.credentials) == ("in-app", None, None)
    assert a.id != b.id


async def test_a_call_without_an_invocation_is_audited_as_in_app() -> None:
    audit = agent.audit_log()
    d = Builder.make(messages=Builder.expose({Added: "Add"}))
    rt = agent.bind(definition=d, host=RecordingHost(Model()), audit=audit)
    result = await rt.messages.dispatch("added", {"item": "x"})
    (entry,) = audit.entries()
    assert (entry.transport, result.invocation.transport) == ("in-app", "in-app")
    assert entry.invocation_id == result.invocation.id


async def test_the_model_is_not_cloned_every_hook_sees_the_hosts_own_object() -> None:
    model = Model(items=("a",))
    seen: list[Any] = []

    def available(m: Model) -> bool:
        seen.append(m)
        return True

    def authorize(request: Any) -> bool:
        seen.append(request.model)
        return True

    def to_message(inp: AddInput, ctx: Any) -> Added:
        seen.append(ctx.model)
        return Added(item=inp.item)

    d = Builder.make(
        messages=Builder.expose(
            {
                Added: Builder.variant(
                    description="Add",
                    available=available,
                    authorize=authorize,
                    input=AddInput,
                    to_message=to_message,
                )
            }
        )
    )
    rt = agent.bind(definition=d, host=RecordingHost(model), principal=lambda inv: None)
    await rt.messages.dispatch("added", {"item": "b"})
    assert len(seen) == 3
    assert all(m is model for m in seen)


async def test_an_invocation_id_already_in_flight_is_refused_and_nothing_is_sent() -> None:
    d = Builder.make(
        messages=Builder.expose(
            {
                Saved: Builder.variant(
                    description="Save",
                    completion=agent.Completion(
                        success=Saved, correlate=agent.by_invocation_id("request_id")
                    ),
                )
            }
        )
    )
    host = RecordingHost(Model())
    audit = agent.audit_log()
    rt = agent.bind(definition=d, host=host, audit=audit)
    first = asyncio.create_task(rt.messages.dispatch("saved", {}, Invocation(id="inv-1")))
    for _ in range(100):
        if host.dispatched:
            break
        await asyncio.sleep(0)
    with pytest.raises(AgentContractError) as info:
        await rt.messages.dispatch("saved", {}, Invocation(id="inv-1"))
    assert "in flight" in info.value.message
    assert host.dispatched == [Saved()]  # the reuse sent nothing
    assert host.model_reads == 1
    host.emit(Saved(request_id="inv-1"))
    assert (await first).completion is not None
    again = asyncio.create_task(rt.messages.dispatch("saved", {}, Invocation(id="inv-1")))
    for _ in range(100):
        if len(host.dispatched) == 2:
            break
        await asyncio.sleep(0)
    host.emit(Saved(request_id="inv-1"))
    assert (await again).completion is not None  # free again once the first call answered
    assert [(e.decision, e.outcome) for e in audit.entries()] == [
        ("refused", "AgentContractError"),
        ("dispatched", "completed"),
        ("dispatched", "completed"),
    ]
