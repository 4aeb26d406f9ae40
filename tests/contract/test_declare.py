"""Declaration errors surface at declaration (DESIGN §4.1), names follow §4.2 (F10)."""

from __future__ import annotations

import ast
from typing import Any

import pytest
from pydantic import BaseModel

from foldkit_agent import AgentContractError, Message, agent, message_union, projection, surface
from foldkit_agent.contract.names import default_name, is_valid_name
from tests.support.counter import App, Grow, Incremented, Msg, Other, Reset


def test_default_name_starts_a_word_at_every_capital() -> None:
    assert default_name("RequestedDeleteTodo") == "requested_delete_todo"
    assert default_name("HTTPGet") == "h_t_t_p_get"
    assert default_name("Reset") == "reset"


def test_capabilities_keep_declaration_order_and_default_names() -> None:
    d = agent.make(messages=agent.expose(Msg, {Reset: "Reset", Incremented: "Add"}))
    assert [m["name"] for m in agent.messages(d)] == ["reset", "incremented"]
    assert [m["tag"] for m in agent.messages(d)] == ["Reset", "Incremented"]


def test_a_tag_string_key_resolves_like_the_class() -> None:
    d = agent.make(messages=agent.expose(Msg, {"Incremented": "Add"}))
    assert d.by_name["incremented"].message is Incremented


def test_a_key_outside_the_union_is_a_declaration_error() -> None:
    with pytest.raises(AgentContractError, match="Other"):
        agent.expose(Msg, {Other: "nope"})
    with pytest.raises(AgentContractError, match="Nope"):
        agent.expose(Msg, {"Nope": "nope"})


@pytest.mark.parametrize(
    "bad_name",
    ["Cart.AddItem", "add item", "ÄndereMenge", "x" * 129, "", "tool/name"],
)
def test_f10_names_clients_reject_fail_at_declaration_naming_the_variant(bad_name: str) -> None:
    with pytest.raises(AgentContractError) as info:
        agent.expose(Msg, {Incremented: agent.variant(name=bad_name, description="Add")})
    assert "Incremented" in str(info.value)
    assert "the name= given" in str(info.value)  # a name= was given already
    # the fix is a name to pass, not a bare "name=" (the text ended "choose another name=")
    fixed = str(info.value).rsplit("pass agent.variant(name=", 1)[1].split(",", 1)[0]
    assert is_valid_name(ast.literal_eval(fixed)), fixed


def test_f10_a_tag_whose_default_name_is_invalid_needs_an_explicit_name() -> None:
    class ÄndereMenge(Message):
        pass

    union = message_union(ÄndereMenge)
    with pytest.raises(AgentContractError, match="the name made from the tag"):
        agent.expose(union, {ÄndereMenge: "Change quantity"})
    d = agent.make(
        messages=agent.expose(
            union, {ÄndereMenge: agent.variant(name="change_quantity", description="x")}
        )
    )
    assert d.by_name["change_quantity"].tag == "ÄndereMenge"


def test_a_128_character_name_is_accepted() -> None:
    name = "n" * 128
    d = agent.make(
        messages=agent.expose(Msg, {Incremented: agent.variant(name=name, description="Add")})
    )
    assert name in d.by_name


def test_f10_two_variants_that_map_to_one_name_fail_at_declaration() -> None:
    with pytest.raises(AgentContractError, match=r"'Reset'.*both map to.*'same'"):
        agent.expose(
            Msg,
            {
                Incremented: agent.variant(name="same", description="a"),
                Reset: agent.variant(name="same", description="b"),
            },
        )


def test_two_expose_calls_that_collide_fail_at_make() -> None:
    a = agent.expose(Msg, {Incremented: agent.variant(name="go", description="a")})
    b = agent.expose(Msg, {Reset: agent.variant(name="go", description="b")})
    with pytest.raises(AgentContractError, match="'go'"):
        agent.make(messages=[a, b])


def test_input_without_to_message_is_a_declaration_error() -> None:
    class In(BaseModel):
        n: int

    with pytest.raises(AgentContractError, match="to_message is missing"):
        agent.expose(Msg, {Incremented: agent.variant(description="a", input=In)})
    with pytest.raises(AgentContractError, match="input is missing"):
        agent.expose(Msg, {Incremented: agent.variant(description="a", to_message=lambda i, c: i)})


def test_a_recursive_input_type_is_a_declaration_error_naming_the_variant() -> None:
    union = message_union(Grow)
    with pytest.raises(AgentContractError, match=r"'grow' \(Grow\): the input type refers to"):
        agent.expose(union, {Grow: "Grow the tree"})


def test_an_empty_description_is_a_declaration_error() -> None:
    with pytest.raises(AgentContractError, match="description"):
        agent.expose(Msg, {Incremented: "  "})


def test_an_action_exposed_under_another_tag_is_a_declaration_error() -> None:
    act = surface.action(name="reset_all", description="Reset", message=Reset)
    with pytest.raises(AgentContractError, match="makes 'Reset'"):
        agent.expose(Msg, {Incremented: agent.action(act)})
    d = agent.make(messages=agent.expose(Msg, {Reset: agent.action(act)}))
    assert d.by_name["reset_all"].tag == "Reset"


def test_a_variant_naming_its_message_is_refused_under_another_key() -> None:
    named = agent.variant(Incremented, description="Add")
    with pytest.raises(AgentContractError) as info:
        agent.expose(Msg, {Reset: named})
    assert str(info.value) == (
        "the variant for 'Incremented' is keyed under 'Reset'; key it under Incremented or "
        "name Reset in agent.variant(...)"
    )
    with pytest.raises(AgentContractError, match="the variant for 'int' is keyed under 'Reset'"):
        agent.expose(Msg, {Reset: agent.variant(int, description="Reset")})  # type: ignore[arg-type]
    d = agent.make(messages=agent.expose(Msg, {Incremented: named}))
    assert d.by_name["incremented"].message is Incremented


def test_expose_subset_refuses_a_key_outside_the_subset() -> None:
    subset = surface.message_set(App, [Incremented])
    with pytest.raises(AgentContractError, match="message set"):
        agent.expose_subset(subset, {Reset: "Reset"})
    d = agent.make(messages=agent.expose_subset(subset, {Incremented: "Add"}))
    assert list(d.by_name) == ["incremented"]


def test_wiring_is_contract_only() -> None:
    d = agent.make(messages=agent.expose(Msg, {Reset: "Reset"}))
    assert d.wiring().contract is d


def test_resource_names_follow_the_name_rule_and_are_unique() -> None:
    p = projection.pick(App.model.count)
    with pytest.raises(AgentContractError):
        agent.resource("bad name", description="x", projection=p)
    r = agent.resource("count", description="x", projection=p)
    with pytest.raises(AgentContractError, match="two resources"):
        agent.make(messages=agent.expose(Msg, {Reset: "r"}), resources=[r, r])


def test_introspection_is_plain_data() -> None:
    builder = agent.for_application(App)
    d = builder.make(
        context=projection.pick(App.model.count),
        messages=builder.expose(
            {
                Incremented: builder.variant(description="Add", available=lambda m: m.count < 10),
                Reset: builder.variant(description="Reset", authorize=lambda r: True),
            }
        ),
    )
    data: dict[str, Any] = agent.schema(d)
    assert data["capabilities"][0] == {
        "name": "incremented",
        "tag": "Incremented",
        "title": None,
        "description": "Add",
        "hints": {"read_only": False, "destructive": None, "idempotent": False, "open_world": None},
        "input_schema": {
            "type": "object",
            "properties": {"by": {"default": 1, "type": "integer"}},
            "additionalProperties": False,
        },
        "model_dependent": True,
        "requires_authorization": False,
        "has_authorize": False,
        "approval": "none",
        "completion": "none",
    }
    assert data["capabilities"][1]["has_authorize"] is True
    assert data["context"] == {
        "type": "object",
        "properties": {"count": {"type": "integer"}},
        "required": ["count"],
        "additionalProperties": False,
    }


def test_the_error_family_is_reachable_from_the_agent_namespace() -> None:
    import foldkit_agent
    from foldkit_agent import errors

    for name in errors.__all__:
        assert getattr(agent, name) is getattr(errors, name) is getattr(foldkit_agent, name)
    assert issubclass(agent.AgentAuthorizationError, agent.AgentError)


def test_a_feature_context_is_the_contract_of_its_projection() -> None:
    shown = projection.pick(App.model.count)
    add = surface.action(name="add", description="Add one", message=Incremented)
    feature = surface.feature(projection=shown, actions=[add])
    builder = agent.for_application(App)
    exposed = builder.expose({Incremented: builder.action(add)})
    by_feature = builder.make(context=feature, messages=exposed)
    assert by_feature.context is shown
    schema = agent.context_schema(by_feature)
    assert schema is not None
    assert list(schema["properties"]) == ["count"]


def test_a_context_that_is_neither_a_projection_nor_a_feature_is_refused() -> None:
    with pytest.raises(AgentContractError, match=r"surface\.feature"):
        agent.make(messages=agent.expose(Msg, {Reset: "r"}), context=App.model.count)  # type: ignore[arg-type]


def test_a_contract_error_after_the_name_names_the_capability_before_its_tag() -> None:
    """It said 'RequestedDeleteTodo: ...' where the capability is named 'wipe_todo'."""
    with pytest.raises(AgentContractError) as info:
        agent.expose(
            Msg, {Incremented: agent.variant(name="wipe_todo", description="x", input=int)}
        )  # pyright: ignore[reportArgumentType]
    assert str(info.value).startswith("'wipe_todo' (Incremented): ")
    assert info.value.capability == "wipe_todo"
