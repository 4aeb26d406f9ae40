"""Reading the Model through the contract (DESIGN §3 ``.context()``, ``.resources.read``):
a read that fails is an ``AgentResourceError``, never a raw error."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import BaseModel

from foldkit_agent import AgentResourceError, AgentRuntime, Message, agent, message_union, surface
from foldkit_agent.app.projection import Projection
from tests.support.hosts import RecordingHost


class Model(BaseModel, frozen=True):
    count: int = 0


class Bumped(Message):
    pass


App = surface.application(model=Model, message=message_union(Bumped))
Builder = agent.for_application(App)


def count_or_fail(model: Model) -> int:
    if model.count < 0:
        raise KeyError("internal detail")
    return model.count


Fragile = Projection({"count": int}, {"count": count_or_fail}, root=Model)


def runtime(model: Model) -> AgentRuntime[Any, Any]:
    d = Builder.make(
        context=Fragile,
        messages=Builder.expose({Bumped: "Bump"}),
        resources=[agent.resource("counter", description="The counter", projection=Fragile)],
    )
    return agent.bind(definition=d, host=RecordingHost(model))


def test_a_resource_reads_its_projection_as_json_data() -> None:
    rt = runtime(Model(count=3))
    assert rt.resources.read("counter") == {"count": 3}
    assert rt.context() == {"count": 3}


def test_an_unknown_resource_is_an_agent_resource_error_naming_it() -> None:
    rt = runtime(Model())
    with pytest.raises(AgentResourceError) as info:
        rt.resources.read("nope")
    assert info.value.capability == "nope"
    assert info.value.message == "There is no resource named 'nope'."


def test_a_resource_whose_projection_raises_is_an_agent_resource_error_without_its_text() -> None:
    rt = runtime(Model(count=-1))
    with pytest.raises(AgentResourceError) as info:
        rt.resources.read("counter")
    assert info.value.message == "The resource 'counter' could not be read right now."
    assert "internal" not in info.value.message


def test_a_context_whose_projection_raises_is_an_agent_resource_error_not_a_raw_error() -> None:
    rt = runtime(Model(count=-1))
    with pytest.raises(AgentResourceError) as info:
        rt.context()
    assert info.value.capability == "context"
    assert isinstance(info.value.__cause__, KeyError)
