"""The WebMCP adapter's server side and the todo web app's own endpoints (no browser)."""

from __future__ import annotations

import re
from collections.abc import AsyncIterator

import httpx
import pytest

from examples.todo import run_todo
from examples.todo_web import DEMO_USER, TodoWeb, create_app, todo_web
from foldkit_agent.adapters.web import webmcp
from foldkit_agent.adapters.web.signin import PERSON_COOKIE
from foldkit_agent.adapters.web.surface import CSRF_HEADER

BASE = "http://127.0.0.1:8765"


def test_bridge_script_ships_as_package_data() -> None:
    source = webmcp.bridge_script()
    assert "registerTool" in source
    assert "document.modelContext || navigator.modelContext" in source
    assert "signal: controller.signal" in source
    assert "X-CSRF-Token" in source


def test_script_tag_points_at_the_mount() -> None:
    assert webmcp.script_tag() == '<script src="/agent/webmcp.js" defer></script>'
    assert webmcp.script_tag("/x/") == '<script src="/x/webmcp.js" defer></script>'


async def test_webmcp_app_serves_page_bridge_and_surface() -> None:
    async with run_todo() as (_running, rt):
        app = webmcp.webmcp_app(rt, title="Todo <demo>")
        async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url=BASE) as c:
            page = await c.get("/")
            assert page.status_code == 200
            assert "Todo &lt;demo&gt;" in page.text
            assert '<script src="/agent/webmcp.js" defer></script>' in page.text
            js = await c.get("/agent/webmcp.js")
            assert js.status_code == 200
            assert js.headers["content-type"].startswith("text/javascript")
            assert js.headers["x-content-type-options"] == "nosniff"
            caps = await c.get("/agent/capabilities")
            assert [x["name"] for x in caps.json()["capabilities"]] == ["create_todo"]
            session = await c.get("/agent/session")
            assert "path=/agent" in session.headers["set-cookie"].lower()
            r = await c.post(
                "/agent/invoke/create_todo",
                json={"title": "Milk"},
                headers={CSRF_HEADER: session.json()["csrfToken"]},
            )
            assert r.json()["isError"] is False


# -- the todo web app ------------------------------------------------------------------------


@pytest.fixture
async def web() -> AsyncIterator[TodoWeb]:
    async with todo_web() as w:
        yield w


async def _signed_in(c: httpx.AsyncClient) -> str:
    page = await c.get("/")
    assert page.status_code == 200
    match = re.search(r'name="csrf-token" content="([^"]+)"', page.text)
    assert match is not None
    return match.group(1)


async def test_visiting_signs_in_the_demo_user(web: TodoWeb) -> None:
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=web.app), base_url=BASE) as c:
        token = await _signed_in(c)
        assert PERSON_COOKIE in c.cookies
        assert len(web.people) == 1
        state = (await c.get("/app/state")).json()
        user = {"id": DEMO_USER.id, "canDelete": DEMO_USER.can_delete}
        assert state == {"todos": [], "selected": None, "user": user}
        # the page token is also the agent surface's token: one session, one secret
        session = (await c.get("/agent/session")).json()
        assert session["csrfToken"] == token


async def test_person_messages_go_through_the_application(web: TodoWeb) -> None:
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=web.app), base_url=BASE) as c:
        token = await _signed_in(c)
        headers = {CSRF_HEADER: token, "origin": BASE}
        r = await c.post(
            "/app/dispatch", json={"_tag": "RequestedCreateTodo", "title": "Tea"}, headers=headers
        )
        assert r.status_code == 204
        todo = web.running.model().todos[0]
        assert todo.title == "Tea"
        r = await c.post(
            "/app/dispatch", json={"_tag": "SelectedTodo", "id": todo.id}, headers=headers
        )
        assert r.status_code == 204
        assert "delete_todo" in [x.name for x in web.runtime.messages.available()]
        # the agent surface is not involved: no audit entries
        assert web.runtime.audit is not None
        assert web.runtime.audit.entries() == []


@pytest.mark.parametrize(
    ("body", "headers", "status"),
    [
        ({"_tag": "SavedTodo", "id": "x"}, {}, 400),  # not a Message a person sends
        ({"_tag": "Nope"}, {}, 400),
        ({"_tag": "SelectedTodo"}, {}, 400),  # missing field
        ([1], {}, 400),
        ({"_tag": "ClearedSelection"}, {CSRF_HEADER: "wrong"}, 403),
        ({"_tag": "ClearedSelection"}, {"origin": "http://evil.example"}, 403),
    ],
)
async def test_the_app_endpoint_refuses_what_a_page_would_not_send(
    web: TodoWeb, body: object, headers: dict[str, str], status: int
) -> None:
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=web.app), base_url=BASE) as c:
        token = await _signed_in(c)
        applied = web.running.applied
        r = await c.post("/app/dispatch", json=body, headers={CSRF_HEADER: token, **headers})
        assert r.status_code == status
        assert web.running.applied == applied


async def test_the_app_endpoint_needs_a_session(web: TodoWeb) -> None:
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=web.app), base_url=BASE) as c:
        r = await c.post("/app/dispatch", json={"_tag": "ClearedSelection"})
        assert r.status_code == 401


async def test_create_app_runs_everything_in_its_lifespan() -> None:
    app = create_app()
    async with app.router.lifespan_context(app):
        async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url=BASE) as c:
            await _signed_in(c)
            caps = (await c.get("/agent/capabilities")).json()["capabilities"]
            assert [x["name"] for x in caps] == ["create_todo"]
