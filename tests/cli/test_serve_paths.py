"""On a real ``serve`` subprocess, a 2026-era call that needs nothing mid-call is answered in one
JSON response, and one that carries a ``progressToken`` and waits streams its progress.

The content type says which path a call took: ``application/json`` from the inline path,
``text/event-stream`` once the streaming path has sent a notification (a streaming call that
answers before it emits anything is also ``application/json``: the SDK defers the choice).
"""

from __future__ import annotations

import httpx
import httpx2
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from tests.support.hostile import mcp_headers
from tests.support.paths_calls import call, progress_then_open
from tests.support.serving import Lines, serve_process

TARGET = "tests.support.paths_app:runtime"


async def test_a_plain_call_is_one_json_response_and_a_waiting_one_streams_progress() -> None:
    args = ("--mcp", "http", "--progress-interval", "0.05")
    async with serve_process(TARGET, *args) as origin, httpx.AsyncClient(timeout=30) as http:
        url = f"{origin}/mcp"
        bumped = await http.post(url, json=call("bump", {"by": 2}), headers=mcp_headers("bump"))
        assert bumped.status_code == 200
        assert bumped.headers["content-type"] == "application/json"
        assert bumped.json()["result"]["structuredContent"]["status"] == "dispatched"

        rest = await progress_then_open(http, url)
        assert any('"status":"completed"' in line for line in rest), rest


async def test_the_official_client_gets_the_same_answers_on_either_path() -> None:
    async with (
        serve_process(TARGET, "--mcp", "http") as origin,
        httpx2.AsyncClient(timeout=30) as http,
        Client(streamable_http_client(f"{origin}/mcp", http_client=http)) as client,
    ):
        bumped = await client.call_tool("bump", {"by": 3})
        assert bumped.structured_content is not None
        assert bumped.structured_content["status"] == "dispatched"
        refused = await client.call_tool("bump", {"by": "three"})
        assert refused.is_error
        assert refused.structured_content is not None
        assert refused.structured_content["status"] == "refused"
        context = await client.read_resource("agent://context")
        assert '"bumps":3' in context.contents[0].text.replace(" ", "")  # type: ignore[union-attr]


async def test_serve_answers_2026_calls_inline_and_streams_the_one_that_waits() -> None:
    """The official client's plain calls (and its refused one) take the inline path, the call
    with a ``progressToken`` on a waiting capability streams; ``serve``'s shutdown output does
    not speak of its internal paths."""
    lines = Lines()
    args = ("--mcp", "http", "--progress-interval", "0.05")
    async with (
        serve_process(TARGET, *args, stderr=lines) as origin,
        httpx.AsyncClient(timeout=30) as http,
    ):
        url = f"{origin}/mcp"
        async with (
            httpx2.AsyncClient(timeout=30) as http2,
            Client(streamable_http_client(url, http_client=http2), mode="2026-07-28") as client,
        ):
            for by in (1, 2, 3):
                bumped = await client.call_tool("bump", {"by": by})
                assert not bumped.is_error
            refused = await client.call_tool("bump", {"by": "four"})
            assert refused.is_error
        rest = await progress_then_open(http, url)  # streams; its open_gate is inline
        assert any('"status":"completed"' in line for line in rest), rest
    # which internal path answered is counted in app.state.mcp_inline (tests/adapters/mcp/
    # test_inline.py) and logged at debug level; an operator's shutdown output says nothing of it
    assert not [line for line in lines if "inline" in line or "kept bytes" in line], list(lines)
