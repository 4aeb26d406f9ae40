"""The page's ``events`` streams are capped: one caller's share, and a total for all callers."""

from __future__ import annotations

from contextlib import AsyncExitStack

import httpx

from examples.todo import run_todo
from foldkit_agent.adapters.web.surface import agent_surface
from tests.support.hostile import until
from tests.support.web_serving import serve


async def test_pages_at_their_share_of_event_streams_are_refused_with_429_naming_the_cap() -> None:
    async with run_todo() as (_running, rt):
        app = agent_surface(rt, max_streams_per_caller=2, max_streams=10)
        async with (
            serve(app) as url,
            httpx.AsyncClient(base_url=url, timeout=10) as client,
            AsyncExitStack() as stack,
        ):
            for _ in range(2):
                stream = client.stream("GET", "/events")
                opened = await stack.enter_async_context(stream)
                assert opened.status_code == 200
            refused = await client.get("/events")
            assert refused.status_code == 429
            message = refused.json()["structuredContent"]["message"]
            assert "2 open event streams" in message
            assert "per-caller cap 2" in message
            # a fresh session cookie is no new caller: pages are one anonymous caller
            fresh = await client.get("/events", cookies={"foldkit_session": "new"})
            assert fresh.status_code == 429
            await stack.aclose()
            await until(lambda: len(app.state.event_streams) == 0)  # the server saw them go
            again = client.stream("GET", "/events")
            async with again as reopened:
                assert reopened.status_code == 200
