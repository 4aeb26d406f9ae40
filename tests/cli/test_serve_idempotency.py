"""A retried ``tools/call`` with one idempotency key (SEP-3182's ``_meta`` key) against a real
``foldkit-agent serve``, through the official MCP client: one todo, the first answer again."""

from __future__ import annotations

import json
from typing import Any

from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from foldkit_agent import IDEMPOTENCY_META
from tests.support.serving import serve_process


def meta(key: str) -> Any:
    return {IDEMPOTENCY_META: key}


async def test_a_retried_create_todo_with_one_key_makes_one_todo() -> None:
    async with (
        serve_process("examples.todo:runtime", "--mcp", "http") as origin,
        Client(streamable_http_client(f"{origin}/mcp")) as mcp,
    ):
        first = await mcp.call_tool("create_todo", {"title": "Milk"}, meta=meta("retry-1"))
        again = await mcp.call_tool("create_todo", {"title": "Milk"}, meta=meta("retry-1"))
        other = await mcp.call_tool("create_todo", {"title": "Eggs"}, meta=meta("retry-1"))
        assert first.is_error is False
        assert again.structured_content == first.structured_content
        assert other.is_error is True
        assert other.structured_content["reason"] == "conflict"
        # a second run would have made a second Milk, answered "failed" (a duplicate title)
        assert again.structured_content["status"] == "completed"
        contents = (await mcp.read_resource("agent://context")).contents[0]
        todos = json.loads(getattr(contents, "text", "{}"))["todos"]
        assert [t["title"] for t in todos] == ["Milk"]
