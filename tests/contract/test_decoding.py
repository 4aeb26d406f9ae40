"""Strict decoding of the wire form (DESIGN §4.4, §4.5), F04 and F05."""

from __future__ import annotations

import datetime
import enum
import json
from typing import Any

import pytest
from pydantic import BaseModel, Field, field_validator

from foldkit_agent import AgentInvalidInputError, Message, agent, message_union
from tests.support.hosts import RecordingHost


class Size(enum.Enum):
    SMALL = "small"
    LARGE = "large"


class Address(BaseModel):
    street: str
    zip: str


class SetQuantity(Message):
    item_id: str
    qty: int


class Ship(Message):
    address: Address
    on: datetime.date
    size: Size = Size.SMALL
    note: str | None = None


class Secretive(Message):
    code: str

    @field_validator("code")
    @classmethod
    def check(cls, value: str) -> str:
        if value != "open":
            raise ValueError("secret detail: the vault combination is 1234")
        return value


class Ping(Message):
    pass


Msg = message_union(SetQuantity, Ship, Secretive, Ping)
Contract = agent.make(
    messages=agent.expose(
        Msg,
        {SetQuantity: "Set a quantity", Ship: "Ship it", Secretive: "Open", Ping: "Ping"},
    )
)


class M(BaseModel, frozen=True):
    pass


def runtime() -> tuple[Any, RecordingHost]:
    host = RecordingHost(M())
    return agent.bind(definition=Contract, host=host), host


async def refused(name: str, payload: Any) -> tuple[AgentInvalidInputError, RecordingHost]:
    rt, host = runtime()
    with pytest.raises(AgentInvalidInputError) as info:
        await rt.messages.dispatch_unknown(name, payload)
    assert host.dispatched == []
    return info.value, host


async def test_f04_extra_top_level_arguments_are_refused_naming_them_and_the_accepted_fields() -> (
    None
):
    err, _ = await refused("set_quantity", {"item_id": "a", "qty": 2, "line_range": [1, 2]})
    assert err.issues == [{"path": "line_range", "problem": "unexpected field"}]
    assert err.accepted == ["item_id", "qty"]
    assert "line_range" in err.message
    assert "item_id, qty" in err.message


async def test_f04_an_unknown_nested_key_is_refused() -> None:
    payload = {"address": {"street": "Main", "zip": "1", "floor": 3}, "on": "2026-01-02"}
    err, _ = await refused("ship", payload)
    assert err.issues == [{"path": "address.floor", "problem": "unexpected field"}]


@pytest.mark.parametrize(
    ("qty", "problem"),
    [
        ("5", "expected an integer"),
        (True, "expected an integer"),
        (5.5, "expected an integer"),
        (None, "expected an integer"),
    ],
)
async def test_no_lax_coercion_for_an_integer(qty: Any, problem: str) -> None:
    err, _ = await refused("set_quantity", {"item_id": "a", "qty": qty})
    assert err.issues == [{"path": "qty", "problem": problem}]


async def test_an_integral_float_is_not_an_integer_either() -> None:
    err, _ = await refused("set_quantity", {"item_id": "a", "qty": 5.0})
    assert err.issues[0]["path"] == "qty"


@pytest.mark.parametrize("payload", [[], "x", 3, None, [{"item_id": "a"}], True])
async def test_a_payload_that_is_not_a_json_object_is_refused(payload: Any) -> None:
    err, _ = await refused("set_quantity", payload)
    assert err.issues == [{"path": "", "problem": "the input must be a JSON object"}]


async def test_a_capability_with_no_fields_accepts_exactly_an_empty_object() -> None:
    rt, host = runtime()
    result = await rt.messages.dispatch_unknown("ping", {})
    assert result.message == Ping()
    assert len(host.dispatched) == 1
    for bad in ([], "", {"x": 1}):
        with pytest.raises(AgentInvalidInputError):
            await rt.messages.dispatch_unknown("ping", bad)
    assert len(host.dispatched) == 1


async def test_encoded_forms_decode_iso_dates_and_enums_by_value() -> None:
    rt, host = runtime()
    result = await rt.messages.dispatch_unknown(
        "ship", {"address": {"street": "Main", "zip": "1"}, "on": "2026-03-04", "size": "large"}
    )
    assert result.message == Ship(
        address=Address(street="Main", zip="1"), on=datetime.date(2026, 3, 4), size=Size.LARGE
    )
    assert host.dispatched == [result.message]


async def test_an_enum_value_outside_the_enum_lists_the_accepted_values() -> None:
    err, _ = await refused(
        "ship", {"address": {"street": "M", "zip": "1"}, "on": "2026-03-04", "size": "huge"}
    )
    assert err.issues == [{"path": "size", "problem": 'expected one of "small", "large"'}]


async def test_a_bad_date_says_which_form_is_expected() -> None:
    err, _ = await refused("ship", {"address": {"street": "M", "zip": "1"}, "on": "tomorrow"})
    assert err.issues == [{"path": "on", "problem": "expected a date (YYYY-MM-DD)"}]


FORBIDDEN = (
    "pydantic",
    "http",
    "errors.pydantic.dev",
    "SetQuantity",
    "Secretive",
    "Traceback",
    "1234",
    "abc",
    "secret detail",
    "vault",
)


@pytest.mark.parametrize(
    ("name", "payload", "issues"),
    [
        (
            "set_quantity",
            {"item_id": "a", "qty": "abc"},
            [{"path": "qty", "problem": "expected an integer"}],
        ),
        (
            "set_quantity",
            {"item_id": "a", "qty": None},
            [{"path": "qty", "problem": "expected an integer"}],
        ),
        ("set_quantity", {"item_id": "a"}, [{"path": "qty", "problem": "missing required field"}]),
        ("secretive", {"code": "abc"}, [{"path": "code", "problem": "invalid value"}]),
    ],
)
async def test_f05_validation_text_holds_only_a_path_and_a_short_reason(
    name: str, payload: dict[str, Any], issues: list[dict[str, str]]
) -> None:
    err, _ = await refused(name, payload)
    assert err.issues == issues
    wire = json.dumps(err.to_json())
    for word in FORBIDDEN:
        assert word not in wire, word
    assert err.__cause__ is not None  # the original stays available to the application


async def test_errors_round_trip_through_json() -> None:
    err, _ = await refused("set_quantity", {"item_id": "a"})
    back = AgentInvalidInputError.from_json(json.loads(json.dumps(err.to_json())))
    assert back == err
    assert isinstance(back, AgentInvalidInputError)
    assert back.issues == err.issues


async def test_nan_and_infinity_are_not_json() -> None:
    class Measure(Message):
        value: float

    d = agent.make(messages=agent.expose(message_union(Measure), {Measure: "Measure"}))
    host = RecordingHost(M())
    rt = agent.bind(definition=d, host=host)
    for bad in (float("nan"), float("inf")):
        with pytest.raises(AgentInvalidInputError) as info:
            await rt.messages.dispatch_unknown("measure", {"value": bad})
        assert info.value.issues == [
            {
                "path": "",
                "problem": "holds a number that is not finite (NaN, Infinity, or out of range)",
            }
        ]
    assert host.dispatched == []


async def test_a_constrained_field_reports_its_bound_not_the_input() -> None:
    class Named(Message):
        title: str = Field(min_length=1)

    d = agent.make(messages=agent.expose(message_union(Named), {Named: "Name"}))
    rt = agent.bind(definition=d, host=RecordingHost(M()))
    with pytest.raises(AgentInvalidInputError) as info:
        await rt.messages.dispatch_unknown("named", {"title": ""})
    assert info.value.issues == [{"path": "title", "problem": "must not be empty"}]


async def test_errors_inside_a_union_are_reported_once_at_the_union() -> None:
    class Card(BaseModel):
        number: str

    class Iban(BaseModel):
        iban: str

    class Pay(Message):
        payment: Card | Iban

    d = agent.make(messages=agent.expose(message_union(Pay), {Pay: "Pay"}))
    rt = agent.bind(definition=d, host=RecordingHost(M()))
    with pytest.raises(AgentInvalidInputError) as info:
        await rt.messages.dispatch_unknown("pay", {"payment": {"number": 5}})
    assert info.value.issues == [{"path": "payment", "problem": "does not match any accepted form"}]
    assert "Card" not in json.dumps(info.value.to_json())


async def test_deeply_nested_input_is_refused_cleanly() -> None:
    deep: Any = {}
    for _ in range(10_000):
        deep = {"a": deep}
    err, _ = await refused("set_quantity", {"item_id": "a", "qty": 1, "x": deep})
    assert err.issues[0]["path"] in ("", "x")


async def test_a_bound_that_is_broken_is_named_with_its_limit() -> None:
    class Bounded(Message):
        title: str = Field(max_length=3)
        qty: int = Field(ge=1, le=9)
        tags: list[str] = Field(default_factory=list, max_length=1)

    d = agent.make(messages=agent.expose(message_union(Bounded), {Bounded: "Bound"}))
    rt = agent.bind(definition=d, host=RecordingHost(M()))
    with pytest.raises(AgentInvalidInputError) as info:
        await rt.messages.dispatch_unknown(
            "bounded", {"title": "long", "qty": 10, "tags": ["a", "b"]}
        )
    assert info.value.issues == [
        {"path": "title", "problem": "must be at most 3 characters long"},
        {"path": "qty", "problem": "must be at most 9"},
        {"path": "tags", "problem": "must hold at most 1 item"},
    ]


async def test_a_refusal_lists_at_most_twenty_issues_and_counts_the_rest() -> None:
    from examples.todo import run_todo
    from foldkit_agent.contract.decode import MAX_ISSUES
    from foldkit_agent.errors import AgentInvalidInputError

    payload = {"title": "Milk", **{f"extra_{n}": n for n in range(50)}}
    async with run_todo() as (_running, rt):
        with pytest.raises(AgentInvalidInputError) as refused:
            await rt.messages.dispatch_unknown("create_todo", payload)
    issues = refused.value.issues
    assert MAX_ISSUES == 20
    assert len(issues) == 21
    assert all(issue["path"].startswith("extra_") for issue in issues[:MAX_ISSUES])
    assert issues[-1] == {"path": "", "problem": "and 30 more problems like these"}


async def test_f20_an_undeclared_field_name_is_echoed_cut_at_200_characters_like_a_tool_name() -> (
    None
):
    # the issue 20 stranger's echo.py: 21 undeclared names of 50 KB each made a 1.5 MB answer
    from examples.todo import run_todo
    from foldkit_agent.contract.decode import MAX_ECHOED
    from foldkit_agent.errors import AgentInvalidInputError

    payload = {"title": "Milk", **{f"k{n}" + "x" * 50_000: n for n in range(21)}}
    async with run_todo() as (_running, rt):
        with pytest.raises(AgentInvalidInputError) as refused:
            await rt.messages.dispatch_unknown("create_todo", payload)
    issues = refused.value.issues
    assert MAX_ECHOED == 200
    assert [issue["path"] for issue in issues[:20]] == [
        (f"k{n}" + "x" * 50_000)[:200] for n in range(20)
    ]
    assert issues[20] == {"path": "", "problem": "and 1 more problems like these"}
    assert len(str(refused.value)) < 5 * 250
