"""``bind`` refuses a host that declares the Messages it accepts when an exposed one is not
among them, naming the Message; a host that declares nothing is trusted to its type."""

from __future__ import annotations

from collections.abc import Container
from typing import Any

import pytest
from pydantic import BaseModel

from foldkit_agent import AgentContractError, Host, Message, Program, agent, message_union


class Model(BaseModel, frozen=True):
    count: int = 0


class Incremented(Message):
    by: int = 1


class Reset(Message):
    pass


class Logged(Message):
    text: str


Counter = message_union(Incremented, Reset)
Contract = agent.make(messages=agent.expose(Counter, {Incremented: "Add", Reset: "Reset"}))


def _update(model: Model, message: Message) -> Model:
    return model.model_copy(update={"count": model.count + 1})


def _host(accepts: Container[type[Any]] | None) -> Host[Model, Message]:
    return Host(model=Model, dispatch=lambda _m: None, accepts=accepts)


def test_a_host_accepting_fewer_messages_than_the_contract_exposes_is_refused_by_name() -> None:
    for accepts in (message_union(Incremented, Logged), (Incremented,)):
        with pytest.raises(AgentContractError) as info:
            agent.bind(definition=Contract, host=_host(accepts))
        assert str(info.value) == (
            "the host does not accept Reset, which the contract exposes (as 'reset'): accept "
            "it in the host's Messages or stop exposing it"
        )
        assert info.value.capability == "reset"


def test_a_host_accepting_every_exposed_message_or_more_binds() -> None:
    for accepts in (Counter, message_union(Reset, Logged, Incremented), (Reset, Incremented)):
        assert agent.bind(definition=Contract, host=_host(accepts)).definition is Contract
    assert agent.bind(definition=Contract, host=_host(None)).definition is Contract


async def test_a_program_knows_its_union_and_its_host_declares_it() -> None:
    async with Program(init=Model(), update=_update, message=Counter).run() as running:
        assert running.host.accepts is Counter
        assert agent.bind(definition=Contract, host=running.host).definition is Contract
    narrow = message_union(Incremented)
    async with Program(init=Model(), update=_update, message=narrow).run() as running:
        with pytest.raises(AgentContractError, match="does not accept Reset"):
            agent.bind(definition=Contract, host=running.host)
    async with Program(init=Model(), update=_update).run() as running:
        assert running.host.accepts is None
