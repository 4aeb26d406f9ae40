"""The schema advertised is the one enforced (DESIGN §4.13; F04, F05), as a property over the
examples' own schemas: every input drawn from a capability's advertised schema decodes, and
every mutation the schema excludes is refused as invalid input.

The schemas are the todo example's and a second application's with constrained types
(``tests/support/constrained.py``). Inputs are drawn (with hypothesis-jsonschema) from exactly what
``tools/list`` would show; the reference validator reads them as the wire does
(``tests/support/schemas.py``).
"""

from __future__ import annotations

import copy
from typing import Any

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from examples.todo import AppAgent as TodoAgent
from foldkit_agent import AgentInvalidInputError, Capability
from tests.support.constrained import Contract as ConstrainedAgent
from tests.support.hostile import json_values as hostile_json_values
from tests.support.schemas import inputs_of, wire_validator

CAPABILITIES: list[Capability] = [*TodoAgent.capabilities, *ConstrainedAgent.capabilities]
IDS = [c.name for c in CAPABILITIES]
SETTINGS = settings(
    max_examples=80,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
)

json_values = hostile_json_values(max_leaves=8)


def paths(value: Any, at: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Every position inside ``value`` (the root included)."""
    found = [at]
    if isinstance(value, dict):
        for key, item in value.items():
            found += paths(item, (*at, key))
    elif isinstance(value, list):
        for i, item in enumerate(value):
            found += paths(item, (*at, i))
    return found


def replaced(value: Any, at: tuple[Any, ...], new: Any) -> Any:
    if not at:
        return new
    out = copy.deepcopy(value)
    target = out
    for step in at[:-1]:
        target = target[step]
    target[at[-1]] = new
    return out


@st.composite
def valid_and_mutated(draw: st.DrawFn, cap: Capability) -> tuple[Any, Any]:
    """A valid input for ``cap`` and a mutation of it (a value replaced, a key added or
    removed, a string edited at its ends)."""
    valid = draw(inputs_of(cap.input_schema))
    where = draw(st.sampled_from(paths(valid)))
    kind = draw(st.sampled_from(["replace", "add_key", "drop_key", "pad", "end"]))
    current: Any = valid
    for step in where:
        current = current[step]
    if kind == "add_key" and isinstance(current, dict):
        mutated = replaced(valid, where, {**current, draw(st.text(max_size=6)): draw(json_values)})
    elif kind == "drop_key" and isinstance(current, dict) and current:
        key = draw(st.sampled_from(sorted(current)))
        mutated = replaced(valid, where, {k: v for k, v in current.items() if k != key})
    elif kind == "pad" and isinstance(current, str):
        pad = draw(st.sampled_from([" ", "\t", "\n", "\r", "\f", "\x1e", "\xa0", "\ufeff", "x"]))
        mutated = replaced(valid, where, draw(st.sampled_from([pad + current, current + pad])))
    elif kind == "end" and isinstance(current, str):
        mutated = replaced(valid, where, current + draw(st.text(min_size=1, max_size=3)))
    else:
        mutated = replaced(valid, where, draw(json_values))
    return valid, mutated


@pytest.mark.parametrize("cap", CAPABILITIES, ids=IDS)
def test_every_input_the_advertised_schema_accepts_decodes(cap: Capability) -> None:
    validator = wire_validator(cap.input_schema)

    @SETTINGS
    @given(payload=inputs_of(cap.input_schema))
    def check(payload: Any) -> None:
        assert validator.is_valid(payload)  # the generator and the reference agree
        cap.decoder.decode(cap.name, payload)  # never refused for its shape

    check()


@pytest.mark.parametrize("cap", CAPABILITIES, ids=IDS)
def test_every_mutation_outside_the_advertised_schema_is_refused(cap: Capability) -> None:
    validator = wire_validator(cap.input_schema)

    @SETTINGS
    @given(pair=valid_and_mutated(cap))
    def check(pair: tuple[Any, Any]) -> None:
        _, mutated = pair
        if validator.is_valid(mutated):
            cap.decoder.decode(cap.name, mutated)
            return
        with pytest.raises(AgentInvalidInputError):
            cap.decoder.decode(cap.name, mutated)

    check()


TITLES = TodoAgent.by_name["create_todo"]


@pytest.mark.parametrize(
    "title",
    [
        *["\f", "\r", "\xa0", "\x1e", "\ufeff", " " + "a" * 200, "a" * 201, "Milk\n", " Milk", ""],
        # issue 21: a NUL inside a title passed and PostgreSQL refused it as a DataError
        *["a\x00b", "a\nb", "Buy\tmilk", "a\x7fb", "a\x85b"],
    ],
)
def test_f21_titles_the_todo_schema_excludes_are_refused(title: str) -> None:
    assert not wire_validator(TITLES.input_schema).is_valid({"title": title})
    with pytest.raises(AgentInvalidInputError) as info:
        TITLES.decoder.decode(TITLES.name, {"title": title})
    assert [i["path"] for i in info.value.issues] == ["title"]


@pytest.mark.parametrize("title", ["Milk", "a", "a" * 200, "Buy milk and eggs", "🥛", "a\u2028b"])
def test_titles_the_todo_schema_accepts_are_stored_as_sent(title: str) -> None:
    assert wire_validator(TITLES.input_schema).is_valid({"title": title})
    decoded = TITLES.decoder.decode(TITLES.name, {"title": title})
    assert decoded.title == title  # type: ignore[attr-defined]


@example(title="\x1e")
@settings(max_examples=50, deadline=None)
@given(title=st.text(max_size=210))
def test_the_todo_title_schema_and_decoder_agree_on_any_text(title: str) -> None:
    accepted = wire_validator(TITLES.input_schema).is_valid({"title": title})
    try:
        TITLES.decoder.decode(TITLES.name, {"title": title})
    except AgentInvalidInputError:
        assert not accepted
    else:
        assert accepted
