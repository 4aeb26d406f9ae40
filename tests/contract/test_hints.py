"""Titles and behaviour hints are declared once and checked at declaration (DESIGN §10)."""

from __future__ import annotations

from typing import Any

import pytest

from examples.todo import AppAgent
from foldkit_agent import AgentContractError, Hints, agent, surface
from tests.support.counter import App, Incremented, Msg, Reset


def _one(spec: Any) -> Any:
    return agent.make(messages=agent.expose(Msg, {Incremented: spec})).by_name


def test_a_variant_carries_its_title_and_hints_onto_the_capability() -> None:
    cap = _one(
        agent.variant(
            name="add",
            title="  Add to the counter ",
            description="Add",
            destructive=False,
            idempotent=True,
            open_world=False,
        )
    )["add"]
    assert cap.title == "Add to the counter"
    assert cap.hints == Hints(read_only=False, destructive=False, idempotent=True, open_world=False)


def test_undeclared_hints_stay_undeclared_and_are_left_out() -> None:
    cap = _one("Add")["incremented"]
    assert cap.title is None
    assert cap.hints == Hints(read_only=False, destructive=None, idempotent=False, open_world=None)
    assert cap.hints.declared() == {"read_only": False, "idempotent": False}


def test_a_read_only_capability_that_is_destructive_is_a_declaration_error() -> None:
    with pytest.raises(AgentContractError, match="read-only capability cannot be destructive") as e:
        _one(agent.variant(description="Add", read_only=True, destructive=True))
    assert e.value.capability == "Incremented"
    # read-only with destructive left undeclared, or declared False, is fine
    assert _one(agent.variant(description="Add", read_only=True))["incremented"].hints.read_only
    ok = _one(agent.variant(description="Add", read_only=True, destructive=False))
    assert ok["incremented"].hints.destructive is False


@pytest.mark.parametrize(
    ("flag", "value", "allowed"),
    [
        ("read_only", None, "True or False"),
        ("read_only", 1, "True or False"),
        ("idempotent", "yes", "True or False"),
        ("destructive", 0, "True, False or None"),
        ("open_world", "false", "True, False or None"),
    ],
)
def test_a_hint_that_is_not_a_bool_is_a_declaration_error(
    flag: str, value: Any, allowed: str
) -> None:
    with pytest.raises(AgentContractError, match=f"{flag}= takes {allowed}") as e:
        _one(agent.variant(description="Add", **{flag: value}))
    assert "Incremented" in str(e.value)


@pytest.mark.parametrize("title", ["", "   ", "two\nlines", "x" * 129, 5])
def test_a_title_that_is_empty_multiline_too_long_or_not_text_is_refused(title: Any) -> None:
    with pytest.raises(AgentContractError, match="title") as e:
        _one(agent.variant(description="Add", title=title))
    assert e.value.capability == "Incremented"


def test_a_title_of_128_characters_is_accepted() -> None:
    assert _one(agent.variant(description="Add", title="t" * 128))["incremented"].title == "t" * 128


def test_agent_action_takes_the_same_title_and_hints() -> None:
    act = surface.action(name="reset_all", description="Reset", message=Reset)
    d = agent.make(
        messages=agent.expose(
            Msg, {Reset: agent.action(act, title="Reset all", destructive=True, idempotent=True)}
        )
    )
    cap = d.by_name["reset_all"]
    assert (cap.title, cap.hints.destructive, cap.hints.idempotent) == ("Reset all", True, True)
    with pytest.raises(AgentContractError, match="cannot be destructive"):
        agent.expose(Msg, {Reset: agent.action(act, read_only=True, destructive=True)})


def test_the_typed_builder_passes_title_and_hints_through() -> None:
    builder = agent.for_application(App)
    d = builder.make(
        messages=builder.expose(
            {
                Incremented: builder.variant(description="Add", title="Add", open_world=False),
                Reset: builder.action(
                    surface.action(name="reset", description="Reset", message=Reset),
                    read_only=False,
                    destructive=True,
                ),
            }
        )
    )
    assert d.by_name["incremented"].title == "Add"
    assert d.by_name["incremented"].hints.open_world is False
    assert d.by_name["reset"].hints.destructive is True


def test_the_manifest_records_title_and_every_hint_with_none_for_undeclared() -> None:
    d = agent.make(
        messages=agent.expose(
            Msg,
            {
                Incremented: agent.variant(description="Add", title="Add", idempotent=False),
                Reset: "Reset",
            },
        )
    )
    caps = {c["name"]: c for c in agent.to_manifest(d)["capabilities"]}
    assert caps["incremented"]["title"] == "Add"
    assert caps["reset"]["title"] is None
    assert caps["reset"]["hints"] == {
        "read_only": False,
        "destructive": None,
        "idempotent": False,
        "open_world": None,
    }


def test_the_todo_example_declares_what_each_call_does() -> None:
    hints = {c.name: c.hints for c in AppAgent.capabilities}
    titles = {c.name: c.title for c in AppAgent.capabilities}
    assert all(titles.values())
    assert {n for n, h in hints.items() if h.destructive} == {"rename_todo", "delete_todo"}
    assert {n for n, h in hints.items() if h.idempotent} == {
        "rename_todo",
        "select_todo",
        "clear_selection",
    }
    assert all(h.open_world is False and not h.read_only for h in hints.values())
    assert all(h.destructive is not None for h in hints.values())


def test_agent_md_shows_the_effect_of_each_capability() -> None:
    md = agent.to_markdown(AppAgent)
    assert (
        "| [`select_todo`](#select_todo) | Select a todo, as a person clicking it would. | " in md
    )
    assert "- Effect: not destructive, idempotent, inside the application only" in md
    assert "- Effect: destructive, inside the application only" in md
    assert "- Title: Delete selected todo" in md
    read_only = agent.make(
        messages=agent.expose(Msg, {Reset: agent.variant(description="R", read_only=True)})
    )
    assert "- Effect: read-only, may reach outside" in agent.to_markdown(read_only)
