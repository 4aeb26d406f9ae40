"""The one strict JSON parser: non-finite numbers and too many values are 400s in our words."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given

from foldkit_agent.edge.wire import DEFAULT_MAX_ITEMS, WireError, loads_strict
from tests.support.hostile import json_values


@pytest.mark.parametrize(
    "text", ['{"title": 1e400}', '{"title": -1e400}', "1e400", "[1, 2, 1E+999]", '{"a": 1.8e308}']
)
def test_a_number_that_overflows_to_infinity_is_refused(text: str) -> None:
    with pytest.raises(WireError) as info:
        loads_strict(text)
    assert info.value.status == 400
    assert info.value.text == (
        "The body holds a number too large to represent (it overflows to infinity)."
    )


def test_the_largest_finite_numbers_and_underflow_parse() -> None:
    assert loads_strict("[1.7976931348623157e308, 1e-400, -0.0]") == [
        1.7976931348623157e308,
        0.0,
        -0.0,
    ]


def _array(n: int) -> str:
    return "[" + ",".join(["0"] * (n - 1)) + "]"


def test_max_items_counts_every_value_and_the_default_is_ten_thousand() -> None:
    assert DEFAULT_MAX_ITEMS == 10_000
    assert len(loads_strict(_array(DEFAULT_MAX_ITEMS))) == DEFAULT_MAX_ITEMS - 1
    with pytest.raises(WireError) as info:
        loads_strict(_array(DEFAULT_MAX_ITEMS + 1))
    assert info.value.text == "The JSON body holds more than 10,000 values; send less at once."


def test_nested_values_count_too_and_keys_do_not() -> None:
    assert loads_strict('{"a": [1, 2]}', max_items=4) == {"a": [1, 2]}
    with pytest.raises(WireError):
        loads_strict('{"a": [1, 2], "b": 3}', max_items=4)


@pytest.mark.parametrize(
    ("text", "said"),
    [
        ('{"a": 1, "a": 2}', "repeats a key"),
        ('{"a": NaN}', "NaN"),
        ('{"a": -Infinity}', "-Infinity"),
        ('{"a": "\\ud800"}', "surrogate"),
        ("[" * 101 + "]" * 101, "more than 100 levels"),
        ('{"a": 1', "not valid JSON"),
    ],
)
def test_every_strict_rule_is_one_sentence_without_parser_text(text: str, said: str) -> None:
    with pytest.raises(WireError) as info:
        loads_strict(text)
    assert said in info.value.text
    assert "line" not in info.value.text
    assert "char" not in info.value.text


def test_invalid_utf8_is_refused() -> None:
    with pytest.raises(WireError, match="UTF-8"):
        loads_strict(b'{"a": "\xff"}')


@given(json_values())
def test_every_finite_small_document_parses_as_json_loads_does(value: Any) -> None:
    text = json.dumps(value)
    assert loads_strict(text) == json.loads(text)
