"""Security checks: DNS rebinding, bearer authentication, principal spoofing (F18), CSRF, the A2A
card's security enforced by the runtime, and secrets kept out of the audit and the logs.
"""

from __future__ import annotations

import json
import logging
from typing import Any

import anyio
import pytest
from mcp.server.auth.provider import AccessToken

from examples.todo import User, run_todo
from foldkit_agent import AgentInvalidInputError, AgentUnknownCapabilityError, agent
from foldkit_agent.adapters.a2a import EXTENSION_URI, JSONRPC_PATH, a2a_app
from foldkit_agent.adapters.mcp import StaticTokenVerifier, http_app
from foldkit_agent.adapters.web.surface import CSRF_HEADER
from tests.support.a2a_lab import BearerBackend
from tests.support.hostile import (
    a2a_send_body,
    asgi_client,
    mcp_call_body,
    mcp_headers,
    sse_or_json,
)
from tests.support.web_surface import environment

SECRET_TOKENS = ("alice-secret-token-7f3a", "bob-secret-token-91c2", "wrong-secret-token-0d0e")
VERIFIER = StaticTokenVerifier(
    {
        SECRET_TOKENS[0]: AccessToken(
            token=SECRET_TOKENS[0], client_id="t", scopes=["todos:delete"], subject="alice"
        ),
        SECRET_TOKENS[1]: AccessToken(
            token=SECRET_TOKENS[1], client_id="t", scopes=[], subject="bob"
        ),
    }
)


async def mcp_call(http: Any, name: str, args: str, token: str | None, **meta: Any) -> Any:
    with anyio.fail_after(10):
        return await http.post(
            "/mcp",
            content=mcp_call_body(json.dumps(name), args, meta or None),
            headers=mcp_headers(name, token),
        )


# -- DNS rebinding ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("header", "value", "status"),
    [
        ("Host", "evil.example", 421),
        ("Host", "127.0.0.1.evil.example:8000", 421),
        ("Origin", "http://evil.example", 403),
    ],
)
async def test_mcp_http_refuses_foreign_host_and_origin(
    header: str, value: str, status: int
) -> None:
    async with run_todo() as (running, rt):
        async with asgi_client(http_app(rt, name="t", version="1")) as http:
            with anyio.fail_after(10):
                r = await http.post(
                    "/mcp",
                    content=mcp_call_body('"create_todo"', '{"title": "a"}'),
                    headers={**mcp_headers(), header: value},
                )
            assert r.status_code == status
        assert running.applied == 0


@pytest.mark.parametrize(
    ("header", "value", "status"),
    [
        ("Host", "evil.example", 421),
        ("Origin", "http://evil.example", 403),
        ("Origin", "null", 403),
    ],
)
async def test_a2a_refuses_foreign_host_and_origin(header: str, value: str, status: int) -> None:
    async with run_todo() as (running, rt):
        app = a2a_app(rt, name="t", version="1", base_url="http://127.0.0.1:8000")
        async with asgi_client(app) as http:
            skill = json.dumps({EXTENSION_URI: {"skill": "create_todo"}})
            with anyio.fail_after(10):
                r = await http.post(
                    JSONRPC_PATH,
                    content=a2a_send_body('{"title": "a"}', skill),
                    headers={
                        "A2A-Version": "1.0",
                        "Content-Type": "application/json",
                        header: value,
                    },
                )
                card = await http.get("/.well-known/agent-card.json", headers={header: value})
            assert r.status_code == status
            assert card.status_code == status
        assert running.applied == 0


async def test_http_surface_refuses_foreign_host_and_cross_site_origin() -> None:
    async with environment() as env:
        for headers, status in (
            ({"host": "evil.example"}, 421),
            ({"origin": "http://evil.example"}, 403),
            ({"sec-fetch-site": "cross-site"}, 403),
        ):
            r = await env.invoke("create_todo", {"title": "a"}, headers=headers)
            assert r.status_code == status, headers
        assert env.running.applied == 0


# -- bearer authentication --------------------------------------------------------------------


@pytest.mark.parametrize(
    "auth", [None, "Bearer wrong-secret-token-0d0e", "Basic YWxpY2U6eA==", "Bearer "]
)
async def test_mcp_http_missing_or_wrong_bearer_is_401(auth: str | None) -> None:
    async with run_todo() as (running, rt):
        async with asgi_client(
            http_app(rt, name="t", version="1", token_verifier=VERIFIER)
        ) as http:
            headers = mcp_headers()
            if auth is not None:
                headers["Authorization"] = auth
            with anyio.fail_after(10):
                r = await http.post(
                    "/mcp",
                    content=mcp_call_body('"create_todo"', '{"title": "a"}'),
                    headers=headers,
                )
            assert r.status_code == 401
        assert running.applied == 0


async def test_a2a_wrong_bearer_is_401_and_the_cards_security_is_enforced_by_us() -> None:
    async with run_todo() as (running, rt):
        app = a2a_app(
            rt, name="t", version="1", base_url="http://testserver", authentication=BearerBackend()
        )
        running.dispatch(_seed())  # one todo, selected: delete_todo is available
        running.dispatch(_select())
        async with asgi_client(app, base="http://testserver") as http:
            card = (await http.get("/.well-known/agent-card.json")).json()
            protected = [s["id"] for s in card["skills"] if s.get("securityRequirements")]
            assert protected == ["delete_todo"]
            skill = json.dumps({EXTENSION_URI: {"skill": "delete_todo"}})
            base = {"A2A-Version": "1.0", "Content-Type": "application/json"}
            with anyio.fail_after(10):
                wrong = await http.post(
                    JSONRPC_PATH,
                    content=a2a_send_body("{}", skill),
                    headers={**base, "Authorization": "Bearer nope"},
                )
                anonymous = await http.post(
                    JSONRPC_PATH, content=a2a_send_body("{}", skill), headers=base
                )
            assert wrong.status_code == 401
            assert "nope" not in wrong.text
            task = anonymous.json()["result"]["task"]
            assert task["status"]["state"] == "TASK_STATE_REJECTED"
        assert len(running.model().todos) == 1  # nothing deleted
        assert rt.audit is not None
        assert [(e.capability, e.decision, e.outcome) for e in rt.audit.entries()] == [
            ("delete_todo", "refused", "AgentAuthorizationError")
        ]


def _seed() -> Any:
    from examples.todo.app import ReceivedTodos, Todo

    return ReceivedTodos(todos=(Todo(id="todo-1", title="Milk"),))


def _select() -> Any:
    from examples.todo.app import SelectedTodo

    return SelectedTodo(id="todo-1")


# -- principal spoofing (F18) -----------------------------------------------------------------


async def test_mcp_principal_from_arguments_or_meta_is_ignored_f18() -> None:
    async with run_todo() as (running, rt):
        running.dispatch(_seed())
        running.dispatch(_select())
        async with asgi_client(
            http_app(rt, name="t", version="1", token_verifier=VERIFIER)
        ) as http:
            spoof_args = await mcp_call(
                http, "delete_todo", '{"principal": "alice"}', SECRET_TOKENS[1]
            )
            spoof_meta = await mcp_call(
                http,
                "delete_todo",
                "{}",
                SECRET_TOKENS[1],
                principal="alice",
                user={"id": "alice", "can_delete": True},
            )
            anonymous_meta = await mcp_call(http, "delete_todo", "{}", None, principal="alice")
        assert (
            sse_or_json(spoof_args.text)["result"]["structuredContent"]["_tag"]
            == "AgentInvalidInputError"
        )
        meta_result = sse_or_json(spoof_meta.text)["result"]["structuredContent"]
        assert meta_result["_tag"] == "AgentAuthorizationError"
        assert "bob may not delete" in meta_result["message"]
        assert anonymous_meta.status_code == 401
        assert len(running.model().todos) == 1
        # the anonymous call is refused at the edge and audited with no principal, not "alice"
        assert [(e.principal, e.decision) for e in rt.audit.entries()] == [
            ("bob", "refused"),
            ("bob", "refused"),
            (None, "refused"),
        ]


async def test_a2a_principal_from_metadata_is_ignored_f18() -> None:
    async with run_todo() as (running, rt):
        running.dispatch(_seed())
        running.dispatch(_select())
        app = a2a_app(
            rt, name="t", version="1", base_url="http://testserver", authentication=BearerBackend()
        )
        async with asgi_client(app, base="http://testserver") as http:
            metadata = json.dumps(
                {
                    EXTENSION_URI: {"skill": "delete_todo", "principal": "alice", "user": "alice"},
                    "principal": "alice",
                    "authorization": "Bearer alice-tok",
                }
            )
            with anyio.fail_after(10):
                r = await http.post(
                    JSONRPC_PATH,
                    content=a2a_send_body("{}", metadata),
                    headers={
                        "A2A-Version": "1.0",
                        "Content-Type": "application/json",
                        "Authorization": "Bearer bob-tok",
                    },
                )
        task = r.json()["result"]["task"]
        assert task["status"]["state"] == "TASK_STATE_REJECTED"
        assert "bob may not delete" in json.dumps(task["status"])
        assert len(running.model().todos) == 1


# -- CSRF on the page surface -----------------------------------------------------------------


async def test_csrf_token_must_belong_to_the_callers_session() -> None:
    async with environment() as env:
        missing = await env.invoke("create_todo", {"title": "a"}, token=None)
        other = await env.invoke(
            "create_todo", {"title": "a"}, sid="s-demo", token=env.token("s-guest")
        )
        forged = await env.invoke("create_todo", {"title": "a"}, token="A" * 43)
        no_session = await env.invoke(
            "create_todo", {"title": "a"}, sid=None, token=env.token("s-demo")
        )
        assert [r.status_code for r in (missing, other, forged, no_session)] == [403] * 4
        cross = await env.invoke(
            "create_todo",
            {"title": "a"},
            headers={"origin": "http://evil.example", CSRF_HEADER: env.token()},
        )
        assert cross.status_code == 403
        assert env.running.applied == 0
        # five edge refusals of create_todo, none with a principal, none dispatched
        refusals = {(e.capability, e.principal, e.decision) for e in env.audit.entries()}
        assert refusals == {("create_todo", None, "refused")}
        assert len(env.audit.entries()) == 5


# -- secrets in the audit and the logs --------------------------------------------------------


async def test_redaction_holds_at_any_depth_and_on_refusals() -> None:
    audit = agent.audit_log(include_input=True, redact=["password", "token"])
    async with run_todo(audit=audit) as (_running, rt):
        payload = {"title": "a", "nested": [{"password": "hunter2", "deeper": {"token": "t0k3n"}}]}
        with pytest.raises(AgentInvalidInputError):
            await rt.messages.dispatch_unknown("create_todo", payload)
        with pytest.raises(AgentUnknownCapabilityError):
            await rt.messages.dispatch_unknown(
                "no_such", {"a": {"b": {"c": [{"password": "hunter2"}]}}}
            )
    text = json.dumps([e.to_json() for e in audit.entries()])
    assert "hunter2" not in text
    assert "t0k3n" not in text
    assert text.count("[redacted]") == 3


async def test_no_bearer_token_reaches_any_audit_entry_or_log_record(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.DEBUG)
    audit = agent.audit_log(
        include_input=True, record_principal=lambda u: u.model_dump() if isinstance(u, User) else u
    )
    async with run_todo(audit=audit) as (running, rt):
        running.dispatch(_seed())
        running.dispatch(_select())
        async with asgi_client(
            http_app(rt, name="t", version="1", token_verifier=VERIFIER)
        ) as http:
            await mcp_call(http, "create_todo", '{"title": "a"}', SECRET_TOKENS[0])
            await mcp_call(http, "delete_todo", "{}", SECRET_TOKENS[1])
            await mcp_call(http, "delete_todo", '{"token": "x"}', SECRET_TOKENS[1])
            await mcp_call(http, "nope", "{}", SECRET_TOKENS[0])
            await mcp_call(http, "create_todo", "{}", SECRET_TOKENS[2])
            await mcp_call(http, "delete_todo", "{}", SECRET_TOKENS[0])
        app = a2a_app(
            rt, name="t", version="1", base_url="http://testserver", authentication=BearerBackend()
        )
        async with asgi_client(app, base="http://testserver") as http:
            skill = json.dumps({EXTENSION_URI: {"skill": "create_todo"}})
            for token in ("alice-tok", "wrong-secret-token-0d0e"):
                await http.post(
                    JSONRPC_PATH,
                    content=a2a_send_body('{"title": "b"}', skill),
                    headers={
                        "A2A-Version": "1.0",
                        "Content-Type": "application/json",
                        "Authorization": f"Bearer {token}",
                    },
                )
    assert len(audit.entries()) >= 6
    audit_text = json.dumps([e.to_json() for e in audit.entries()], default=str)
    logs = "\n".join(
        f"{r.name} {r.getMessage()} {r.exc_text or ''} {r.args!r}" for r in caplog.records
    )
    for token in (*SECRET_TOKENS, "alice-tok"):
        assert token not in audit_text
        assert token not in logs
