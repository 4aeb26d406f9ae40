"""The one strict JSON parser: non-finite numbers and too many values are 400s in our words."""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable, Iterable
from typing import Any, cast

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

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


# -- the parser before issue 20's fast path, kept verbatim as the oracle ---------------------------

_OLD_MAX_DIGITS = 4000


def _old_no_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out = dict(pairs)
    if len(out) != len(pairs):
        raise WireError(400, "malformed", "The body repeats a key inside one JSON object.")
    return out


def _old_bounded_int(digits: str) -> int:
    if len(digits) > _OLD_MAX_DIGITS:
        raise WireError(
            400, "malformed", f"The body holds a number longer than {_OLD_MAX_DIGITS:,} digits."
        )
    return int(digits)


def _old_no_constants(name: str) -> Any:
    raise WireError(400, "malformed", f"The body holds {name}, which is not a JSON number.")


def _old_finite(digits: str) -> float:
    value = float(digits)
    if math.isinf(value):
        raise WireError(
            400,
            "malformed",
            "The body holds a number too large to represent (it overflows to infinity).",
        )
    return value


_OLD_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")


def _old_check(value: Any, max_depth: int, max_items: int, texts: bool = True) -> None:
    stack: list[tuple[Any, int]] = [(value, 1)]
    count = 1
    while stack:
        node, depth = stack.pop()
        if isinstance(node, str):
            if texts:
                _old_utf8(node)
        elif isinstance(node, dict | list):
            if depth > max_depth:
                raise _old_too_deep(max_depth)
            count += len(cast(dict[str, Any] | list[Any], node))
            if count > max_items:
                raise WireError(
                    400,
                    "malformed",
                    f"The JSON body holds more than {max_items:,} values; send less at once.",
                )
            if isinstance(node, dict):
                mapping = cast(dict[str, Any], node)
                if texts:
                    for key in mapping:
                        _old_utf8(key)
                items: Iterable[Any] = mapping.values()
            else:
                items = cast(list[Any], node)
            for item in items:
                if isinstance(item, dict | list) or (texts and isinstance(item, str)):
                    stack.append((cast(Any, item), depth + 1))


def _old_utf8(text: str) -> None:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        raise WireError(
            400,
            "malformed",
            "The JSON body holds a lone UTF-16 surrogate escape, which is not text.",
        ) from None


def _old_too_deep(max_depth: int) -> WireError:
    return WireError(
        400, "malformed", f"The JSON body is nested more than {max_depth} levels deep."
    )


def _old_loads_strict(data: bytes | str, *, max_depth: int = 100, max_items: int = 10_000) -> Any:
    if isinstance(data, bytes | bytearray):
        try:
            text = bytes(data).decode("utf-8")
        except UnicodeDecodeError:
            raise WireError(400, "malformed", "The body is not UTF-8 encoded JSON.") from None
        decoded = True
    else:
        text = data
        decoded = text.isascii()
    try:
        value = json.loads(
            text,
            object_pairs_hook=_old_no_duplicates,
            parse_constant=_old_no_constants,
            parse_float=_old_finite,
            parse_int=_old_bounded_int,
        )
    except WireError:
        raise
    except RecursionError:
        raise _old_too_deep(max_depth) from None
    except ValueError:
        raise WireError(400, "malformed", "The body is not valid JSON.") from None
    _old_check(
        value, max_depth, max_items, not decoded or _OLD_SURROGATE_ESCAPE.search(text) is not None
    )
    return value


def _outcome(parse: Callable[..., Any], data: bytes | str, depth: int, items: int) -> Any:
    try:
        value = parse(data, max_depth=depth, max_items=items)
    except WireError as err:
        return ("refused", err.status, err.code, err.text, err.headers)
    return ("parsed", repr(value))  # repr tells 1 from 1.0 and -0.0 from 0.0


_NUMBERS = [
    "1e400",
    "-1e400",
    "1E+999",
    "1.7976931348623157e308",
    "1.8e308",
    "1e-400",
    "-0.0",
    "0",
    "9" * 4000,
    "9" * 4001,
    "-" + "9" * 3999,
    "-" + "9" * 4000,
    "2" * 309,
    "2" * 309 + ".5",
    "1" * 308 + ".9",
    "NaN",
    "Infinity",
    "-Infinity",
]
_STRINGS = [
    '"\\ud800"',
    '"\\uDFFF"',
    '"\\\\ud800"',
    '"\\\\\\ud800"',
    '"\\ud83d\\ude00"',
    '"a"',
    '"\\u0061"',
    '"é"',
    '"1e400"',
    '"[[[["',
]
_KEYS = ['"a"', '"\\u0061"', '"b"', '"\\ud800"', '"\\\\ud800"', '"é"']
_SPACE = st.sampled_from(["", " ", "\n", "\t", "\r\n"])


@st.composite
def _json_texts(draw: st.DrawFn) -> str:
    leaf = st.one_of(
        st.sampled_from(_NUMBERS),
        st.sampled_from(_STRINGS),
        st.sampled_from(["true", "false", "null"]),
        st.integers().map(str),
        st.floats(allow_nan=False, allow_infinity=False).map(repr),
        st.text(max_size=5).map(json.dumps),
    )

    def extend(children: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
        arrays = st.lists(children, max_size=5).map(lambda xs: "[" + ",".join(xs) + "]")
        pairs = st.lists(st.tuples(st.sampled_from(_KEYS), children), max_size=4)
        objects = pairs.map(lambda ps: "{" + ",".join(f"{k}:{v}" for k, v in ps) + "}")
        return arrays | objects

    body = draw(st.recursive(leaf, extend, max_leaves=12))
    shape = draw(st.sampled_from(["plain", "deep", "wide", "truncated", "junk"]))
    if shape == "deep":
        depth = draw(st.sampled_from([3, 4, 5, 99, 100, 101, 990, 1000, 1010]))
        opener = draw(st.sampled_from(["[", '{"a":']))
        closer = "]" if opener == "[" else "}"
        body = opener * depth + body + closer * depth
    elif shape == "wide":
        n = draw(st.sampled_from([3, 4, 5, 9_999, 10_000, 10_001]))
        body = "[" + ",".join([body] + ["0"] * (n - 2)) + "]"
    elif shape == "truncated" and body:
        body = body[: draw(st.integers(0, len(body) - 1))]
    elif shape == "junk":
        body += draw(st.sampled_from([",", "]", " x", "{", '"']))
    return draw(_SPACE) + body + draw(_SPACE)


@st.composite
def _bodies(draw: st.DrawFn) -> bytes | str:
    text = draw(_json_texts())
    form = draw(st.sampled_from(["bytes", "str", "bom", "bad-utf8", "lone-surrogate-str"]))
    if form == "str":
        return text
    if form == "bom":
        return b"\xef\xbb\xbf" + text.encode()
    if form == "bad-utf8":
        at = draw(st.integers(0, len(text)))
        return text[:at].encode() + draw(st.sampled_from([b"\xff", b"\xc3", b"\xed\xa0\x80"]))
    if form == "lone-surrogate-str":
        return text.replace('"a"', '"\ud800"')
    return text.encode()


@settings(max_examples=600, deadline=None)
@given(
    _bodies(),
    st.sampled_from([1, 2, 3, 4, 100, 1_000]),
    st.sampled_from([1, 3, 5, 10, 10_000]),
)
def test_the_fast_path_answers_exactly_as_the_old_parser(
    data: bytes | str, depth: int, items: int
) -> None:
    assert _outcome(loads_strict, data, depth, items) == _outcome(
        _old_loads_strict, data, depth, items
    )


@pytest.mark.parametrize(
    "text",
    [
        '{"a": {"b": 1, "b": 2}}',
        '{"a": 1, "\\u0061": 2}',
        '[{"a": 1, "a": 2}, ',
        "[1e400, ",
        '{"a": NaN, "a": 1}',
        "[" + "9" * 4001 + "]",
        "[-" + "9" * 4000 + "]",
        "[-" + "9" * 3999 + "]",
        '["\\\\ud800"]',
        '["\\\\\\ud800"]',
        "[" * 100 + "]" * 100,
        "[" * 101 + "]" * 101,
        '{"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "x"}}',
    ],
)
def test_hostile_texts_get_the_old_parsers_answer(text: str) -> None:
    for data in (text, text.encode()):
        assert _outcome(loads_strict, data, 100, 10_000) == _outcome(
            _old_loads_strict, data, 100, 10_000
        )
