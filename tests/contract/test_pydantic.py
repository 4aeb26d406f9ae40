"""What contract/expressible.py and the decoder's fast path read of pydantic is still there: these
fail on a pydantic upgrade that moves it, before a refusal silently stops being made."""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import BaseModel, BeforeValidator, StringConstraints, field_validator
from pydantic.fields import FieldInfo

from foldkit_agent.contract.decode import InputDecoder


def _fields(model: type[BaseModel]) -> dict[str, Any]:
    core: Any = model.__pydantic_core_schema__
    assert core["type"] == "model"
    assert core["schema"]["type"] == "model-fields"
    return core["schema"]["fields"]


class Coerced(BaseModel):
    n: Annotated[int, BeforeValidator(int)]


class Stripped(BaseModel, str_strip_whitespace=True):
    name: Annotated[str, StringConstraints(strip_whitespace=True, max_length=4)]


class Node(BaseModel):
    child: Node | None = None


class Checked(BaseModel):
    n: int

    @field_validator("n")
    @classmethod
    def positive(cls, value: int) -> int:
        return value


def test_a_before_validator_is_a_function_before_node_holding_its_function() -> None:
    node = _fields(Coerced)["n"]
    assert node["type"] == "model-field"
    assert node["schema"]["type"] == "function-before"
    assert node["schema"]["function"]["function"] is int


def test_string_normalisers_and_bounds_are_keys_of_the_str_node_and_config() -> None:
    node = _fields(Stripped)["name"]["schema"]
    assert (node["type"], node["strip_whitespace"], node["max_length"]) == ("str", True, 4)
    core: Any = Stripped.__pydantic_core_schema__
    assert core["config"]["str_strip_whitespace"] is True


def test_a_self_reference_is_a_definitions_node_with_definition_refs() -> None:
    core: Any = Node.__pydantic_core_schema__
    assert core["type"] == "definitions"
    assert [d["ref"] for d in core["definitions"]]
    assert "definition-ref" in repr(core["schema"])


def test_the_fast_path_reads_validators_and_constraints_from_documented_attributes() -> None:
    decorators = Checked.__pydantic_decorators__
    assert list(decorators.field_validators) == ["positive"]
    assert InputDecoder(Checked)._flat is False  # pyright: ignore[reportPrivateUsage]
    bounded = FieldInfo.from_field(ge=0, max_length=3)
    assert [type(m).__name__ for m in bounded.metadata] == ["Ge", "MaxLen"]
