"""The todo page's activity stream (``GET /app/activity``) on a real loopback server.

Who may read it (the page's own origin, a session), what it carries (the audit's who, what and
decision, never the input) and what one session can hold (``max_streams`` streams).
"""

from __future__ import annotations

import json
import re
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import httpx
import pytest

from examples.todo_web import TodoWeb, todo_web
from foldkit_agent import agent
from foldkit_agent.adapters.web import CSRF_HEADER
from tests.support.web_serving import serve


@asynccontextmanager
async def _site() -> AsyncIterator[tuple[TodoWeb, str]]:
    audit = agent.audit_log(include_input=True, record_principal=lambda u: u.id)
    async with todo_web(audit=audit) as web, serve(web.app) as url:
        yield web, url


async def _signed_in(c: httpx.AsyncClient) -> str:
    page = await c.get("/")
    match = re.search(r'name="csrf-token" content="([^"]+)"', page.text)
    assert match is not None
    return match.group(1)


class _Events:
    """Reads ``event:``/``data:`` blocks off one open SSE response."""

    def __init__(self, response: httpx.Response) -> None:
        self.lines = response.aiter_lines()

    async def next(self) -> tuple[str, Any]:
        event, data = "", ""
        async for line in self.lines:
            if line.startswith("event:"):
                event = line[6:].strip()
            elif line.startswith("data:"):
                data += line[5:].strip()
            elif line == "" and event:
                return event, json.loads(data)
        raise AssertionError("the stream ended")


async def test_the_stream_shows_agent_calls_and_the_persons_actions_never_the_input() -> None:
    async with _site() as (web, url), httpx.AsyncClient(base_url=url, timeout=10) as c:
        token = await _signed_in(c)
        async with c.stream("GET", "/app/activity") as r:
            assert r.status_code == 200
            assert r.headers["cache-control"] == "no-store"
            events = _Events(r)
            assert await events.next() == ("activity", {"items": [], "missed": 0})

            session = (await c.get("/agent/session")).json()
            done = await c.post(
                "/agent/invoke/create_todo",
                json={"title": "secret plans"},
                headers={CSRF_HEADER: session["csrfToken"]},
            )
            assert done.json()["isError"] is False
            event, batch = await events.next()
            assert event == "activity"
            (item,) = batch["items"]
            assert item["who"] == "agent"
            assert (item["transport"], item["principal"]) == ("webmcp", "demo")
            assert (item["capability"], item["decision"], item["outcome"]) == (
                "create_todo",
                "dispatched",
                "completed",
            )
            audit = web.runtime.audit
            assert audit is not None
            assert audit.entries()[-1].input == {"title": "secret plans"}
            assert "secret" not in json.dumps(batch)

            todo = web.running.model().todos[0]
            r2 = await c.post(
                "/app/dispatch",
                json={"_tag": "ToggledTodo", "id": todo.id},
                headers={CSRF_HEADER: token, "origin": url},
            )
            assert r2.status_code == 204
            _, batch = await events.next()
            (item,) = batch["items"]
            assert (item["who"], item["transport"], item["principal"]) == ("person", "page", "demo")
            assert item["capability"] == "toggle_todo"

        # a new reader first gets what happened, oldest first
        async with c.stream("GET", "/app/activity") as r:
            _, batch = await _Events(r).next()
            assert [(i["who"], i["capability"]) for i in batch["items"]] == [
                ("agent", "create_todo"),
                ("person", "toggle_todo"),
            ]


@pytest.mark.parametrize(
    ("headers", "status"),
    [
        ({"sec-fetch-site": "cross-site"}, 403),
        ({"origin": "http://evil.example"}, 403),
        ({"host": "evil.example"}, 421),
    ],
)
async def test_another_site_cannot_read_the_stream(headers: dict[str, str], status: int) -> None:
    async with _site() as (_web, url), httpx.AsyncClient(base_url=url, timeout=10) as c:
        await _signed_in(c)
        r = await c.get("/app/activity", headers=headers)
        assert r.status_code == status


async def test_the_stream_needs_a_session() -> None:
    async with _site() as (_web, url), httpx.AsyncClient(base_url=url, timeout=10) as c:
        r = await c.get("/app/activity")
        assert r.status_code == 401
    cookies = {"todo_session": "made-up"}
    async with _site() as (_web, url), httpx.AsyncClient(base_url=url, cookies=cookies) as c:
        r = await c.get("/app/activity")
        assert r.status_code == 401


async def test_one_session_holds_at_most_four_streams_and_gets_each_back() -> None:
    async with _site() as (_web, url), httpx.AsyncClient(base_url=url, timeout=10) as c:
        await _signed_in(c)
        for _ in range(6):  # HEAD answers at once and holds nothing
            assert (await c.head("/app/activity")).status_code == 200
        opened: list[Any] = []
        readers: list[_Events] = []  # kept: a reader dropped would close its stream
        try:
            for _ in range(4):
                cm = c.stream("GET", "/app/activity")
                r = await cm.__aenter__()
                opened.append(cm)
                assert r.status_code == 200
                readers.append(_Events(r))
                await readers[-1].next()
            refused = await c.get("/app/activity")
            assert refused.status_code == 429
            assert "at most 4" in refused.json()["error"]
            # another session is not affected
            async with httpx.AsyncClient(base_url=url, timeout=10) as other:
                await _signed_in(other)
                async with other.stream("GET", "/app/activity") as r:
                    assert r.status_code == 200
            await opened.pop().__aexit__(None, None, None)
            # the server frees the slot when it sees the disconnect; ask until it has
            for _ in range(1000):
                async with c.stream("GET", "/app/activity") as r:
                    if r.status_code == 429:
                        continue
                    assert r.status_code == 200
                    await _Events(r).next()
                    break
            else:
                raise AssertionError("the closed stream's slot never came back")
        finally:
            for cm in opened:
                await cm.__aexit__(None, None, None)
