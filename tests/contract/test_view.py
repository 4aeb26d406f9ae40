"""agent.view: a contract's view is checked where it is declared."""

from __future__ import annotations

import pytest

from examples.todo import TodoAgent, TodoMessage
from examples.todo.app import ClearedSelection, SelectedTodo
from foldkit_agent import agent
from foldkit_agent.errors import AgentContractError


def test_a_view_names_only_what_the_contract_exposes() -> None:
    with pytest.raises(AgentContractError, match="does not expose"):
        TodoAgent.make(
            messages=TodoAgent.expose(TodoMessage, {ClearedSelection: "Clear"}),
            view=agent.view(app_only=[SelectedTodo]),
        )
    with pytest.raises(AgentContractError, match="https or wss"):
        agent.view(connect_domains=["http://api.example.com/path"])
    with pytest.raises(AgentContractError, match="one printable line"):
        agent.view(title="Two\nlines")
    with pytest.raises(AgentContractError, match=r"agent\.view"):
        TodoAgent.make(
            messages=TodoAgent.expose(TodoMessage, {ClearedSelection: "Clear"}),
            view="<html></html>",  # type: ignore[arg-type]
        )
    made = TodoAgent.make(
        messages=TodoAgent.expose(TodoMessage, {ClearedSelection: "Clear"}),
        view=agent.view(app_only=["cleared_selection"]),
    )
    assert made.view is not None
    assert made.view.app_only == frozenset({"cleared_selection"})
