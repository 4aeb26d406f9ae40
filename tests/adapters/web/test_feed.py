"""The page's change feed (``GET events``): ready, then a change after every dispatch."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest
from starlette.applications import Starlette
from starlette.routing import Mount

from examples.todo import Model
from examples.todo.app import RequestedCreateTodo, SelectedTodo, TodoMessage
from foldkit_agent.adapters.web.surface import CSRF_HEADER, agent_surface
from tests.support.web_serving import serve
from tests.support.web_surface import BASE, Env, environment, next_event


@pytest.fixture
async def env() -> AsyncIterator[Env]:
    async with environment() as e:
        yield e


async def test_events_stream_delivers_a_change_after_a_dispatch(env: Env) -> None:
    async with serve(env.app) as url, httpx.AsyncClient(base_url=url, timeout=10) as client:
        async with client.stream("GET", "/agent/events") as r:
            assert r.status_code == 200
            assert r.headers["content-type"].startswith("text/event-stream")
            lines = r.aiter_lines()
            assert await next_event(lines) == ("ready", {"available": ["create_todo"]})
            # a person's Message, dispatched by the application
            env.running.dispatch(RequestedCreateTodo(title="Milk"))
            event, data = await next_event(lines)
            assert event == "change"
            assert data["capabilities"] is True
            assert data["context"] is True
            assert "select_todo" in data["available"]
            # an agent's invocation over the surface shows up on the same stream
            token = env.token()
            client.cookies.set("todo_session", "s-demo")
            resp = await client.post(
                "/agent/invoke/select_todo",
                json={"id": "todo-1"},
                headers={CSRF_HEADER: token},
            )
            assert resp.json()["isError"] is False
            selected = await change_offering(lines, "delete_todo")
            assert selected["capabilities"] is True  # delete_todo was not available before


async def change_offering(lines: AsyncIterator[str], name: str) -> dict[str, Any]:
    """The first of the next change events whose available names include ``name``: the
    creation's own follow-up changes may still be on their way when the agent calls, and
    a stream that never offers ``name`` fails on the client's read timeout."""
    while True:
        event, data = await next_event(lines)
        assert event == "change"
        if name in data["available"]:
            return data


async def test_events_without_host_subscribe_answer_501() -> None:
    from examples.todo import TodoAgent
    from foldkit_agent import Host

    definition = TodoAgent.make(messages=TodoAgent.expose(TodoMessage, {SelectedTodo: "Select"}))
    rt = TodoAgent.bind(definition=definition, host=Host(model=Model, dispatch=lambda m: None))
    app = Starlette(routes=[Mount("/agent", app=agent_surface(rt))])
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url=BASE) as c:
        r = await c.get("/agent/events")
    assert r.status_code == 501
