"""``foldkit-agent serve``'s per-caller flags reach the adapters: two callers, one at its cap."""

from __future__ import annotations

import httpx

from tests.support.mcp_helpers import INITIALIZE
from tests.support.serving import serve_process

TOKENS = ["--token", "alice-token=alice", "--token", "bob-token=bob"]


def _headers(token: str) -> dict[str, str]:
    return {"Accept": "application/json, text/event-stream", "Authorization": f"Bearer {token}"}


async def test_serve_max_sessions_per_caller_refuses_alice_and_lets_bob_in() -> None:
    async with (
        serve_process(
            "examples.todo:runtime", "--mcp", "http", *TOKENS, "--max-sessions-per-caller", "1"
        ) as origin,
        httpx.AsyncClient(base_url=origin, timeout=30) as hc,
    ):
        first = await hc.post("/mcp", json=INITIALIZE, headers=_headers("alice-token"))
        assert first.status_code == 200
        second = await hc.post("/mcp", json=INITIALIZE, headers=_headers("alice-token"))
        assert second.status_code == 429
        assert "per-caller cap 1" in second.json()["error"]["message"]
        bob = await hc.post("/mcp", json=INITIALIZE, headers=_headers("bob-token"))
        assert bob.status_code == 200
