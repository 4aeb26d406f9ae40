"""Strict-mode schemas: what the model may send under them decodes to what the capability meant.

Property (DESIGN §4.13, OpenAI strict function calling): for every input the capability's own
schema accepts, the strict form of it (each optional field present, ``null`` when left out) is
valid under the rewritten schema, and the adapter's restoring turns it back into an input that
decodes to the same Message.
"""

from __future__ import annotations

from typing import Any, Literal

import jsonschema
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import BaseModel, Field

from foldkit_agent import Capability, Message, agent, message_union
from foldkit_agent.adapters.openai_agents import strict_schema


class Address(BaseModel):
    street: str
    zip: str | None = None
    floor: int = 0


class Line(BaseModel):
    sku: str = Field(min_length=1, max_length=12)
    qty: int = Field(default=1, ge=1, le=99)
    tags: list[str] = []


class Shipped(Message):
    lines: list[Line] = Field(min_length=1, max_length=3)
    to: Address | None = None
    speed: Literal["slow", "fast"] = "slow"
    insured: bool = False
    note: str | None = Field(default=None, max_length=40)


class Pinged(Message):
    pass


CONTRACT = agent.make(
    messages=agent.expose(message_union(Shipped, Pinged), {Shipped: "Ship", Pinged: "Ping"})
)


def strict_form(value: Any, schema: dict[str, Any]) -> Any:
    """``value`` as strict mode makes a model send it: every property present, null if absent."""
    if "anyOf" in schema:
        for branch in schema["anyOf"]:
            if jsonschema.Draft202012Validator(branch).is_valid(value):
                return strict_form(value, branch)
    if isinstance(value, dict) and "properties" in schema:
        props = schema["properties"]
        return {k: strict_form(value[k], props[k]) if k in value else None for k in props}
    if isinstance(value, list) and isinstance(schema.get("items"), dict):
        return [strict_form(v, schema["items"]) for v in value]
    return value


def decode(cap: Capability, value: Any) -> Message:
    return cap.decoder.decode(cap.name, value)


# Wire inputs each capability's own schema accepts, optional fields present or left out.
LINE = st.fixed_dictionaries(
    {"sku": st.text(min_size=1, max_size=12)},
    optional={"qty": st.integers(1, 99), "tags": st.lists(st.text(max_size=3), max_size=2)},
)
ADDRESS = st.fixed_dictionaries(
    {"street": st.text(max_size=5)},
    optional={"zip": st.none() | st.text(max_size=5), "floor": st.integers(-3, 50)},
)
INPUTS = {
    "shipped": st.fixed_dictionaries(
        {"lines": st.lists(LINE, min_size=1, max_size=3)},
        optional={
            "to": st.none() | ADDRESS,
            "speed": st.sampled_from(["slow", "fast"]),
            "insured": st.booleans(),
            "note": st.none() | st.text(max_size=40),
        },
    ),
    "pinged": st.just({}),
}


@given(name=st.sampled_from(sorted(INPUTS)), data=st.data())
@settings(max_examples=200, deadline=None)
def test_a_strict_form_is_accepted_and_restores_to_the_same_message(
    name: str, data: st.DataObject
) -> None:
    cap = CONTRACT.by_name[name]
    converted = strict_schema(cap.input_schema)
    assert converted is not None
    strict, restore = converted
    value = data.draw(INPUTS[name])
    jsonschema.Draft202012Validator(cap.input_schema).validate(value)
    sent = strict_form(value, cap.input_schema)
    jsonschema.Draft202012Validator(strict).validate(sent)
    assert decode(cap, restore(sent)) == decode(cap, value)


def test_every_object_in_a_strict_schema_is_closed_and_requires_all_its_properties() -> None:
    converted = strict_schema(CONTRACT.by_name["shipped"].input_schema)
    assert converted is not None
    strict, _restore = converted

    def check(node: Any) -> None:
        if isinstance(node, dict):
            assert "default" not in node
            assert "title" not in node
            if node.get("type") == "object":
                assert node["additionalProperties"] is False
                assert node["required"] == list(node["properties"])
            for value in node.values():
                check(value)
        elif isinstance(node, list):
            for value in node:
                check(value)

    check(strict)
    assert strict["properties"]["speed"] == {
        "anyOf": [{"enum": ["slow", "fast"], "type": "string"}, {"type": "null"}]
    }


def test_a_field_that_already_accepts_null_keeps_an_explicit_null() -> None:
    converted = strict_schema(CONTRACT.by_name["shipped"].input_schema)
    assert converted is not None
    _strict, restore = converted
    sent = {
        "lines": [{"sku": "a", "qty": None, "tags": None}],
        "to": None,
        "speed": None,
        "insured": None,
        "note": None,
    }
    assert restore(sent) == {"lines": [{"sku": "a"}], "to": None, "note": None}


def test_an_open_object_or_a_tuple_is_not_rewritten() -> None:
    open_object = {"type": "object", "properties": {}, "additionalProperties": True}
    pair = {
        "type": "object",
        "additionalProperties": False,
        "properties": {"p": {"type": "array", "prefixItems": [{"type": "integer"}]}},
        "required": ["p"],
    }
    assert strict_schema(open_object) is None
    assert strict_schema(pair) is None
    assert strict_schema({"anyOf": [open_object]}) is None
