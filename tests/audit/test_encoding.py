"""Every sink writes strict JSON, whatever an entry holds (audit/encode.py).

Strict means what our own edge accepts (``loads_strict``): no ``NaN``/``Infinity`` tokens, no
lone surrogates, valid UTF-8. Values JSON cannot hold are replaced where they stand, as
``audit/encode.py`` documents; ``expected`` below is that table, written out independently.
"""

from __future__ import annotations

import json
import math
import sqlite3
import sys
import uuid
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, cast

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from foldkit_agent import (
    AuditEntry,
    AuditLog,
    JsonlAuditSink,
    PostgresAuditSink,
    SqliteAuditSink,
)
from foldkit_agent.audit import UNRECORDABLE
from foldkit_agent.audit.encode import json_text
from foldkit_agent.edge.wire import loads_strict

WAIT = 10.0

# -- the documented replacements, written out for the test ------------------------------------


def _text(s: str) -> str:
    out: list[str] = []
    i = 0
    while i < len(s):
        c = s[i]
        if "\ud800" <= c <= "\udbff" and i + 1 < len(s) and "\udc00" <= s[i + 1] <= "\udfff":
            out.append(chr(0x10000 + ((ord(c) - 0xD800) << 10) + (ord(s[i + 1]) - 0xDC00)))
            i += 2
            continue
        out.append("\ufffd" if c == "\x00" or "\ud800" <= c <= "\udfff" else c)
        i += 1
    return "".join(out)


def expected(value: Any) -> Any:
    """What a sink stores for ``value``."""
    if isinstance(value, bool) or value is None:
        return value
    if isinstance(value, int):
        return value if abs(value) < 10**4300 else UNRECORDABLE  # over 4,300 digits
    if isinstance(value, float):
        if math.isnan(value):
            return "NaN"
        if math.isinf(value):
            return "Infinity" if value > 0 else "-Infinity"
        return value
    if isinstance(value, str):
        return _text(value)
    if isinstance(value, dict):
        return {_text(k): expected(v) for k, v in value.items()}  # pyright: ignore[reportUnknownVariableType]
    return [expected(v) for v in value]  # list or tuple


# -- JSON-ish values, including everything JSON cannot hold ------------------------------------

texts = st.text(alphabet=st.characters(exclude_categories=()), max_size=12) | st.sampled_from(
    ["\ud800", "\udfff", "a\x00b", "\ud83d\ude00", "Infinity", "NaN"]
)
huge_ints = st.integers(min_value=4301, max_value=4400).map(lambda n: -(10**n) if n % 2 else 10**n)
scalars = (
    st.none()
    | st.booleans()
    | st.integers()
    | st.integers(min_value=2**63, max_value=2**200)
    | huge_ints
    | st.floats(allow_nan=True, allow_infinity=True)
    | st.sampled_from([math.inf, -math.inf, math.nan, -0.0, 5e-324])
    | texts
)
values = st.recursive(
    scalars,
    lambda inner: (
        st.lists(inner, max_size=4)
        | st.tuples(inner, inner)
        | st.dictionaries(texts, inner, max_size=4)
    ),
    max_leaves=12,
)


def same(a: Any, b: Any) -> bool:
    """Equal as stored data. NaN never appears (it is the string "NaN" by then); a float may
    come back as an int of the same value (PostgreSQL's JSONB keeps numbers as numerics)."""
    if isinstance(a, dict) and isinstance(b, dict):
        pairs = cast(dict[str, Any], a), cast(dict[str, Any], b)
        return pairs[0].keys() == pairs[1].keys() and all(
            same(pairs[0][k], pairs[1][k]) for k in pairs[0]
        )
    if isinstance(a, list) and isinstance(b, list):
        left, right = cast(list[Any], a), cast(list[Any], b)
        return len(left) == len(right) and all(same(x, y) for x, y in zip(left, right, strict=True))
    kinds = {type(a), type(b)}
    if float in kinds and kinds <= {int, float}:
        return float(a) == float(b)
    return type(a) is type(b) and a == b


def _entry(n: int, principal: Any, inp: Any, *, name: str = "create_todo") -> AuditEntry:
    return AuditEntry(
        at=datetime.now(UTC),
        invocation_id=f"inv-{n}\x00\ud800",
        transport="mcp",
        capability=name,
        tag="RequestedCreateTodo",
        principal=principal,
        decision="dispatched",
        outcome="ok",
        input=inp,
    )


@settings(max_examples=300, deadline=None)
@given(values)
def test_json_text_is_strict_json_holding_the_documented_replacements(value: Any) -> None:
    text = json_text(value)
    if value is None:
        assert text is None  # SQL NULL, JSON null in a line
        return
    assert text is not None
    text.encode("utf-8")  # no lone surrogate survives
    assert same(loads_strict(text, max_depth=1000), expected(value))


def test_non_string_keys_and_other_objects_are_written_as_text() -> None:
    value = {7: "a", None: "b", True: "c", 2.5: math.inf, (1, 2): {3}, "k": Path("/x")}
    assert json.loads(json_text(value) or "") == {
        "7": "a",
        "null": "b",
        "true": "c",
        "2.5": "Infinity",
        "(1, 2)": [3],
        "k": "/x",
    }


def test_a_value_nested_too_deep_to_walk_is_unrecordable_not_an_error() -> None:
    deep: Any = math.nan
    for _ in range(sys.getrecursionlimit() * 2):
        deep = [deep]
    assert json_text(deep) == json.dumps(UNRECORDABLE)


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(principal=values, inp=values)
def test_every_line_the_jsonl_sink_writes_is_strict_json(
    tmp_path: Path, principal: Any, inp: Any
) -> None:
    path = tmp_path / "audit.jsonl"
    path.unlink(missing_ok=True)
    sink = JsonlAuditSink(path)
    sink.write([_entry(1, principal, inp)])
    sink.close()
    [line] = path.read_bytes().splitlines()
    stored = loads_strict(line, max_depth=1000)
    assert stored["invocation_id"] == "inv-1\ufffd\ufffd"
    assert same(stored["principal"], expected(principal))
    assert same(stored["input"], expected(inp))
    [read] = list(sink.read())
    assert same(read.input, expected(inp))


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(principal=values, inp=values)
def test_the_sqlite_sink_stores_strict_json_columns(
    tmp_path: Path, principal: Any, inp: Any
) -> None:
    path = tmp_path / "audit.db"
    path.unlink(missing_ok=True)
    sink = SqliteAuditSink(path)
    sink.write([_entry(1, principal, inp)])
    sink.close()
    conn = sqlite3.connect(path)
    try:
        [(raw_principal, raw_input)] = conn.execute("SELECT principal, input FROM audit_entries")
    finally:
        conn.close()
    assert same(_strict(raw_principal), expected(principal))
    assert same(_strict(raw_input), expected(inp))
    [stored] = sink.query()
    assert stored.invocation_id == "inv-1\ufffd\ufffd"
    assert same(stored.input, expected(inp))


def _strict(column: str | None) -> Any:
    return None if column is None else loads_strict(column, max_depth=1000)


@pytest.fixture
def postgres_sink(postgres_dsn: str) -> Iterator[PostgresAuditSink]:
    sink = PostgresAuditSink(postgres_dsn)
    yield sink
    sink.close()


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(principal=values, inp=values)
def test_the_postgres_sink_stores_what_jsonb_accepts(
    postgres_sink: PostgresAuditSink, principal: Any, inp: Any
) -> None:
    name = f"c{uuid.uuid4().hex}"
    postgres_sink.write([_entry(1, principal, inp, name=name)])  # JSONB refuses \u0000, NaN
    [stored] = postgres_sink.query(capability=name)
    assert stored.invocation_id == "inv-1\ufffd\ufffd"
    assert same(stored.principal, expected(principal))
    assert same(stored.input, expected(inp))


def test_the_jsonl_sink_with_include_input_never_writes_a_bare_infinity(tmp_path: Path) -> None:
    """The fault in issue 15: an input holding inf/nan wrote ``Infinity`` (not JSON)."""
    path = tmp_path / "audit.jsonl"
    audit = AuditLog(sink=JsonlAuditSink(path), include_input=True)
    audit.record(
        invocation_id="i1",
        transport="in-app",
        capability="set_price",
        tag="SetPrice",
        principal=None,
        decision="dispatched",
        outcome="ok",
        input={"price": math.inf, "discount": -math.inf, "rate": math.nan, "n": 1},
    )
    assert audit.close(WAIT)
    text = path.read_text(encoding="utf-8")
    assert loads_strict(text)["input"] == {
        "price": "Infinity",
        "discount": "-Infinity",
        "rate": "NaN",
        "n": 1,
    }
    assert math.isinf(audit.entries()[0].input["price"])  # memory keeps what was recorded
