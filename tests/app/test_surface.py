"""The application substrate: unions, message sets, field references and projections."""

from __future__ import annotations

import pytest
from pydantic import BaseModel

from foldkit_agent import AgentContractError, Message, message_union, projection, surface
from foldkit_agent.contract.schema import projection_schema
from tests.support import counter
from tests.support.counter import App, Incremented, Model, Msg, Other, Reset


def test_duplicate_tags_in_a_union_are_an_error() -> None:
    class Reset(Message):  # a second class with the same tag
        pass

    with pytest.raises(AgentContractError, match="'Reset'"):
        message_union(Reset, counter.Reset)


def test_message_sets_must_be_disjoint_to_be_joined() -> None:
    a = surface.message_set(App, [Incremented])
    b = surface.message_set(App, [Incremented, Reset])
    with pytest.raises(AgentContractError, match="overlap"):
        surface.message_set_union(a, b)
    joined = surface.message_set_union(a, surface.message_set(App, [Reset]))
    assert list(joined.variants) == ["Incremented", "Reset"]


def test_message_set_refuses_a_message_outside_the_application() -> None:
    with pytest.raises(AgentContractError, match="not in"):
        surface.message_set(App, [Other])


def test_field_refs_are_checked_against_the_model() -> None:
    with pytest.raises(AttributeError, match="no field 'missing'"):
        _ = App.model.missing
    assert App.model.count.path == ("count",)


def test_nested_field_refs_read_through_models() -> None:
    class Settings(BaseModel, frozen=True):
        theme: str = "dark"

    class Outer(BaseModel, frozen=True):
        settings: Settings = Settings()
        maybe: Settings | None = None

    app = surface.application(model=Outer, message=Msg)
    p = projection.pick(app.model.settings.theme)
    assert p.get(Outer()) == {"theme": "dark"}
    q = projection.pick(app.model.maybe.theme)
    assert q.get(Outer()) == {"theme": None}
    assert projection_schema(q)["properties"]["theme"] == {
        "anyOf": [{"type": "string"}, {"type": "null"}]
    }


def test_compose_refuses_overlapping_projections() -> None:
    a = projection.pick(App.model.count)
    with pytest.raises(AgentContractError, match="'count'"):
        projection.compose(a, projection.pick(App.model.count))
    both = projection.compose(a, projection.pick(App.model.selected))
    assert both.get(Model(count=2)) == {"count": 2, "selected": None}


def test_a_feature_names_its_projection_and_its_actions() -> None:
    add = surface.action(name="add", description="Add one", message=Incremented)
    shown = projection.pick(App.model.count)
    feature = surface.feature(projection=shown, actions=[add])
    assert feature.projection is shown
    assert feature.actions == (add,)


def test_a_feature_refuses_what_is_not_a_projection_or_an_action() -> None:
    add = surface.action(name="add", description="Add one", message=Incremented)
    shown = projection.pick(App.model.count)
    with pytest.raises(AgentContractError, match="takes a projection"):
        surface.feature(projection=App.model.count)  # type: ignore[arg-type]
    with pytest.raises(AgentContractError, match="takes surface actions"):
        surface.feature(projection=shown, actions=["add"])  # type: ignore[list-item]
    with pytest.raises(AgentContractError, match="two actions named 'add'"):
        surface.feature(projection=shown, actions=[add, add])


def test_a_misspelt_model_field_is_answered_with_the_closest_field() -> None:
    with pytest.raises(AttributeError) as info:
        _ = App.model.cuont  # pyright: ignore[reportAttributeAccessIssue]
    assert str(info.value).endswith("has no field 'cuont'; did you mean 'count'?")
