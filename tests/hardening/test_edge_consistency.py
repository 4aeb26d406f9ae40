"""One answer per Host header on every route (DESIGN §9 step 1): MCP (both eras), A2A
(JSON-RPC and HTTP+JSON), the page surface and Agent Native are asked the same questions and
must all give the same answer, status and body alike (issue 13 found 421 on one route and 403
or a pass on the others)."""

from __future__ import annotations

from typing import Any

import pytest

from foldkit_agent.edge.guard import HOST_REFUSAL
from tests.support.edge_routes import ROUTES, serve_route

SPELLINGS = {
    "127.0.0.1": "served",
    "LOCALHOST:8766": "served",
    "[::1]": "served",
    "[::1]:8766": "served",
    "127.0.0.1:8766@evil.example": "refused",
    "evil.example:8766": "refused",
    "[::1]:8766.evil.example": "refused",
}


async def answers_for(host: str) -> dict[str, tuple[int, Any]]:
    """``{route id: (status, body or None)}`` for one authenticated call with ``Host: host``."""
    seen: dict[str, tuple[int, Any]] = {}
    for route in ROUTES:
        async with serve_route(route) as s:
            r = await s.post(route.ok_body, route.headers(Host=host))
            seen[route.id] = (r.status_code, r.json() if r.status_code == 421 else None)
    return seen


@pytest.mark.parametrize("host", list(SPELLINGS))
async def test_every_route_gives_the_same_answer_to_a_host_header(host: str) -> None:
    seen = await answers_for(host)
    expected = (200, None) if SPELLINGS[host] == "served" else (421, HOST_REFUSAL)
    assert seen == {route.id: expected for route in ROUTES}
