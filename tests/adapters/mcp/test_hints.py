"""Tool titles and behaviour annotations, as the official client reads them (DESIGN §10).

Over streamable HTTP, so what is checked is what travelled: a hint the contract left
undeclared is absent from the wire (clients then assume the cautious default), not ``null``.
"""

from __future__ import annotations

from typing import Any

import pytest

from examples.todo import run_todo
from foldkit_agent.adapters.mcp import http_app
from tests.support.mcp_cart import run_cart
from tests.support.mcp_helpers import over_http

MODES = ["legacy", "auto"]  # "auto" discovers and speaks 2026-07-28

DECLARED = {
    # name: (title, readOnlyHint, destructiveHint, idempotentHint, openWorldHint)
    "create_todo": ("Create todo", False, False, False, False),
    "rename_todo": ("Rename todo", False, True, True, False),
    "toggle_todo": ("Toggle todo", False, False, False, False),
    "select_todo": ("Select todo", False, False, True, False),
    "clear_selection": ("Clear selection", False, False, True, False),
    "delete_todo": ("Delete selected todo", False, True, False, False),
}


def client_of(rt: Any, mode: str, **options: Any) -> Any:
    return over_http(http_app(rt, name="test", version="1", **options), mode)


@pytest.mark.parametrize("mode", MODES)
async def test_every_todo_tool_carries_its_title_and_declared_annotations(mode: str) -> None:
    async with run_todo() as (_running, rt), client_of(rt, mode, listing="all") as client:
        tools = {t.name: t for t in (await client.list_tools()).tools}
        assert set(tools) == set(DECLARED)
        for name, (title, read_only, destructive, idempotent, open_world) in DECLARED.items():
            tool = tools[name]
            assert tool.title == title
            assert tool.annotations is not None
            assert tool.annotations.title == title  # for clients that read only annotations
            got = (
                tool.annotations.read_only_hint,
                tool.annotations.destructive_hint,
                tool.annotations.idempotent_hint,
                tool.annotations.open_world_hint,
            )
            assert got == (read_only, destructive, idempotent, open_world), name


@pytest.mark.parametrize("mode", MODES)
async def test_undeclared_hints_are_absent_so_clients_assume_the_cautious_default(
    mode: str,
) -> None:
    async with run_cart() as cart, client_of(cart.rt, mode) as client:
        (increment,) = [t for t in (await client.list_tools()).tools if t.name == "increment"]
        assert increment.title is None
        assert increment.annotations is not None
        sent = increment.annotations.model_fields_set
        assert "destructive_hint" not in sent
        assert "open_world_hint" not in sent
        assert "title" not in sent
        assert increment.annotations.read_only_hint is False
        assert increment.annotations.idempotent_hint is False
