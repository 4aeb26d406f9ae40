"""The audit log is bounded in bytes, not only in entries (audit/log.py, audit/record.py), and
its JSON Lines split into the same lines however they are split (audit/jsonl.py)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from foldkit_agent import AuditLog, JsonlAuditSink, agent
from foldkit_agent.audit.jsonl import LINE_BREAKS
from foldkit_agent.audit.record import CUT, DEFAULT_MAX_INPUT_BYTES, MAX_TEXT, recorded

MB = 1024 * 1024


def _refused(audit: AuditLog, inp: Any, capability: str = "create_todo") -> Any:
    return audit.record(
        invocation_id="i",
        transport="mcp",
        capability=capability,
        tag=None,
        principal=None,
        decision="refused",
        outcome="AgentInvalidInputError",
        input=inp,
    )


def test_an_undeclared_field_of_4_mb_is_recorded_cut_at_16_kib_with_a_marker() -> None:
    audit = agent.audit_log(include_input=True)
    blob = "A" * 3_900_000
    entry = _refused(audit, {"title": "Milk", "junk": blob})
    assert entry.input["title"] == "Milk"
    kept = entry.input["junk"]
    assert kept.endswith("…[cut: 3900000 bytes]")
    assert kept.startswith("AAAA")
    assert len(json.dumps(entry.input)) < DEFAULT_MAX_INPUT_BYTES + 64
    assert audit.max_input_bytes == DEFAULT_MAX_INPUT_BYTES == 16 * 1024


def test_max_input_bytes_is_the_audit_logs_keyword_and_cuts_where_it_says() -> None:
    audit = agent.audit_log(include_input=True, max_input_bytes=100)
    entry = _refused(audit, {"a": list(range(1000)), "b": "kept?"})
    items = entry.input["a"]
    assert items[:5] == [0, 1, 2, 3, 4]
    assert items[-1] == f"[cut: {1000 - (len(items) - 1)} more items]"
    assert entry.input[CUT] == "1 more fields"
    assert "b" not in entry.input


def test_a_cut_input_still_has_its_fields_redacted() -> None:
    audit = agent.audit_log(include_input=True, redact=["password"], max_input_bytes=64)
    entry = _refused(audit, {"password": "x" * 10_000, "y": "z" * 10_000})
    assert entry.input["password"] == "[redacted]"
    assert entry.input["y"].endswith("…[cut: 10000 bytes]")


def test_a_multibyte_string_is_cut_on_a_character_boundary() -> None:
    kept, _ = recorded("é" * 100, frozenset(), 11)
    head, marker = kept.split("…")
    assert head == "é" * 4  # 9 bytes of room, 2 bytes a character
    assert marker == "[cut: 200 bytes]"


def test_none_records_the_input_whole() -> None:
    audit = agent.audit_log(include_input=True, max_input_bytes=None)
    assert _refused(audit, {"junk": "A" * 100_000}).input == {"junk": "A" * 100_000}


@pytest.mark.parametrize("bad", [{"max_input_bytes": 0}, {"max_bytes": 0}])
def test_a_byte_bound_below_one_is_refused(bad: dict[str, int]) -> None:
    with pytest.raises(ValueError, match="at least 1 byte"):
        agent.audit_log(**bad)


def test_the_ring_holds_at_most_max_bytes_of_inputs_and_counts_what_it_evicts() -> None:
    audit = agent.audit_log(include_input=True, max_input_bytes=None, max_bytes=MB)
    for _ in range(100):
        _refused(audit, {"junk": "A" * 100_000})
    assert audit.held_bytes <= MB
    assert len(audit) == 10  # ten of 100,258 bytes fit in 1 MiB, the eleventh does not
    assert audit.evicted == 90
    assert len(audit.entries()) == 10


def test_the_newest_entry_is_kept_even_when_it_alone_is_past_max_bytes() -> None:
    audit = agent.audit_log(include_input=True, max_input_bytes=None, max_bytes=1000)
    _refused(audit, {"junk": "A" * 5000})
    _refused(audit, {"junk": "B" * 5000})
    [entry] = audit.entries()
    assert entry.input == {"junk": "B" * 5000}
    assert audit.evicted == 1


def test_a_capability_name_of_4_mb_is_recorded_cut_at_1024_characters() -> None:
    audit = agent.audit_log()
    entry = _refused(audit, None, capability="n" * 4_000_000)
    assert entry.capability == "n" * MAX_TEXT + "…[cut: 4000000 characters]"


# -- the cut, as a property ---------------------------------------------------------------------

# Characters JSON writes as themselves (no escapes), so the compact JSON's size is what the cut
# counts; the bound is the limit plus one marker per level of nesting.
plain_text = st.text(st.characters(blacklist_categories=["Cs", "Cc"], blacklist_characters='"\\'))
json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | plain_text,
    lambda inner: st.lists(inner, max_size=6) | st.dictionaries(plain_text, inner, max_size=6),
    max_leaves=40,
)


def _depth(value: Any) -> int:
    if isinstance(value, dict):
        return 1 + max((_depth(v) for v in value.values()), default=0)  # pyright: ignore
    if isinstance(value, list):
        return 1 + max((_depth(v) for v in value), default=0)  # pyright: ignore
    return 0


@settings(max_examples=200, deadline=None)
@given(value=json_values, limit=st.integers(1, 400))
def test_a_recorded_input_is_at_most_its_limit_plus_one_marker_per_level(
    value: Any, limit: int
) -> None:
    kept, _ = recorded(value, frozenset(), limit)
    size = len(json.dumps(kept, ensure_ascii=False, separators=(",", ":")).encode())
    assert size <= limit + 48 * (_depth(value) + 1)


@settings(max_examples=200, deadline=None)
@given(value=json_values)
def test_an_input_within_its_limit_is_recorded_as_it_came(value: Any) -> None:
    kept, _ = recorded(value, frozenset(), 1 << 40)
    assert json.dumps(kept, sort_keys=True) == json.dumps(value, sort_keys=True)


# -- JSON Lines split the same by "\n" and by splitlines() --------------------------------------

LINE_BREAK_CHARACTERS = "".join(chr(c) for c in LINE_BREAKS)
breaking_text = st.text(st.sampled_from([*LINE_BREAK_CHARACTERS, "a", "é", "\u2027", '"']))


def test_line_breaks_names_every_character_splitlines_splits_on() -> None:
    splitting = {c for c in range(0x110000) if len(f"a{chr(c)}b".splitlines()) == 2}
    assert splitting == set(LINE_BREAKS)


@settings(
    max_examples=100, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    names=st.lists(breaking_text, min_size=1, max_size=5),
    inp=st.dictionaries(breaking_text, breaking_text, max_size=3),
)
def test_a_jsonl_file_splits_into_the_same_lines_by_newline_and_by_splitlines(
    tmp_path: Path, names: list[str], inp: dict[str, str]
) -> None:
    path = tmp_path / "audit.jsonl"
    path.unlink(missing_ok=True)
    audit = AuditLog(sink=JsonlAuditSink(path), include_input=True)
    for name in names:
        _refused(audit, inp, capability=name)
    assert audit.close()
    written = path.read_text(encoding="utf-8")
    by_newline = written.split("\n")
    assert by_newline.pop() == ""
    assert written.splitlines() == by_newline
    assert len(by_newline) == len(names)
    assert [json.loads(line)["capability"] for line in by_newline] == [
        e.capability for e in audit.entries()
    ]
