"""Scenario 4: MCP over streamable HTTP on loopback, 50 concurrent clients, ours vs FastMCP.

Each server runs in its own process (:func:`bench.servers.start`: ours through
``foldkit-agent serve``); this process runs 50 official-SDK
clients, each calling ``increment`` in a loop for a bounded time. Reported: calls/s for each,
the ratio, errors, and whether the Messages applied equal the calls accepted.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import httpx2
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from .harness import Row
from .servers import start

CLIENTS = 50


@dataclass(frozen=True)
class Caller:
    """One client of :func:`load`: where it connects, what it sends, and which tool it calls."""

    url: str
    headers: dict[str, str] = field(default_factory=dict[str, str])
    tool: str = "increment"
    arguments: dict[str, Any] = field(default_factory=lambda: {"by": 1})


async def load(callers: Sequence[Caller], seconds: float) -> tuple[int, int, float]:
    """One official MCP client per caller; all connect first, then each calls its tool for
    ``seconds``: (answers, errors, elapsed)."""
    ok = 0
    errors = 0
    connected = 0
    go = asyncio.Event()
    stop_at = 0.0

    async def one(caller: Caller) -> None:
        nonlocal ok, errors, connected
        async with (
            httpx2.AsyncClient(timeout=60, headers=caller.headers) as http,
            Client(streamable_http_client(caller.url, http_client=http)) as client,
        ):
            await client.list_tools()
            connected += 1
            if connected == len(callers):
                go.set()
            await go.wait()
            while time.monotonic() < stop_at:
                try:
                    result = await client.call_tool(caller.tool, caller.arguments)
                except Exception:
                    errors += 1
                    continue
                if result.is_error:
                    errors += 1
                else:
                    ok += 1

    async def timer() -> float:
        nonlocal stop_at
        await go.wait()
        start = time.monotonic()
        stop_at = start + seconds
        return start

    started, *_ = await asyncio.gather(timer(), *(one(c) for c in callers))
    return ok, errors, time.monotonic() - started


async def _load(url: str, seconds: float) -> tuple[int, int, float]:
    """:data:`CLIENTS` clients calling ``increment`` on ``url``."""
    return await load([Caller(url)] * CLIENTS, seconds)


async def _applied(kind: str, url: str) -> int:
    async with (
        httpx2.AsyncClient() as http,
        Client(streamable_http_client(url, http_client=http)) as c,
    ):
        if kind == "ours":
            res = await c.read_resource("agent://context")
            return int(json.loads(res.contents[0].text)["count"])  # type: ignore[union-attr]
        result = await c.call_tool("count", {})
        return int(result.structured_content["count"])  # type: ignore[index]


async def _measure(kind: str, seconds: float) -> dict[str, Any]:
    async with start(kind, cpu=None) as url:
        ok, errors, elapsed = await _load(url, seconds)
        applied = await _applied(kind, url)
    return {"rate": ok / elapsed, "ok": ok, "errors": errors, "applied": applied}


async def run(seconds: float = 6.0, repeats: int = 2) -> list[Row]:
    """Alternate the two servers ``repeats`` times; each side keeps its best run."""
    runs: dict[str, list[dict[str, Any]]] = {"fastmcp": [], "ours": []}
    for _ in range(repeats):
        for kind in ("fastmcp", "ours"):
            runs[kind].append(await _measure(kind, seconds))
    base = max(runs["fastmcp"], key=lambda r: r["rate"])
    ours = max(runs["ours"], key=lambda r: r["rate"])
    ratio = ours["rate"] / base["rate"]
    exact = all(r["applied"] == r["ok"] and r["errors"] == 0 for r in runs["ours"])
    return [
        Row(
            "4. MCP over HTTP, 50 clients",
            f"tools/call per second, best of {repeats} × {seconds:g} s, servers alternated",
            f"{ours['rate']:.0f}/s, {ours['errors']} errors, "
            f"applied {ours['applied']}/{ours['ok']}",
            f"FastMCP {base['rate']:.0f}/s, {base['errors']} errors",
            ratio,
            "≥ 1.0×, zero errors, applied = accepted",
            ratio >= 1.0 and exact,
            "all runs exact" if exact else "a run lost or duplicated a Message",
        )
    ]


if __name__ == "__main__":
    for row in asyncio.run(run()):
        print(row)
