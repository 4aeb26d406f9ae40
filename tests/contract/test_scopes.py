"""A capability's OAuth scopes are checked where they are declared and kept in order."""

from __future__ import annotations

import pytest

from examples.todo.app import ClearedSelection, TodoMessage
from examples.todo.contract import TodoAgent
from foldkit_agent import AgentContractError
from foldkit_agent.manifest import to_manifest
from tests.support.scoped_todo import WRITE, ScopedAgent


def _expose(scopes: object) -> object:
    return TodoAgent.expose(
        TodoMessage,
        {ClearedSelection: TodoAgent.variant(description="Clear.", scopes=scopes)},  # type: ignore[arg-type]
    )


def test_declared_scopes_reach_the_capability_and_the_manifest() -> None:
    by_name = {c.name: c for c in ScopedAgent.capabilities}
    assert by_name["create_todo"].scopes == (WRITE,)
    assert by_name["clear_selection"].scopes == ()
    listed = {c["name"]: c["scopes"] for c in to_manifest(ScopedAgent)["capabilities"]}
    assert listed == {"create_todo": [WRITE], "clear_selection": []}


def test_a_repeated_scope_is_kept_once_in_declaration_order() -> None:
    (cap,) = _expose(["b", "a", "b"]).capabilities  # type: ignore[attr-defined]
    assert cap.scopes == ("b", "a")


@pytest.mark.parametrize("bad", ["has space", 'quo"te', "back\\slash", "", "é", 7])
def test_a_scope_that_is_not_an_oauth_scope_token_is_refused_at_declaration(bad: object) -> None:
    with pytest.raises(AgentContractError, match="not an OAuth scope name"):
        _expose([bad])
