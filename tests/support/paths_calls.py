"""Raw 2026-era ``tools/call`` requests against ``tests.support.paths_app``, for the tests
that check which path a call takes (``tests/adapters/mcp/test_inline.py`` and
``tests/cli/test_serve_paths.py``).
"""

from __future__ import annotations

from typing import Any

import anyio
import httpx

from tests.support.hostile import MODERN_META, mcp_headers


def call(name: str, arguments: dict[str, Any], meta: dict[str, Any] | None = None) -> Any:
    """A 2026-era ``tools/call`` JSON-RPC message (``meta`` merged into ``_meta``)."""
    params = {"name": name, "arguments": arguments, "_meta": {**MODERN_META, **(meta or {})}}
    return {"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": params}


async def progress_then_open(http: httpx.AsyncClient, url: str) -> list[str]:
    """Call ``wait_for_gate`` with a ``progressToken``; once its response has streamed a
    progress notification, ``open_gate`` (checked to come back as one JSON response); return
    the rest of the stream's lines.

    Raises:
        AssertionError: the waiting call's response is not ``text/event-stream``, or
            ``open_gate``'s is not ``application/json``.
    """
    body = call("wait_for_gate", {}, {"progressToken": "p-1"})
    with anyio.fail_after(30):
        async with http.stream("POST", url, json=body, headers=mcp_headers("wait_for_gate")) as (
            waiting
        ):
            assert waiting.headers["content-type"].startswith("text/event-stream")
            lines = waiting.aiter_lines()
            async for line in lines:
                if '"notifications/progress"' in line:
                    break
            opened = await http.post(
                url, json=call("open_gate", {}), headers=mcp_headers("open_gate")
            )
            assert opened.headers["content-type"] == "application/json"  # inline
            return [line async for line in lines]
