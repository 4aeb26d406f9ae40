"""A projection must read this application's Model (spec "Completing on state"; DESIGN §4.1):
field references record their root Model and a contract refuses a projection of another."""

from __future__ import annotations

import pytest
from pydantic import BaseModel

from foldkit_agent import AgentContractError, Message, agent, message_union, projection, surface
from foldkit_agent.app.surface import field_root
from tests.support.counter import App, Incremented, Model
from tests.support.hosts import RecordingHost


class OtherModel(BaseModel, frozen=True):
    label: str = ""
    nested: Model | None = None


class Labelled(Message):
    label: str


Other = surface.application(model=OtherModel, message=message_union(Labelled))


def test_a_field_reference_records_the_model_it_starts_from() -> None:
    assert field_root(App.model.count) is Model
    assert field_root(Other.model.nested.count) is OtherModel  # nested: still the root
    assert projection.pick(App.model.count).root is Model


def test_picking_fields_of_two_models_is_a_declaration_error() -> None:
    with pytest.raises(AgentContractError, match="Model and OtherModel"):
        projection.pick(App.model.count, Other.model.label)


def test_composing_projections_of_two_models_is_a_declaration_error() -> None:
    with pytest.raises(AgentContractError, match="compose"):
        projection.compose(projection.pick(App.model.count), projection.pick(Other.model.label))


def test_a_context_of_another_model_is_refused_at_make() -> None:
    builder = agent.for_application(App)
    with pytest.raises(AgentContractError, match="the context reads OtherModel"):
        builder.make(
            context=projection.pick(Other.model.label),
            messages=builder.expose({Incremented: "Add"}),
        )


def test_a_resource_of_another_model_is_refused_at_make() -> None:
    builder = agent.for_application(App)
    with pytest.raises(AgentContractError, match="resource 'label' reads OtherModel"):
        builder.make(
            messages=builder.expose({Incremented: "Add"}),
            resources=[
                agent.resource(
                    "label", description="x", projection=projection.pick(Other.model.label)
                )
            ],
        )


def test_a_state_completion_of_another_model_is_refused_at_make() -> None:
    builder = agent.for_application(App)
    completion = agent.when(projection=projection.pick(Other.model.label), predicate=lambda v, r: 1)
    with pytest.raises(AgentContractError, match="'incremented''s completion reads OtherModel"):
        builder.make(
            messages=builder.expose(
                {Incremented: builder.variant(description="Add", completion=completion)}
            )
        )


def test_a_plain_contract_mixing_models_is_refused_at_make() -> None:
    with pytest.raises(AgentContractError, match="must read this application's Model"):
        agent.make(
            context=projection.pick(App.model.count),
            messages=agent.expose(App, {Incremented: "Add"}),
            resources=[
                agent.resource("l", description="x", projection=projection.pick(Other.model.label))
            ],
        )


def test_binding_a_contract_with_the_builder_of_another_model_is_refused() -> None:
    plain = agent.make(
        context=projection.pick(Other.model.label),
        messages=agent.expose(Other, {Labelled: "Label"}),
    )
    with pytest.raises(AgentContractError, match="reads OtherModel, but the builder is for Model"):
        agent.for_application(App).bind(definition=plain, host=RecordingHost(Model()))


def test_a_contract_of_this_model_binds() -> None:
    builder = agent.for_application(App)
    d = builder.make(
        context=projection.pick(App.model.count), messages=builder.expose({Incremented: "Add"})
    )
    rt = builder.bind(definition=d, host=RecordingHost(Model(count=2)))
    assert rt.context() == {"count": 2}
