"""Listing for clients that never re-list: ``listing="all"`` and ``"catalog"`` (DESIGN §10).

The official client checks the shapes in both eras; fastmcp's client (2026-07-28, which never
opens ``subscriptions/listen``) and pydantic-ai's MCP toolset (which caches the first list)
show the point: a capability that became available after the first listing can be called.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator
from contextlib import asynccontextmanager
from typing import Any

import pytest
from fastmcp import Client as FastMCPClient
from mcp import Client
from pydantic_ai import Agent
from pydantic_ai.mcp import MCPToolset
from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart, ToolCallPart
from pydantic_ai.models.function import AgentInfo, FunctionModel

from examples.todo import AppAgent, run_todo
from foldkit_agent.adapters.mcp import http_app, mcp_server
from foldkit_agent.adapters.mcp.listing import (
    CALL_CAPABILITY,
    LIST_CAPABILITIES,
    UNAVAILABLE_NOTE,
    Tools,
)
from tests.support.mcp_cart import AddedItem, run_cart
from tests.support.mcp_helpers import connected
from tests.support.serving import served

pytestmark = pytest.mark.filterwarnings("ignore:resources/subscribe is removed")

MODES = ["legacy", "auto"]  # "auto" discovers and speaks 2026-07-28
TODO_TOOLS = [c.name for c in AppAgent.capabilities]


@asynccontextmanager
async def todo_url(listing: str) -> AsyncGenerator[tuple[str, Any, Any]]:
    async with run_todo() as (running, rt):
        async with served(http_app(rt, name="todo", version="1", listing=listing)) as origin:
            yield f"{origin}/mcp", running, rt


# -- listing="all" ----------------------------------------------------------------------------


@pytest.mark.parametrize("mode", MODES)
async def test_all_lists_every_capability_and_says_which_are_unavailable(mode: str) -> None:
    async with run_todo() as (_running, rt):
        async with Client(mcp_server(rt, name="t", version="1", listing="all"), mode=mode) as c:
            tools = {t.name: t for t in (await c.list_tools()).tools}
            assert list(tools) == TODO_TOOLS
            assert not (tools["create_todo"].description or "").startswith(UNAVAILABLE_NOTE)
            unavailable = [n for n, t in tools.items() if (t.description or "").startswith("[")]
            assert unavailable == TODO_TOOLS[1:]
            select = tools["select_todo"].description or ""
            assert select == UNAVAILABLE_NOTE + "Select a todo, as a person clicking it would."

            refused = await c.call_tool("select_todo", {"id": "todo-1"})
            assert refused.is_error
            assert refused.structured_content is not None
            assert refused.structured_content["_tag"] == "AgentCapabilityUnavailableError"

            assert not (await c.call_tool("create_todo", {"title": "Milk"})).is_error
            relisted = {t.name: t for t in (await c.list_tools()).tools}
            assert list(relisted) == TODO_TOOLS
            assert relisted["select_todo"].description == (
                "Select a todo, as a person clicking it would."
            )
            assert not (await c.call_tool("select_todo", {"id": "todo-1"})).is_error
    assert rt.audit is not None
    decisions = [(e.capability, e.decision) for e in rt.audit.entries()]
    assert decisions == [
        ("select_todo", "refused"),
        ("create_todo", "dispatched"),
        ("select_todo", "dispatched"),
    ]


@pytest.mark.parametrize("mode", MODES)
async def test_all_still_tells_listening_clients_when_a_description_changed(mode: str) -> None:
    async with run_cart() as cart:
        server = mcp_server(cart.rt, name="cart", version="1", listing="all")
        async with connected(server, mode) as (client, notes):
            assert [t.name for t in (await client.list_tools()).tools] == [
                "checkout",
                "increment",
                "pay",
                "wait_briefly",
                "reset",
            ]
            cart.dispatch(AddedItem(item="x"))
            await notes.until_marker(cart)
            assert notes.tools == 1  # checkout became available: its description changed


# -- listing="catalog" ------------------------------------------------------------------------


@pytest.mark.parametrize("mode", MODES)
async def test_catalog_lists_exactly_two_tools_and_calls_go_through_the_runtime(mode: str) -> None:
    async with run_todo() as (running, rt):
        server = mcp_server(rt, name="t", version="1", listing="catalog")
        async with Client(server, mode=mode) as c:
            tools = (await c.list_tools()).tools
            assert [t.name for t in tools] == [LIST_CAPABILITIES, CALL_CAPABILITY]
            lister, caller = tools
            assert lister.annotations is not None
            assert lister.annotations.read_only_hint is True
            # the call tool can reach delete_todo, so it is not read-only and may destroy
            assert caller.annotations is not None
            assert (caller.annotations.read_only_hint, caller.annotations.destructive_hint) == (
                False,
                True,
            )
            assert caller.input_schema["properties"]["name"]["enum"] == TODO_TOOLS

            listed = await c.call_tool(LIST_CAPABILITIES, {})
            assert not listed.is_error
            assert listed.structured_content is not None
            (only,) = listed.structured_content["capabilities"]
            assert only["name"] == "create_todo"
            assert only["title"] == "Create todo"
            assert only["hints"] == {
                "read_only": False,
                "destructive": False,
                "idempotent": False,
                "open_world": False,
            }
            assert only["input_schema"] == rt.definition.by_name["create_todo"].input_schema

            made = await c.call_tool(
                CALL_CAPABILITY, {"name": "create_todo", "input": {"title": "Milk"}}
            )
            assert not made.is_error
            assert made.structured_content is not None
            assert made.structured_content["status"] == "completed"
            after = await c.call_tool(LIST_CAPABILITIES, {})
            assert after.structured_content is not None
            assert [x["name"] for x in after.structured_content["capabilities"]] == TODO_TOOLS[:4]
            assert [t.name for t in (await c.list_tools()).tools] == [
                LIST_CAPABILITIES,
                CALL_CAPABILITY,
            ]

            picked = await c.call_tool(
                CALL_CAPABILITY, {"name": "select_todo", "input": {"id": "todo-1"}}
            )
            assert not picked.is_error
            assert running.model().selected_todo_id == "todo-1"

            unknown = await c.call_tool(CALL_CAPABILITY, {"name": "launch_rockets"})
            assert unknown.structured_content is not None
            assert unknown.structured_content["_tag"] == "AgentUnknownCapabilityError"
            denied = await c.call_tool(CALL_CAPABILITY, {"name": "delete_todo", "input": {}})
            assert denied.structured_content is not None
            assert denied.structured_content["_tag"] == "AgentAuthorizationError"
            bad = await c.call_tool(CALL_CAPABILITY, {"name": "toggle_todo", "input": {"id": 5}})
            assert bad.structured_content is not None
            assert bad.structured_content["_tag"] == "AgentInvalidInputError"
            assert bad.structured_content["capability"] == "toggle_todo"
            misplaced = await c.call_tool(CALL_CAPABILITY, {"name": "toggle_todo", "id": "x"})
            assert misplaced.is_error
            assert misplaced.content[0].text == (  # type: ignore[union-attr]
                "Refused: "
                "call_capability takes only 'name' and 'input'; move 'id' inside 'input' if "
                "they are the capability's fields."
            )
            nameless = await c.call_tool(CALL_CAPABILITY, {"name": 5, "input": []})
            assert nameless.content[0].text.startswith(  # type: ignore[union-attr]
                "Refused: call_capability needs 'name' as a non-empty string"
            )
            listed_with = await c.call_tool(LIST_CAPABILITIES, {"x": 1})
            assert listed_with.is_error
            assert listed_with.content[0].text == (  # type: ignore[union-attr]
                "Refused: list_capabilities takes no arguments; leave out 'x'."
            )
    assert rt.audit is not None
    decisions = [(e.transport, e.capability, e.decision) for e in rt.audit.entries()]
    assert decisions == [  # audited as direct calls: the capability, not the catalog tool
        ("mcp", "create_todo", "dispatched"),
        ("mcp", "select_todo", "dispatched"),
        ("mcp", "launch_rockets", "refused"),
        ("mcp", "delete_todo", "refused"),
        ("mcp", "toggle_todo", "refused"),
    ]


@pytest.mark.parametrize("mode", MODES)
async def test_catalog_never_says_the_tool_list_changed(mode: str) -> None:
    async with run_cart() as cart:
        server = mcp_server(cart.rt, name="cart", version="1", listing="catalog")
        async with connected(server, mode) as (_client, notes):
            cart.dispatch(AddedItem(item="x"))
            await notes.until_marker(cart)
            assert notes.tools == 0
            assert notes.updated[-1] == "agent://resources/marker"  # resources still update


def test_a_listing_mode_outside_the_three_is_refused() -> None:
    with pytest.raises(ValueError, match="listing must be one of available, all, catalog"):
        mcp_server(object.__new__(object), name="t", version="1", listing="some")  # type: ignore[arg-type]


# -- fastmcp's client in the 2026-07-28 era ---------------------------------------------------


async def test_fastmcp_client_calls_a_capability_that_appeared_after_it_listed_all() -> None:
    async with todo_url("all") as (url, running, _rt):
        async with FastMCPClient(url) as client:
            first = [t.name for t in await client.list_tools()]
            assert first == TODO_TOOLS
            await client.call_tool("create_todo", {"title": "Milk"})
            picked = await client.call_tool("select_todo", {"id": "todo-1"})  # never re-listed
            assert not picked.is_error
            assert running.model().selected_todo_id == "todo-1"


async def test_fastmcp_client_calls_through_the_catalog() -> None:
    async with todo_url("catalog") as (url, running, _rt):
        async with FastMCPClient(url) as client:
            assert [t.name for t in await client.list_tools()] == [
                LIST_CAPABILITIES,
                CALL_CAPABILITY,
            ]
            await client.call_tool(
                CALL_CAPABILITY, {"name": "create_todo", "input": {"title": "A"}}
            )
            now = await client.call_tool(LIST_CAPABILITIES, {})
            assert "select_todo" in [c["name"] for c in now.structured_content["capabilities"]]
            await client.call_tool(
                CALL_CAPABILITY, {"name": "select_todo", "input": {"id": "todo-1"}}
            )
            assert running.model().selected_todo_id == "todo-1"


# -- pydantic-ai's MCP toolset, with its default tool cache -------------------------------------


def scripted(plan: list[tuple[str, dict[str, Any]]], offered: list[list[str]]) -> FunctionModel:
    """A model that records the tools it is offered at each step and makes the planned calls."""

    def step(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        offered.append(sorted(t.name for t in info.function_tools))
        turn = len(offered) - 1
        if turn < len(plan):
            name, args = plan[turn]
            return ModelResponse(parts=[ToolCallPart(name, args)])
        return ModelResponse(parts=[TextPart("done")])

    return FunctionModel(step)


async def test_pydantic_ai_toolset_with_its_cache_never_sees_a_later_capability_by_default() -> (
    None
):
    """Why the other modes exist: with ``listing="available"`` the cached list stays stale."""
    async with todo_url("available") as (url, running, _rt):
        offered: list[list[str]] = []
        agent = Agent(
            scripted([("create_todo", {"title": "Milk"})], offered), toolsets=[MCPToolset(url)]
        )
        await agent.run("add milk, then select it")
        assert offered == [["create_todo"], ["create_todo"]]
        assert running.model().selected_todo_id is None


async def test_pydantic_ai_toolset_calls_a_capability_that_appeared_later_with_listing_all() -> (
    None
):
    async with todo_url("all") as (url, running, _rt):
        offered: list[list[str]] = []
        plan = [("create_todo", {"title": "Milk"}), ("select_todo", {"id": "todo-1"})]
        agent = Agent(scripted(plan, offered), toolsets=[MCPToolset(url)])
        await agent.run("add milk, then select it")
        assert offered[0] == sorted(TODO_TOOLS)
        assert running.model().selected_todo_id == "todo-1"


async def test_pydantic_ai_toolset_calls_a_later_capability_through_the_catalog() -> None:
    async with todo_url("catalog") as (url, running, _rt):
        offered: list[list[str]] = []
        plan = [
            (CALL_CAPABILITY, {"name": "create_todo", "input": {"title": "Milk"}}),
            (LIST_CAPABILITIES, {}),
            (CALL_CAPABILITY, {"name": "select_todo", "input": {"id": "todo-1"}}),
        ]
        agent = Agent(scripted(plan, offered), toolsets=[MCPToolset(url)])
        result = await agent.run("add milk, then select it")
        assert result.output == "done"
        assert all(o == sorted([CALL_CAPABILITY, LIST_CAPABILITIES]) for o in offered)
        assert running.model().selected_todo_id == "todo-1"


# -- tools/list built once per runtime, availability set and protocol version -----------------


@pytest.fixture
def list_handler_runs(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Each run of the adapter's tools/list handler (the pipeline the cache saves), by name of
    the first tool; servers built after this fixture count into it."""
    runs: list[str] = []
    build = Tools.list_tools

    async def counting(self: Any, ctx: Any, params: Any) -> Any:
        listed = await build(self, ctx, params)
        runs.append(ctx.protocol_version)
        return listed

    monkeypatch.setattr(Tools, "list_tools", counting)
    return runs


@pytest.mark.parametrize("mode", MODES)
async def test_a_repeated_list_is_built_once_and_again_after_availability_changes(
    mode: str, list_handler_runs: list[str]
) -> None:
    async with run_todo() as (running, rt):
        async with Client(mcp_server(rt, name="t", version="1"), mode=mode) as c:
            first = [t.name for t in (await c.list_tools()).tools]
            again = [[t.name for t in (await c.list_tools()).tools] for _ in range(3)]
            assert len(list_handler_runs) == 1
            assert again == [first] * 3 == [["create_todo"]] * 3

            assert not (await c.call_tool("create_todo", {"title": "Milk"})).is_error
            await running.settled()
            changed = [t.name for t in (await c.list_tools()).tools]
            assert changed == TODO_TOOLS[:4]
            assert len(list_handler_runs) == 2
            assert [t.name for t in (await c.list_tools()).tools] == changed
            assert len(list_handler_runs) == 2


async def test_each_protocol_era_gets_its_own_wire_form_of_the_same_list(
    list_handler_runs: list[str],
) -> None:
    async with run_todo() as (_running, rt):
        server = mcp_server(rt, name="t", version="1")
        for mode in [*MODES, *MODES]:
            async with Client(server, mode=mode) as c:
                assert [t.name for t in (await c.list_tools()).tools] == ["create_todo"]
    assert len(list_handler_runs) == 2
    assert len(set(list_handler_runs)) == 2  # one per protocol version


async def test_listing_all_rebuilds_its_unavailable_notes_when_availability_changes(
    list_handler_runs: list[str],
) -> None:
    async with run_todo() as (running, rt):
        async with Client(mcp_server(rt, name="t", version="1", listing="all")) as c:
            before = {t.name: t.description or "" for t in (await c.list_tools()).tools}
            assert before["rename_todo"].startswith(UNAVAILABLE_NOTE)
            assert not (await c.call_tool("create_todo", {"title": "Milk"})).is_error
            await running.settled()
            after = {t.name: t.description or "" for t in (await c.list_tools()).tools}
            assert not after["rename_todo"].startswith(UNAVAILABLE_NOTE)
            assert after["delete_todo"].startswith(UNAVAILABLE_NOTE)
            await c.list_tools()
    assert len(list_handler_runs) == 2
