"""Integral floats restored to ints along a JSON Schema (foldkit_agent.contract.numbers)."""

from __future__ import annotations

from foldkit_agent import Message, agent, message_union, surface
from foldkit_agent.contract.numbers import integers_from_doubles, message_schema, outcome_schema
from tests.support.counter import Model as CounterModel


def test_integers_from_doubles_walks_the_schema_only() -> None:
    schema = {
        "type": "object",
        "properties": {
            "n": {"type": "integer"},
            "x": {"type": "number"},
            "opt": {"anyOf": [{"type": "integer"}, {"type": "null"}]},
            "either": {"anyOf": [{"type": "integer"}, {"type": "number"}]},
            "xs": {"type": "array", "items": {"type": "integer"}},
            "pair": {"type": "array", "prefixItems": [{"type": "integer"}, {"type": "string"}]},
            "m": {"type": "object", "additionalProperties": {"type": "integer"}},
            "s": {"type": "string"},
        },
        "additionalProperties": False,
    }
    value = {
        "n": 2.0,
        "x": 2.0,
        "opt": 3.0,
        "either": 4.0,
        "xs": [1.0, 2.5],
        "pair": [7.0, "a"],
        "m": {"a": 1.0},
        "s": "2.0",
        "extra": 1.0,
    }
    out = integers_from_doubles(value, schema)
    assert out == {
        "n": 2,
        "x": 2.0,
        "opt": 3,
        "either": 4.0,
        "xs": [1, 2.5],
        "pair": [7, "a"],
        "m": {"a": 1},
        "s": "2.0",
        "extra": 1.0,
    }
    assert type(out["n"]) is int
    assert type(out["x"]) is float
    assert type(out["either"]) is float
    assert type(out["extra"]) is float
    assert integers_from_doubles(float("inf"), {"type": "integer"}) == float("inf")
    assert integers_from_doubles(True, {"type": "integer"}) is True


# -- the outcome's numbers (what A2A answers) ------------------------------------------------


class Ordered(Message):
    qty: int
    unit: float = 1.0


class Priced(Message):
    total: int
    lines: tuple[int, ...] = ()


class Refused(Message):
    code: int


ShopMsg = message_union(Ordered, Priced, Refused)
_shop = agent.for_application(surface.application(model=CounterModel, message=ShopMsg))
ShopAgent = _shop.make(
    messages=_shop.expose(
        ShopMsg,
        {
            Ordered: _shop.variant(
                description="Order",
                completion=agent.Completion(success=Priced, failure=Refused, timeout=1.0),
            )
        },
    )
)


def test_an_outcome_is_restored_along_the_message_sent_and_the_result_that_answered() -> None:
    cap = ShopAgent.by_name["ordered"]
    schema = outcome_schema(cap)
    data = {
        "capability": "ordered",
        "invocation_id": "i-1",
        "status": "completed",
        "message": {"_tag": "Ordered", "qty": 2.0, "unit": 2.0},
        "result": {"_tag": "Priced", "total": 10.0, "lines": [4.0, 6.0]},
    }
    out = integers_from_doubles(data, schema)
    assert out["message"] == {"_tag": "Ordered", "qty": 2, "unit": 2.0}
    assert [type(v) for v in out["message"].values()] == [str, int, float]
    assert out["result"] == {"_tag": "Priced", "total": 10, "lines": [4, 6]}
    assert all(type(v) is int for v in (out["result"]["total"], *out["result"]["lines"]))
    failed = integers_from_doubles({**data, "result": {"_tag": "Refused", "code": 3.0}}, schema)
    assert type(failed["result"]["code"]) is int
    assert out["invocation_id"] == "i-1"  # the runtime's own fields are left as they are


def test_a_message_schema_names_its_tag() -> None:
    schema = message_schema(Priced)
    assert schema["properties"]["_tag"] == {"const": "Priced"}
    assert schema["properties"]["total"] == {"type": "integer"}
