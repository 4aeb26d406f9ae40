"""Property tests over arbitrary JSON payloads: decoding and dispatch invariants."""

from __future__ import annotations

import asyncio
import json
from typing import Any

from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from pydantic import BaseModel

from foldkit_agent import AgentError, AgentInvalidInputError, Message, agent, message_union
from tests.support.hosts import RecordingHost
from tests.support.schemas import wire_validator


class Address(BaseModel):
    street: str
    zip: str


class SetQuantity(Message):
    item_id: str
    qty: int
    note: str | None = None
    address: Address | None = None
    flags: list[bool] = []


class Model(BaseModel, frozen=True):
    open: bool = True


Msg = message_union(SetQuantity)
Contract = agent.make(
    messages=agent.expose(
        Msg, {SetQuantity: agent.variant(description="Set", available=lambda m: m.open)}
    )
)
SCHEMA = Contract.by_name["set_quantity"].input_schema
# The wire is JSON as Python parses it: 5.0 arrives as a float, and an integer field refuses it
# (no lax coercion, DESIGN §4.4); the reference validator reads the schema that way.
VALIDATOR = wire_validator(SCHEMA)

json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=True, allow_infinity=True)
    | st.text(),
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=8), children, max_size=4)
    ),
    max_leaves=20,
)

near_valid = st.fixed_dictionaries(
    {"item_id": json_values | st.text(), "qty": json_values | st.integers()},
    optional={
        "note": json_values,
        "address": json_values | st.fixed_dictionaries({"street": st.text(), "zip": st.text()}),
        "flags": json_values | st.lists(st.booleans()),
        "extra": json_values,
    },
)


def run(coro: Any) -> Any:
    return asyncio.run(coro)


def dispatch(payload: Any, model: Model | None = None) -> tuple[Any, RecordingHost]:
    host = RecordingHost(model or Model())
    rt = agent.bind(definition=Contract, host=host)

    async def go() -> Any:
        try:
            return await rt.messages.dispatch_unknown("set_quantity", payload)
        except AgentError as err:
            return err

    return run(go()), host


@settings(max_examples=300, suppress_health_check=[HealthCheck.too_slow], deadline=None)
@given(payload=json_values | near_valid)
@example(payload={"item_id": "a", "qty": 5.0})
@example(payload={"item_id": "a", "qty": 5, "address": {"street": "s", "zip": "z", "floor": 1}})
@example(payload={"item_id": "a", "qty": 5, "flags": [True, 1]})
@example(payload={"item_id": "a", "qty": 5, "note": None, "address": None})
def test_only_payloads_the_advertised_schema_accepts_are_dispatched(payload: Any) -> None:
    outcome, host = dispatch(payload)
    finite = _finite(payload)
    if isinstance(outcome, AgentError):
        assert isinstance(outcome, AgentInvalidInputError)
        assert host.dispatched == []
        json.dumps(outcome.to_json())  # every error serialises
        assert AgentError.from_json(json.loads(json.dumps(outcome.to_json()))) == outcome
        if finite:
            assert not VALIDATOR.is_valid(payload)
    else:
        assert finite
        assert VALIDATOR.is_valid(payload)
        assert host.dispatched == [outcome.message]
        assert isinstance(outcome.message, SetQuantity)


@settings(max_examples=100, deadline=None)
@given(payload=near_valid)
def test_nothing_is_dispatched_while_the_capability_is_unavailable(payload: Any) -> None:
    outcome, host = dispatch(payload, Model(open=False))
    assert isinstance(outcome, AgentError)
    assert outcome.tag == "AgentCapabilityUnavailableError"
    assert host.dispatched == []


@settings(max_examples=100, deadline=None)
@given(name=st.text(max_size=40), payload=json_values)
def test_every_unknown_name_is_refused_without_reading_the_model(name: str, payload: Any) -> None:
    host = RecordingHost(Model())
    rt = agent.bind(definition=Contract, host=host)

    async def go() -> Any:
        try:
            return await rt.messages.dispatch_unknown(name, payload)
        except AgentError as err:
            return err

    outcome = run(go())
    if name == "set_quantity":
        return
    assert outcome.tag == "AgentUnknownCapabilityError"
    assert host.model_reads == 0
    json.dumps(outcome.to_json())


def _finite(value: Any) -> bool:
    if isinstance(value, float):
        return value == value and value not in (float("inf"), float("-inf"))
    if isinstance(value, dict):
        return all(_finite(v) for v in value.values())
    if isinstance(value, list):
        return all(_finite(v) for v in value)
    return True
