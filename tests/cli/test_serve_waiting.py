"""On a real ``foldkit-agent serve``: one caller holding its share of calls waiting for a
person (the per-caller cap, counted the same in both MCP eras) keeps no other caller from being
served. Its next call that needs a person is refused at once, naming the cap; another token's
caller still lists, calls, and is asked about its own ``confirm`` call."""

from __future__ import annotations

import mcp.types as types
import pytest

from foldkit_agent.edge.callers import DEFAULT_CALLER_LIMITS
from tests.support.serving import serve_process
from tests.support.waiting import HeldPerson, holding_mcp, mcp_client

TOKENS = ("--token", "alice-token=alice;todos:delete", "--token", "carol-token=carol;todos:delete")
SHARE = DEFAULT_CALLER_LIMITS.waiting_per_caller


@pytest.mark.parametrize("mode", ["legacy", "auto"])  # handshake era (elicitation), 2026 era
async def test_a_caller_at_its_share_of_waiting_calls_locks_no_other_caller_out(mode: str) -> None:
    async with serve_process("examples.todo:runtime", "--mcp", "http", *TOKENS) as origin:
        url = f"{origin}/mcp"
        async with mcp_client(url, "alice-token", mode) as setup:
            assert (await setup.call_tool("create_todo", {"title": "Milk"})).is_error is False
            assert (await setup.call_tool("select_todo", {"id": "todo-1"})).is_error is False
        async with holding_mcp(url, "alice-token", mode, SHARE) as (alice, held):
            over = await alice.call_tool("delete_todo", {})
            assert over.is_error is True
            assert over.structured_content is not None
            assert over.structured_content["_tag"] == "AgentApprovalError"
            assert over.structured_content["reason"] == "unavailable"
            text = over.content[0]
            assert isinstance(text, types.TextContent)
            assert f"({SHARE}, the most one caller may have waiting)" in text.text
            assert held.asked == SHARE  # the call past the share was never put to the person

            carol_person = HeldPerson()
            carol_person.release()  # answers (declines) at once
            async with mcp_client(url, "carol-token", mode, carol_person) as carol:
                listed = {t.name for t in (await carol.list_tools()).tools}
                assert {"create_todo", "delete_todo"} <= listed
                made = await carol.call_tool("create_todo", {"title": "Eggs"})
                assert made.is_error is False, made
                asked = await carol.call_tool("delete_todo", {})
                assert asked.structured_content is not None
                assert asked.structured_content["reason"] == "declined"  # carol's person asked
                assert carol_person.asked == 1
