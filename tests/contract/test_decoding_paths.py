"""Two ways to one answer: strict Python validation of a flat payload of JSON scalars decides
exactly as the round trip through JSON text does (issue 20).

:class:`~foldkit_agent.contract.schema.InputDecoder` skips the JSON text for an input type whose
fields are all plain scalars when the payload is flat and exactly typed; anything else, and
every refusal, takes the round trip. The property: on generated payloads (hostile scalars, big
integers, lone surrogates, bools where numbers go, floats where integers go, nested values,
unknown and non-text keys) both paths accept the same values, of the same types, or refuse
with the same issues.
"""

from __future__ import annotations

from typing import Annotated, Any

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from pydantic import BaseModel, Field, StringConstraints

from examples.todo import AppAgent as TodoAgent
from foldkit_agent import AgentInvalidInputError, Message
from foldkit_agent.contract.decode import InputDecoder
from tests.support.constrained import Contract as ConstrainedAgent


class Flat(Message):
    item_id: str
    qty: int


class Bounded(Message):
    name: Annotated[str, StringConstraints(min_length=2, max_length=8, pattern=r"^[a-z ]+$")]
    count: int = Field(default=1, ge=-3, le=2**40)
    ratio: float = Field(default=0.5, gt=-1, le=1e300)
    enabled: bool = False
    note: str | None = None
    limit: int | None = Field(default=None, alias="maxItems")


class Nested(Message):
    lines: list[int]
    label: str = ""


FLAT = [Flat, Bounded]
OTHERS = [
    Nested,
    *(c.decoder.model for c in (*TodoAgent.capabilities, *ConstrainedAgent.capabilities)),
]
SETTINGS = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])

scalars = (
    st.none()
    | st.booleans()
    | st.integers()
    | st.integers(min_value=-(2**70), max_value=2**70)
    | st.sampled_from([2**63 - 1, 2**63, -(2**63), 10**400, 0, 1, -1])
    | st.floats()
    | st.sampled_from([0.0, -0.0, 1.0, 2.0, 1e300, 1e308, 5e-324, float("nan"), float("inf")])
    | st.text(max_size=12)
    | st.sampled_from(["\ud800", "a\udfff", "NaN", "Infinity", "ab", "héllo", "a b"])
)
values = (
    scalars
    | st.lists(scalars, max_size=3)
    | st.dictionaries(st.text(max_size=4), scalars, max_size=2)
)
KEYS = ["item_id", "qty", "name", "count", "ratio", "enabled", "note", "limit", "maxItems"]
keys = st.sampled_from(KEYS) | st.text(max_size=6) | st.sampled_from(["\ud800", 1, None, True])
payloads = st.dictionaries(keys, values, max_size=6)


def answer(decoder: InputDecoder, payload: Any) -> tuple[str, Any]:
    try:
        decoded = decoder.decode("cap", payload)
    except AgentInvalidInputError as err:
        return "refused", err.issues
    return "accepted", (type(decoded), repr(decoded), [type(v) for v in dict(decoded).values()])


def round_trip_only(model: type[BaseModel]) -> InputDecoder:
    decoder = InputDecoder(model)
    decoder._flat = False  # pyright: ignore[reportPrivateUsage]
    return decoder


def test_the_python_path_is_taken_only_for_flat_scalar_inputs() -> None:
    assert [InputDecoder(m)._flat for m in FLAT] == [True, True]  # pyright: ignore[reportPrivateUsage]
    assert InputDecoder(Nested)._flat is False  # pyright: ignore[reportPrivateUsage]


@pytest.mark.parametrize("model", FLAT + OTHERS, ids=lambda m: m.__name__)
@SETTINGS
@given(payload=payloads)
@example(payload={"item_id": "sku", "qty": True})
@example(payload={"item_id": "sku", "qty": 2.0})
@example(payload={"item_id": "sku", "qty": 10**400})
@example(payload={"item_id": "\ud800", "qty": 1})
@example(payload={"item_id": "sku", "qty": 1, 1: 2})
@example(payload={"name": "ab", "ratio": 1, "count": 2**40})
@example(payload={"name": "ab", "ratio": -0.0, "maxItems": 3})
@example(payload={"name": "ab", "ratio": float("nan")})
@example(payload={"name": "ab", "limit": 3})
def test_both_paths_decide_alike(model: type[BaseModel], payload: dict[Any, Any]) -> None:
    assert answer(InputDecoder(model), payload) == answer(round_trip_only(model), payload)


def test_a_flat_payload_decodes_to_the_same_values_either_way() -> None:
    payload = {"name": "ab", "count": 2, "ratio": 1, "enabled": True, "maxItems": 4}
    fast = InputDecoder(Bounded).decode("cap", payload)
    assert fast == round_trip_only(Bounded).decode("cap", payload)
    assert (type(fast.ratio), fast.ratio, fast.limit) == (float, 1.0, 4)  # type: ignore[attr-defined]
