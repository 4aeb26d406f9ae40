"""The JSON Schema compatibility profile (DESIGN §4.13): F07, F08, F09."""

from __future__ import annotations

import enum
import json
from typing import Any, Literal

import jsonschema
import pytest
from pydantic import BaseModel, Field

from foldkit_agent import Message, agent, message_union
from foldkit_agent.contract.schema import json_schema


class Color(enum.Enum):
    RED = "red"
    BLUE = "blue"


class Address(BaseModel):
    street: str = Field(description="Street and number")
    zip: str


class Card(BaseModel):
    kind: Literal["card"] = "card"
    number: str


class Iban(BaseModel):
    kind: Literal["iban"] = "iban"
    iban: str


class PlacedOrder(Message):
    billing: Address
    shipping: Address
    color: Color
    note: str | None = None
    payment: Card | Iban = Field(discriminator="kind")
    tags: list[str] = []
    sizes: dict[str, int] = {}


class Plain(Message):
    pass


def walk(node: Any) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    if isinstance(node, dict):
        out.append(node)
        for v in node.values():
            out.extend(walk(v))
    elif isinstance(node, list):
        for v in node:
            out.extend(walk(v))
    return out


SCHEMA = json_schema(PlacedOrder)


def test_f07_no_refs_or_defs_anywhere() -> None:
    text = json.dumps(SCHEMA)
    assert "$ref" not in text
    assert "$defs" not in text


def test_f07_the_schema_is_a_valid_2020_12_schema() -> None:
    jsonschema.Draft202012Validator.check_schema(SCHEMA)


def test_f07_the_nested_model_used_twice_is_inlined_twice() -> None:
    assert (
        SCHEMA["properties"]["billing"]
        == SCHEMA["properties"]["shipping"]
        == {
            "type": "object",
            "properties": {
                "street": {"description": "Street and number", "type": "string"},
                "zip": {"type": "string"},
            },
            "required": ["street", "zip"],
            "additionalProperties": False,
        }
    )


def test_f07_enums_are_inlined_by_value() -> None:
    assert SCHEMA["properties"]["color"] == {"enum": ["red", "blue"], "type": "string"}


def test_every_object_with_properties_forbids_additional_properties() -> None:
    objects = [n for n in walk(SCHEMA) if "properties" in n and isinstance(n["properties"], dict)]
    assert len(objects) >= 5
    assert all(n["additionalProperties"] is False for n in objects)


def test_f08_nullable_is_any_of_with_null_never_a_type_array() -> None:
    assert SCHEMA["properties"]["note"] == {
        "anyOf": [{"type": "string"}, {"type": "null"}],
        "default": None,
    }
    assert not any(isinstance(n.get("type"), list) for n in walk(SCHEMA))


def test_f09_unions_are_any_of_with_a_const_discriminator_never_one_of() -> None:
    payment = SCHEMA["properties"]["payment"]
    assert set(payment) == {"anyOf"}
    consts = [b["properties"]["kind"]["const"] for b in payment["anyOf"]]
    assert consts == ["card", "iban"]
    assert not any("oneOf" in n for n in walk(SCHEMA))
    assert not any("discriminator" in n for n in walk(SCHEMA))


def test_no_generated_titles_but_a_property_named_title_survives() -> None:
    class Titled(Message):
        title: str

    schema = json_schema(Titled)
    assert "title" not in schema
    assert schema["properties"] == {"title": {"type": "string"}}


def test_a_message_without_fields_exports_an_empty_closed_object() -> None:
    assert json_schema(Plain) == {"type": "object", "properties": {}, "additionalProperties": False}


def test_the_advertised_schema_is_the_one_enforced() -> None:
    d = agent.make(messages=agent.expose(message_union(PlacedOrder), {PlacedOrder: "Place"}))
    cap = d.by_name["placed_order"]
    validator = jsonschema.Draft202012Validator(cap.input_schema)
    good = {
        "billing": {"street": "a", "zip": "1"},
        "shipping": {"street": "b", "zip": "2"},
        "color": "red",
        "payment": {"kind": "iban", "iban": "DE00"},
    }
    assert validator.is_valid(good)
    cap.decoder.decode("placed_order", good)
    bad = {**good, "billing": {"street": "a", "zip": "1", "floor": 2}}
    assert not validator.is_valid(bad)
    with pytest.raises(Exception, match="unexpected field"):
        cap.decoder.decode("placed_order", bad)


def test_export_is_deterministic() -> None:
    assert json.dumps(json_schema(PlacedOrder)) == json.dumps(json_schema(PlacedOrder))
