"""The schema advertised is the one enforced (DESIGN §4.13; F05): a constraint JSON Schema
cannot express is refused at declaration; a validator that only refuses stays allowed and
names its field; lone surrogates name their field."""

from __future__ import annotations

from ipaddress import IPv4Address
from typing import Annotated, Any

import pytest
from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    HttpUrl,
    PlainValidator,
    SecretStr,
    StringConstraints,
    WrapValidator,
    field_validator,
    model_validator,
)

from foldkit_agent import AgentContractError, AgentInvalidInputError, Message, agent, message_union
from tests.support.hosts import RecordingHost


def declare(cls: type[Message]) -> Any:
    return agent.make(messages=agent.expose(message_union(cls), {cls: "Do it"}))


def refused_field(cls: type[Message]) -> str:
    with pytest.raises(AgentContractError) as info:
        declare(cls)
    assert cls.tag() in info.value.message
    return info.value.message


def test_stripping_whitespace_before_a_length_check_is_refused_naming_the_field() -> None:
    class Create(Message):
        title: Annotated[str, StringConstraints(strip_whitespace=True, min_length=1)]

    text = refused_field(Create)
    assert "'title'" in text
    assert "strip_whitespace" in text


def test_a_config_wide_strip_with_a_bounded_string_is_refused() -> None:
    class Create(Message):
        model_config = ConfigDict(str_strip_whitespace=True)
        title: str = Field(max_length=10)

    assert "'title'" in refused_field(Create)


def test_lowercasing_before_a_pattern_is_refused() -> None:
    class Tag(Message):
        code: Annotated[str, StringConstraints(to_lower=True, pattern="^[a-z]+$")]

    assert "to_lower" in refused_field(Tag)


def test_a_normaliser_without_any_bound_is_allowed_since_it_accepts_the_same_values() -> None:
    class Create(Message):
        title: Annotated[str, StringConstraints(strip_whitespace=True)]

    d = declare(Create)
    assert d.capabilities[0].decoder.decode("create", {"title": " a "}) == Create(title="a")


@pytest.mark.parametrize(
    "validator",
    [
        BeforeValidator(lambda v: int(v) if isinstance(v, str) else v),
        WrapValidator(lambda v, handler: handler(int(v) if isinstance(v, str) else v)),
        PlainValidator(lambda v: int(v)),
    ],
)
def test_a_validator_that_sees_the_raw_input_is_refused(validator: Any) -> None:
    class SetQty(Message):
        qty: Annotated[int, validator]

    text = refused_field(SetQty)
    assert "'qty'" in text
    assert "after validator" in text


def test_a_before_model_validator_is_refused() -> None:
    class SetQty(Message):
        qty: int

        @model_validator(mode="before")
        @classmethod
        def coerce(cls, data: Any) -> Any:
            return data

    assert "whole input" in refused_field(SetQty)


def test_a_nested_before_validator_is_refused_with_its_path() -> None:
    class Line(BaseModel):
        qty: Annotated[int, BeforeValidator(lambda v: v)]

    class Order(Message):
        lines: list[Line]

    assert "'lines.qty'" in refused_field(Order)


def test_pydantics_own_validators_are_trusted() -> None:
    class Profile(Message):
        site: HttpUrl
        ip: IPv4Address
        secret: SecretStr

    assert declare(Profile).capabilities[0].name == "profile"


def test_f05_an_after_validator_that_refuses_is_allowed_and_names_its_field() -> None:
    def even(value: int) -> int:
        if value % 2:
            raise ValueError("secret detail")
        return value

    class SetQty(Message):
        qty: Annotated[int, AfterValidator(even)]

    rt = agent.bind(definition=declare(SetQty), host=RecordingHost(None))
    with pytest.raises(AgentInvalidInputError) as info:
        rt.definition.capabilities[0].decoder.decode("set_qty", {"qty": 3})
    assert info.value.issues == [{"path": "qty", "problem": "invalid value"}]
    assert "secret" not in info.value.message


def test_a_field_validator_in_after_mode_is_allowed() -> None:
    class Rename(Message):
        title: str

        @field_validator("title")
        @classmethod
        def visible(cls, value: str) -> str:
            if not value.strip():
                raise ValueError("blank")
            return value

    cap = declare(Rename).capabilities[0]
    with pytest.raises(AgentInvalidInputError) as info:
        cap.decoder.decode("rename", {"title": "  "})
    assert info.value.issues[0]["path"] == "title"


def test_a_lone_surrogate_names_the_field_that_holds_it() -> None:
    class Create(Message):
        title: str
        tags: list[str] = []

    cap = declare(Create).capabilities[0]
    with pytest.raises(AgentInvalidInputError) as info:
        cap.decoder.decode("create", {"title": "\ud800"})
    assert [i["path"] for i in info.value.issues] == ["title"]
    with pytest.raises(AgentInvalidInputError) as info:
        cap.decoder.decode("create", {"title": "a", "tags": ["ok", "\udfff"]})
    assert [i["path"] for i in info.value.issues] == ["tags.1"]
    assert "surrogate" in info.value.issues[0]["problem"]
