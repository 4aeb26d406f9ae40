"""A 2026-era ``tools/list`` answered from the bytes the SDK's own pipeline wrote first
(``adapters/mcp/inline.py``, ``Tools.kept`` in ``listing.py``).

The first ``tools/list`` of an availability set runs the SDK's whole pipeline; later ones with
the same set are written from kept bytes (counted in ``app.state.mcp_inline.listed``) and are
byte for byte what the SDK wrote, with the request's own id. A changed set, a ``cursor``, a
routing header that disagrees with the body, or a handshake-era client takes the SDK's path.
Served over real sockets to raw HTTP and to the official ``mcp`` client.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator
from contextlib import asynccontextmanager
from typing import Any

import httpx
import pytest

from examples.todo import run_todo
from foldkit_agent.adapters.mcp import http_app
from tests.support.hostile import MODERN_META, mcp_headers
from tests.support.mcp_helpers import over_http
from tests.support.serving import served


def tools_list(ident: int | str, **params: Any) -> dict[str, Any]:
    """A 2026-era ``tools/list`` JSON-RPC message."""
    return {
        "jsonrpc": "2.0",
        "id": ident,
        "method": "tools/list",
        "params": {"_meta": dict(MODERN_META), **params},
    }


def list_headers() -> dict[str, str]:
    headers = mcp_headers()
    headers["Mcp-Method"] = "tools/list"
    del headers["Mcp-Name"]
    return headers


@asynccontextmanager
async def todo_origin() -> AsyncGenerator[tuple[str, Any, Any]]:
    async with run_todo() as (_running, rt):
        app = http_app(rt, name="todo", version="1")
        async with served(app) as origin:
            yield f"{origin}/mcp", app, rt


async def test_a_repeated_list_is_the_sdks_own_bytes_with_its_own_id() -> None:
    async with todo_origin() as (url, app, _rt), httpx.AsyncClient() as http:
        first = await http.post(url, json=tools_list(1), headers=list_headers())
        assert app.state.mcp_inline.listed == 0  # the SDK wrote the first one
        second = await http.post(url, json=tools_list("two"), headers=list_headers())
        assert app.state.mcp_inline.listed == 1
        assert second.status_code == first.status_code == 200
        assert second.headers["content-type"] == "application/json"
        assert second.content == first.content.replace(b'"id":1,', b'"id":"two",', 1)
        names = [t["name"] for t in second.json()["result"]["tools"]]
        assert "create_todo" in names
        assert "toggle_todo" not in names  # no todos yet


async def test_a_changed_availability_set_is_listed_by_the_sdk_again() -> None:
    async with todo_origin() as (url, app, _rt), httpx.AsyncClient() as http:
        await http.post(url, json=tools_list(1), headers=list_headers())
        await http.post(url, json=tools_list(2), headers=list_headers())
        assert app.state.mcp_inline.listed == 1
        call = {
            "jsonrpc": "2.0",
            "id": 3,
            "method": "tools/call",
            "params": {"name": "create_todo", "arguments": {"title": "Milk"}, "_meta": MODERN_META},
        }
        created = await http.post(url, json=call, headers=mcp_headers("create_todo"))
        assert created.status_code == 200
        after = await http.post(url, json=tools_list(4), headers=list_headers())
        assert app.state.mcp_inline.listed == 1  # built anew for the new set
        assert "toggle_todo" in [t["name"] for t in after.json()["result"]["tools"]]
        await http.post(url, json=tools_list(5), headers=list_headers())
        assert app.state.mcp_inline.listed == 2  # and kept again


@pytest.mark.parametrize(
    ("params", "headers"),
    [
        ({"cursor": "x"}, {}),  # a page asked for
        ({}, {"Mcp-Method": "tools/call"}),  # the header disagrees with the body
        ({}, {"MCP-Protocol-Version": "2025-11-25"}),  # another era
    ],
)
async def test_what_the_sdk_must_judge_is_never_answered_from_kept_bytes(
    params: dict[str, Any], headers: dict[str, str]
) -> None:
    async with todo_origin() as (url, app, _rt), httpx.AsyncClient() as http:
        await http.post(url, json=tools_list(1), headers=list_headers())
        await http.post(url, json=tools_list(2), headers=list_headers())
        kept = app.state.mcp_inline.listed
        answer = await http.post(
            url, json=tools_list(3, **params), headers={**list_headers(), **headers}
        )
        assert app.state.mcp_inline.listed == kept
        assert answer.status_code < 500  # the SDK's own answer, refusal or list


async def test_the_official_client_lists_the_same_tools_from_kept_bytes() -> None:
    async with run_todo() as (_running, rt):
        app = http_app(rt, name="todo", version="1")
        async with over_http(app, "auto") as client:
            first = await client.list_tools()
            second = await client.list_tools()
        assert app.state.mcp_inline.listed >= 1
        assert [t.model_dump() for t in second.tools] == [t.model_dump() for t in first.tools]
