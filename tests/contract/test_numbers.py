"""Integral floats restored to ints along a JSON Schema (foldkit_agent.contract.numbers)."""

from __future__ import annotations

from foldkit_agent.contract.numbers import integers_from_doubles


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
