"""Who calls the surface: the page session's CSRF token and cookie, and the page sessions
counted apart for the caps (a made-up session is the one anonymous caller)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import AsyncExitStack

import httpx
import pytest
from starlette.applications import Starlette
from starlette.routing import Mount

from examples.todo import run_todo
from foldkit_agent.adapters.web.surface import CSRF_HEADER, SESSION_COOKIE, agent_surface
from foldkit_agent.edge import CallerLimits, HttpOptions
from tests.support.hostile import until
from tests.support.web_serving import serve
from tests.support.web_surface import BASE, Env, environment


def _caps(**caps: int) -> HttpOptions:
    """Options whose per-caller caps are ``CallerLimits(**caps)``."""
    return HttpOptions(caps=CallerLimits(**caps))


@pytest.fixture
async def env() -> AsyncIterator[Env]:
    async with environment() as e:
        yield e


async def test_session_endpoint_hands_out_the_session_bound_token(env: Env) -> None:
    env.client.cookies.set("todo_session", "s-demo")
    r = await env.client.get("/agent/session")
    assert r.json() == {"csrfToken": env.token("s-demo"), "csrfHeader": CSRF_HEADER}
    env.client.cookies.clear()
    r = await env.client.get("/agent/session")
    assert r.status_code == 403


async def test_default_session_cookie_when_the_app_has_no_session_hook() -> None:
    async with run_todo() as (running, rt):
        app = Starlette(routes=[Mount("/agent", app=agent_surface(rt))])
        async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url=BASE) as c:
            r = await c.get("/agent/session")
            assert SESSION_COOKIE in r.cookies
            set_cookie = r.headers["set-cookie"].lower()
            assert "httponly" in set_cookie
            assert "samesite=strict" in set_cookie
            assert "path=/agent" in set_cookie
            token = r.json()["csrfToken"]
            ok = await c.post(
                "/agent/invoke/create_todo",
                json={"title": "Milk"},
                headers={CSRF_HEADER: token},
            )
            assert ok.json()["isError"] is False
            c.cookies.clear()
            refused = await c.post(
                "/agent/invoke/create_todo",
                json={"title": "Tea"},
                headers={CSRF_HEADER: token},
            )
            assert refused.status_code == 403
        assert [t.title for t in running.model().todos] == ["Milk"]


async def test_pages_at_their_share_of_event_streams_are_refused_with_429_naming_the_cap() -> None:
    async with run_todo() as (_running, rt):
        app = agent_surface(rt, options=_caps(streams_per_caller=2, page_streams=10))
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


async def test_two_page_sessions_each_hold_their_own_share_of_event_streams() -> None:
    async with run_todo() as (_running, rt):
        app = agent_surface(
            rt, options=_caps(streams_per_caller=1, page_streams=10, page_sessions=2)
        )
        async with (
            serve(app) as url,
            httpx.AsyncClient(base_url=url, timeout=10) as page_a,
            httpx.AsyncClient(base_url=url, timeout=10) as page_b,
            AsyncExitStack() as stack,
        ):
            for page in (page_a, page_b):
                assert (await page.get("/session")).status_code == 200
            assert len(app.state.page_sessions) == 2
            first = await stack.enter_async_context(page_a.stream("GET", "/events"))
            assert first.status_code == 200
            assert (await page_a.get("/events")).status_code == 429
            second = await stack.enter_async_context(page_b.stream("GET", "/events"))
            assert second.status_code == 200
            streams = app.state.event_streams
            sid_a = page_a.cookies["foldkit_agent_sid"]
            assert streams.held_by(f"page-session:{sid_a}") == 1
            assert streams.held_by("anonymous") == 0


async def test_past_the_cap_on_page_sessions_the_oldest_counts_as_anonymous_again() -> None:
    async with run_todo() as (_running, rt):
        app = agent_surface(rt, options=_caps(page_sessions=1))
        async with serve(app) as url, httpx.AsyncClient(base_url=url, timeout=10) as first:
            await first.get("/session")
            sid = first.cookies["foldkit_agent_sid"]
            assert sid in app.state.page_sessions
            async with httpx.AsyncClient(base_url=url, timeout=10) as newer:
                await newer.get("/session")
            assert sid not in app.state.page_sessions
            assert len(app.state.page_sessions) == 1
