"""The shared JSON surface (foldkit_agent.adapters.web): listing, invoking, events, guards."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any

import anyio
import anyio.lowlevel
import httpx
import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.routing import Mount

from examples.todo import run_todo
from examples.todo.app import ReceivedTodos, SelectedTodo, Todo
from foldkit_agent import AgentRuntime
from foldkit_agent.adapters.web.surface import (
    APPROVED_HEADER,
    CSRF_HEADER,
    PRINCIPAL_HEADER,
    CsrfTokens,
    agent_surface,
)
from foldkit_agent.edge import HOST_REFUSAL, HttpOptions
from tests.support.web_surface import (
    BASE,
    CSRF,
    SECRET,
    SERVICE_TOKEN,
    Env,
    environment,
)


@pytest.fixture
async def env() -> AsyncIterator[Env]:
    async with environment() as e:
        yield e


# -- listing ---------------------------------------------------------------------------------


async def test_capabilities_lists_what_is_available_with_schemas(env: Env) -> None:
    r = await env.client.get("/agent/capabilities")
    assert r.status_code == 200
    caps = {c["name"]: c for c in r.json()["capabilities"]}
    assert set(caps) == {"create_todo"}
    schema = caps["create_todo"]["inputSchema"]
    assert schema["type"] == "object"
    assert schema["additionalProperties"] is False
    assert set(schema["properties"]) == {"title"}
    assert caps["create_todo"]["description"].startswith("Create a new todo")
    assert caps["create_todo"]["title"] == "Create todo"
    assert caps["create_todo"]["annotations"] == {"readOnlyHint": False}


async def test_context_reads_the_projection(env: Env) -> None:
    env.running.dispatch(SelectedTodo(id="none"))
    r = await env.client.get("/agent/context")
    assert r.status_code == 200
    assert r.json() == {"context": {"todos": [], "selected_todo_id": None}}


async def test_a_resolve_callable_picks_the_runtime_per_request() -> None:
    async with run_todo() as (_running, rt):
        seen: list[str] = []

        async def resolve(request: Request) -> AgentRuntime[Any, Any]:
            seen.append(request.url.path)
            return rt

        app = Starlette(routes=[Mount("/agent", app=agent_surface(resolve))])
        async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url=BASE) as c:
            r = await c.get("/agent/capabilities")
        assert [cap["name"] for cap in r.json()["capabilities"]] == ["create_todo"]
        assert seen == ["/agent/capabilities"]


# -- invoking --------------------------------------------------------------------------------


async def test_invoke_creates_and_answers_in_the_call_tool_result_shape(env: Env) -> None:
    r = await env.invoke("create_todo", {"title": "Milk"})
    assert r.status_code == 200
    body = r.json()
    assert set(body) == {"content", "structuredContent", "isError"}
    assert body["isError"] is False
    assert body["content"] == [{"type": "text", "text": "create_todo completed."}]
    assert body["structuredContent"]["status"] == "completed"
    assert [t.title for t in env.running.model().todos] == ["Milk"]
    entry = env.audit.entries()[-1]
    assert (entry.transport, entry.principal, entry.decision) == ("webmcp", "demo", "dispatched")


async def test_refusals_are_error_results_never_success_f03(env: Env) -> None:
    unknown = (await env.invoke("drop_database", {})).json()
    unavailable = (await env.invoke("delete_todo", {})).json()
    invalid = (await env.invoke("create_todo", {"title": "x", "priority": 1})).json()
    not_object = (await env.invoke("create_todo", [1, 2])).json()
    for body, tag in [
        (unknown, "AgentUnknownCapabilityError"),
        (unavailable, "AgentCapabilityUnavailableError"),
        (invalid, "AgentInvalidInputError"),
        (not_object, "AgentInvalidInputError"),
    ]:
        assert body["isError"] is True
        assert body["structuredContent"]["_tag"] == tag
        assert body["structuredContent"]["status"] == "refused"
        assert body["content"][0]["text"]
    assert "priority" in invalid["content"][0]["text"]
    assert env.running.model().todos == ()


async def test_delete_is_authorized_by_the_session_principal(env: Env) -> None:
    env.running.dispatch(ReceivedTodos(todos=(Todo(id="t1", title="A", saved=True),)))
    env.running.dispatch(SelectedTodo(id="t1"))
    guest = (await env.invoke("delete_todo", {}, sid="s-guest")).json()
    assert guest["isError"] is True
    assert guest["structuredContent"]["_tag"] == "AgentAuthorizationError"
    assert "guest may not delete" in guest["content"][0]["text"]
    assert len(env.running.model().todos) == 1
    # delete_todo is confirm=True: demo's call waits, parked, until the person in demo's page
    # approves
    waiting = await env.invoke("delete_todo", {}, sid="s-demo")
    request = await env.answer_approval(True, sid="s-demo")
    assert request["capability"] == "delete_todo"
    demo = await env.answer_of(waiting, sid="s-demo")
    assert demo["isError"] is False
    assert env.running.model().todos == ()


async def test_arguments_cannot_name_the_principal_f18(env: Env) -> None:
    body = (await env.invoke("create_todo", {"title": "x", "principal": "admin"})).json()
    assert body["isError"] is True
    assert "principal" in body["content"][0]["text"]


# -- CSRF and origin -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("sid", "token"),
    [
        ("s-demo", None),  # no token
        ("s-demo", "not-the-token"),  # wrong token
        ("s-demo", CSRF.token_for("s-guest")),  # another session
        (None, CSRF.token_for("s-demo")),  # no session
        ("s-demo", CsrfTokens(b"another-secret-0000").token_for("s-demo")),  # another secret
    ],
)
async def test_csrf_missing_or_wrong_is_403_and_nothing_dispatched(
    env: Env, sid: str | None, token: str | None
) -> None:
    applied = env.running.applied
    r = await env.invoke("create_todo", {"title": "Milk"}, sid=sid, token=token)
    assert r.status_code == 403
    body = r.json()
    assert body["isError"] is True
    assert body["structuredContent"]["error"] == "csrf"
    assert env.running.applied == applied
    # refused at the edge: one audit entry for the capability named, with no principal
    refusals = [(e.capability, e.principal, e.decision, e.outcome) for e in env.audit.entries()]
    assert refusals == [("create_todo", None, "refused", "AgentAuthorizationError")]


@pytest.mark.parametrize(
    "headers",
    [
        {"origin": "http://evil.example"},
        {"origin": "null"},
        {"origin": "http://127.0.0.1:9999"},  # same host, other port: another origin
        {"sec-fetch-site": "cross-site"},
        {"sec-fetch-site": "same-site"},
    ],
)
async def test_cross_origin_invoke_is_refused(env: Env, headers: dict[str, str]) -> None:
    applied = env.running.applied
    r = await env.invoke("create_todo", {"title": "Milk"}, headers=headers)
    assert r.status_code == 403
    assert r.json()["structuredContent"]["error"] == "origin"
    assert env.running.applied == applied


async def test_same_origin_and_allowed_origins_pass() -> None:
    async with environment(allowed_origins=["https://app.example"]) as env:
        same = await env.invoke(
            "create_todo", {"title": "A"}, headers={"origin": BASE, "sec-fetch-site": "same-origin"}
        )
        assert same.json()["isError"] is False
        other = await env.invoke(
            "create_todo", {"title": "B"}, headers={"origin": "https://app.example"}
        )
        assert other.json()["isError"] is False


async def test_foreign_host_names_are_refused_everywhere(env: Env) -> None:
    for path in ("/agent/capabilities", "/agent/context", "/agent/session", "/agent/events"):
        r = await env.client.get(path, headers={"host": "attacker.example"})
        assert r.status_code == 421, path
        assert r.json() == HOST_REFUSAL
    r = await env.invoke("create_todo", {"title": "x"}, headers={"host": "attacker.example:80"})
    assert r.status_code == 421
    assert env.running.model().todos == ()


async def test_principal_hook_failure_refuses_without_dispatch(env: Env) -> None:
    r = await env.invoke("create_todo", {"title": "x"}, headers={"x-test-explode": "1"})
    assert r.status_code == 403
    assert "session store" not in r.text
    assert env.running.model().todos == ()


# -- service callers -------------------------------------------------------------------------


async def test_service_token_skips_csrf_but_goes_through_credentials_of() -> None:
    # delete_todo is confirm=True: this surface trusts the service's word that its user approved
    async with environment(trust_service_approvals=True) as env:
        env.running.dispatch(ReceivedTodos(todos=(Todo(id="t1", title="A", saved=True),)))
        env.running.dispatch(SelectedTodo(id="t1"))
        auth = {"authorization": f"Bearer {SERVICE_TOKEN}", APPROVED_HEADER: "key-1"}
        anonymous = await env.invoke("delete_todo", {}, sid=None, token=None, headers=auth)
        assert anonymous.json()["structuredContent"]["_tag"] == "AgentAuthorizationError"
        r = await env.invoke(
            "delete_todo", {}, sid=None, token=None, headers={**auth, PRINCIPAL_HEADER: "ann"}
        )
        assert r.status_code == 200
        assert r.json()["isError"] is False
        entry = env.audit.entries()[-1]
        assert (entry.transport, entry.principal) == ("agent-native", "native-server:ann")


@pytest.mark.parametrize("auth", ["Bearer wrong", "Basic abc", "Bearer", "bearer  "])
async def test_bad_service_tokens_are_401(env: Env, auth: str) -> None:
    r = await env.invoke(
        "create_todo", {"title": "x"}, sid=None, token=None, headers={"authorization": auth}
    )
    assert r.status_code == 401
    assert env.running.model().todos == ()
    caps = await env.client.get("/agent/capabilities", headers={"authorization": auth})
    assert caps.status_code == 401


async def test_service_token_still_checked_against_origin(env: Env) -> None:
    r = await env.invoke(
        "create_todo",
        {"title": "x"},
        sid=None,
        token=None,
        headers={"authorization": f"Bearer {SERVICE_TOKEN}", "origin": "http://evil.example"},
    )
    assert r.status_code == 403


# -- bodies ----------------------------------------------------------------------------------


@pytest.mark.parametrize("ctype", ["text/plain", "application/x-www-form-urlencoded", None])
async def test_non_json_bodies_are_415(env: Env, ctype: str | None) -> None:
    headers = {"content-type": ctype} if ctype else {"content-type": ""}
    r = await env.invoke("create_todo", content=b'{"title": "x"}', headers=headers)
    assert r.status_code == 415
    assert r.json()["isError"] is True
    assert env.running.model().todos == ()


async def test_json_with_charset_is_accepted(env: Env) -> None:
    r = await env.invoke(
        "create_todo",
        content=b'{"title": "x"}',
        headers={"content-type": "application/json; charset=utf-8"},
    )
    assert r.json()["isError"] is False


async def test_oversized_bodies_are_413() -> None:
    async with environment(options=HttpOptions(max_body=1024)) as env:
        big = json.dumps({"title": "x" * 2000}).encode()
        r = await env.invoke("create_todo", content=big)
        assert r.status_code == 413
        assert "1024" in r.json()["content"][0]["text"]

        async def chunks() -> AsyncIterator[bytes]:
            for _ in range(10):
                yield b" " * 200

        token = env.token()
        env.client.cookies.set("todo_session", "s-demo")
        r = await env.client.post(
            "/agent/invoke/create_todo",
            content=chunks(),
            headers={"content-type": "application/json", CSRF_HEADER: token},
        )
        assert r.status_code == 413
        assert env.running.model().todos == ()


@pytest.mark.parametrize(
    "raw",
    [b'{"title": ', b"{'title': 'x'}", b'{"title": NaN}', b"\xff\xfe{}", b"[" * 100_00, b"tru"],
)
async def test_malformed_json_is_400_with_an_agent_facing_message(env: Env, raw: bytes) -> None:
    r = await env.invoke("create_todo", content=raw)
    assert r.status_code == 400
    text = r.json()["content"][0]["text"]
    assert "JSON" in text or "UTF-8" in text
    for leak in ("Expecting", "line 1", "Traceback", "json.decoder", "codec"):
        assert leak not in text
    assert env.running.model().todos == ()


async def test_an_empty_body_means_no_arguments(env: Env) -> None:
    r = await env.invoke("create_todo", content=b"")
    body = r.json()
    assert r.status_code == 200
    assert body["structuredContent"]["_tag"] == "AgentInvalidInputError"


async def test_bad_content_length_is_400(env: Env) -> None:
    r = await env.invoke("create_todo", content=b"{}", headers={"content-length": "abc"})
    assert r.status_code in (400, 413)


# -- events ----------------------------------------------------------------------------------


async def test_a_failing_resolve_is_503_not_a_traceback() -> None:
    def resolve(_request: Request) -> AgentRuntime[Any, Any]:
        raise RuntimeError("tenant db down")

    app = Starlette(routes=[Mount("/agent", app=agent_surface(resolve))])
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url=BASE) as c:
        r = await c.get("/agent/capabilities")
    assert r.status_code == 503
    assert "tenant" not in r.text
    assert r.json()["isError"] is True


async def test_a_caller_that_disconnects_aborts_its_invocation(env: Env) -> None:
    """F15-like: the client goes away while create_todo waits for its completion."""
    body = json.dumps({"title": "Milk"}).encode()
    sent: list[dict[str, Any]] = []
    messages = [
        {"type": "http.request", "body": body, "more_body": False},
        {"type": "http.disconnect"},
    ]

    async def receive() -> dict[str, Any]:
        message = messages.pop(0)
        if message["type"] == "http.disconnect":  # gone once the Message was sent
            with anyio.fail_after(10):
                while env.running.applied == 0:
                    await anyio.lowlevel.checkpoint()
        return message

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    scope = {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": "POST",
        "scheme": "http",
        "path": "/agent/invoke/create_todo",
        "raw_path": b"/agent/invoke/create_todo",
        "root_path": "",
        "query_string": b"",
        "headers": [
            (b"host", b"127.0.0.1:8000"),
            (b"content-type", b"application/json"),
            (b"cookie", b"todo_session=s-demo"),
            (CSRF_HEADER.lower().encode(), env.token().encode()),
        ],
        "client": ("127.0.0.1", 5000),
        "server": ("127.0.0.1", 8000),
    }
    await env.app(scope, receive, send)
    result = json.loads(
        b"".join(m.get("body", b"") for m in sent if m["type"] == "http.response.body")
    )
    assert result["isError"] is True
    assert result["structuredContent"]["_tag"] == "AgentCancelledError"
    entry = env.audit.entries()[-1]
    assert (entry.decision, entry.outcome) == ("unknown", "AgentCancelledError")
    assert env.rt.pending() == 0


async def test_an_edge_refusal_runs_resolve_only_once_the_caller_is_known() -> None:
    """Before authentication no application code runs: not even ``resolve(request)``."""
    async with run_todo() as (_running, rt):
        calls: list[str] = []

        def resolve(request: Request) -> AgentRuntime[Any, Any]:
            calls.append(request.url.path)
            return rt

        surface = agent_surface(resolve, csrf_secret=SECRET, session_of=lambda _r: "s-demo")
        app = Starlette(routes=[Mount("/agent", app=surface)])
        async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url=BASE) as c:
            anonymous = await c.post("/agent/invoke/create_todo", json={"title": "Milk"})
            assert anonymous.status_code == 403  # no CSRF token: refused at step 3
            assert calls == []
            overflow = await c.post(
                "/agent/invoke/create_todo",
                content=b'{"title": 1e400}',
                headers={"content-type": "application/json", CSRF_HEADER: CSRF.token_for("s-demo")},
            )
            assert overflow.status_code == 400  # step 5, for a known caller: audited
            assert calls == ["/agent/invoke/create_todo"]
        assert rt.audit is not None
        assert [(e.capability, e.outcome) for e in rt.audit.entries()] == [
            ("create_todo", "AgentInvalidInputError")
        ]
