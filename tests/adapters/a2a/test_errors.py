"""The A2A adapter's edges, raw over HTTP: error text, logs, required tokens, allowed hosts.

* every error answer (JSON-RPC, HTTP+JSON, streamed) carries our text, never the SDK's or a
  parser's, and keeps its protocol code; our own messages (unknown skill) stay intact;
* a client's mistakes reach the log as one DEBUG line at most, never a traceback; defects
  still log theirs;
* ``BearerTokenBackend(..., required=True)``: everything but the public card needs a token;
* ``allowed_hosts``: explicit names and ``"*"``, for a server bound to ``0.0.0.0``.
"""

from __future__ import annotations

import json
import logging
from collections.abc import AsyncGenerator, AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import anyio
import httpx
import pytest
from a2a.types import Task, TaskState, TaskStatus

from examples.todo import runtime as todo_runtime
from foldkit_agent import AgentRuntime
from foldkit_agent.adapters.a2a import (
    CARD_PATH,
    EXTENSION_URI,
    JSONRPC_PATH,
    REST_PREFIX,
    BearerTokenBackend,
    a2a_app,
)
from foldkit_agent.edge import LOOPBACK_HOSTS, HttpOptions

BASE = "http://testserver"
V1 = {"A2A-Version": "1.0", "Content-Type": "application/json"}
TOKENS = {"alice-token": ("alice", ["todos:delete"])}
LEAKS = (
    "Failed to parse",
    "not iterable",
    "expected string",
    "parseError",
    "Traceback",
    "'int'",
    "by this handler",
    "Invalid params",
    "Task not found",
    "Method not found",
    "secret-",
)


def rpc(method: str, params: Any = None) -> str:
    return json.dumps({"jsonrpc": "2.0", "id": 7, "method": method, "params": params or {}})


def send(skill: str, data: Any) -> dict[str, Any]:
    message = {
        "role": "ROLE_USER",
        "messageId": "m-1",
        "parts": [{"data": data}],
        "extensions": [EXTENSION_URI],
    }
    return {"message": message, "metadata": {EXTENSION_URI: {"skill": skill}}}


def no_leak(text: str) -> None:
    for leak in LEAKS:
        assert leak not in text, (leak, text[:400])


@asynccontextmanager
async def served(
    rt: AgentRuntime[Any, Any], base: str = BASE, **kwargs: Any
) -> AsyncGenerator[tuple[Any, httpx.AsyncClient]]:
    app = a2a_app(rt, name="todo", version="1", base_url=base, **kwargs)
    async with app.router.lifespan_context(app):
        async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url=base) as http:
            yield app, http


# ---------------------------------------------------------------------------------------------
# 1. our text in every error answer


@pytest.mark.parametrize(
    ("body", "headers", "code", "says"),
    [
        (
            rpc("SendMessage", {"message": 5}),
            V1,
            -32602,
            "The params of SendMessage do not match the A2A 1.0 schema: the field 'message'",
        ),
        (
            rpc("SendStreamingMessage", {"message": 5}),
            V1,
            -32602,
            "The params of SendStreamingMessage do not match",
        ),
        (
            rpc("GetTask", {"id": 5}),
            V1,
            -32602,
            "The params of GetTask do not match the A2A 1.0 schema: the field 'id'",
        ),
        (rpc("GetTask", {"id": "no-such-task"}), V1, -32001, "There is no task with that id"),
        (rpc("CancelTask", {"id": "no-such-task"}), V1, -32001, "There is no task with that id"),
        (rpc("LaunchRockets"), V1, -32601, "There is no A2A 1.0 method named 'LaunchRockets'"),
        (
            rpc("GetTask", {"id": "x"}),
            {"Content-Type": "application/json"},
            -32009,
            "must carry the header A2A-Version: 1.0",
        ),
        (
            rpc("GetTask", {"id": "x"}),
            {**V1, "A2A-Version": "0.3"},
            -32009,
            "asked for version '0.3': send the header A2A-Version: 1.0",
        ),
    ],
)
async def test_jsonrpc_errors_carry_our_text_and_keep_their_code(
    body: str, headers: dict[str, str], code: int, says: str
) -> None:
    async with todo_runtime() as rt, served(rt) as (_app, http):
        r = await http.post(JSONRPC_PATH, content=body, headers=headers)
    assert r.status_code == 200
    error = r.json()["error"]
    assert r.json()["id"] == 7
    assert error["code"] == code
    assert says in error["message"]
    for info in error.get("data", []):
        assert info["metadata"] == {}
    no_leak(r.text)


@pytest.mark.parametrize(
    ("method", "path", "body", "headers", "status", "says"),
    [
        (
            "POST",
            "/message:send",
            '{"message": 5}',
            V1,
            400,
            "does not match the A2A 1.0 schema of this route: the field 'message'",
        ),
        ("POST", "/message:stream", '{"message": 5}', V1, 400, "the field 'message'"),
        ("GET", "/tasks/no-such-task", None, V1, 404, "There is no task with that id"),
        ("GET", "/tasks/x?historyLength=abc", None, V1, 400, "query parameter 'historyLength'"),
        ("GET", "/tasks?pageSize=abc", None, V1, 400, "query parameter 'pageSize'"),
        ("GET", "/tasks/x", None, {}, 400, "must carry the header A2A-Version: 1.0"),
        ("POST", "/tasks/x:cancel", "{}", V1, 404, "There is no task with that id"),
        ("GET", "/no/such/route", None, V1, 404, "There is no A2A route at this path"),
    ],
)
async def test_http_json_errors_carry_our_text_and_keep_their_status(
    method: str, path: str, body: str | None, headers: dict[str, str], status: int, says: str
) -> None:
    async with todo_runtime() as rt, served(rt) as (_app, http):
        r = await http.request(method, REST_PREFIX + path, content=body, headers=headers)
    assert r.status_code == status
    error = r.json()["error"]
    assert error["code"] == status
    assert says in error["message"]
    for info in error.get("details", []):
        assert info["metadata"] == {}
    no_leak(r.text)


async def test_our_own_messages_are_kept_on_both_bindings() -> None:
    async with todo_runtime() as rt, served(rt) as (_app, http):
        rpc_r = await http.post(
            JSONRPC_PATH, content=rpc("SendMessage", send("launch_rockets", {})), headers=V1
        )
        rest_r = await http.post(
            REST_PREFIX + "/message:send", json=send("launch_rockets", {}), headers=V1
        )
        no_skill = await http.post(
            JSONRPC_PATH,
            content=rpc("SendMessage", {"message": send("x", {})["message"]}),
            headers=V1,
        )
    assert rpc_r.json()["error"]["code"] == -32602
    assert rpc_r.json()["error"]["message"].startswith(
        "Refused: there is no skill named 'launch_rockets'. Its skills: "
    )
    assert rest_r.status_code == 400
    assert rest_r.json()["error"]["message"].startswith("Refused: there is no skill named")
    said = no_skill.json()["error"]["message"]
    assert said.startswith("Refused: name the skill to run (this agent runs one skill per message")
    # a text-only client (Google ADK's RemoteA2aAgent) learns the skills and how to name one
    skills = ", ".join(c.name for c in rt.definition.capabilities)
    assert f"Its skills: {skills}." in said
    first = rt.definition.capabilities[0].name
    assert f'Set metadata[{EXTENSION_URI!r}] = {{"skill": "{first}"}}' in said


async def test_a_defect_is_a_generic_internal_error_and_keeps_its_traceback_in_the_log(
    caplog: pytest.LogCaptureFixture,
) -> None:
    async def broken(*_args: Any, **_kw: Any) -> Any:
        raise RuntimeError("secret-detail-4711 in /srv/app")

    caplog.set_level(logging.DEBUG)
    async with todo_runtime() as rt, served(rt) as (app, http):
        app.state.a2a_handler.on_get_task = broken
        r = await http.post(JSONRPC_PATH, content=rpc("GetTask", {"id": "x"}), headers=V1)
        rest = await http.get(REST_PREFIX + "/tasks/x", headers=V1)
    assert r.json()["error"] == {
        "code": -32603,
        "message": "The server could not answer this request.",
    }
    assert rest.status_code == 500
    assert rest.json()["error"]["message"] == "The server could not answer this request."
    no_leak(r.text + rest.text)
    defects = [rec for rec in caplog.records if rec.name.startswith("a2a.") and rec.exc_info]
    assert len(defects) == 2
    assert all(rec.levelno == logging.ERROR for rec in defects)


async def test_an_error_event_in_a_stream_carries_our_text() -> None:
    async def stream(*_args: Any, **_kw: Any) -> AsyncIterator[Any]:
        yield Task(
            id="t-1", context_id="c-1", status=TaskStatus(state=TaskState.TASK_STATE_WORKING)
        )
        raise RuntimeError("secret-detail-4711")

    async with todo_runtime() as rt, served(rt) as (app, http):
        app.state.a2a_handler.on_message_send_stream = stream
        body = rpc("SendStreamingMessage", send("create_todo", {"title": "a"}))
        with anyio.fail_after(10):
            r = await http.post(JSONRPC_PATH, content=body, headers=V1)
    events = [json.loads(line[5:]) for line in r.text.splitlines() if line.startswith("data:")]
    assert events[0]["result"]["task"]["id"] == "t-1"
    assert events[-1]["error"]["code"] == -32603
    assert events[-1]["error"]["message"] == "The server could not answer this request."
    no_leak(r.text)


# ---------------------------------------------------------------------------------------------
# 2. client mistakes do not flood the log


CLIENT_MISTAKES = [
    (JSONRPC_PATH, "[]", V1),
    (JSONRPC_PATH, '"x"', V1),
    (JSONRPC_PATH, rpc("SendMessage", {"message": 5}), V1),
    (JSONRPC_PATH, rpc("GetTask", {"id": 5}), V1),
    (JSONRPC_PATH, rpc("GetTask", {"id": "x"}), {"Content-Type": "application/json"}),
    (JSONRPC_PATH, rpc("Nope"), V1),
    (JSONRPC_PATH, json.dumps({"jsonrpc": "2.0", "id": 1, "method": "GetTask", "params": 5}), V1),
    (REST_PREFIX + "/message:send", '{"message": 5}', V1),
    (REST_PREFIX + "/message:send", json.dumps(send("nope", {})), V1),
    (REST_PREFIX + "/tasks/x:cancel", "{}", {"Content-Type": "application/json"}),
]


def sdk_records(caplog: pytest.LogCaptureFixture) -> list[logging.LogRecord]:
    return [r for r in caplog.records if r.name.startswith("a2a.")]


async def test_client_mistakes_log_one_debug_line_each_without_a_traceback(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.DEBUG)
    async with todo_runtime() as rt, served(rt) as (_app, http):
        for path, body, headers in CLIENT_MISTAKES:
            caplog.clear()
            r = await http.post(path, content=body, headers=headers)
            assert 200 <= r.status_code < 500, (path, body)
            records = sdk_records(caplog)
            assert not [rec for rec in records if rec.exc_info or rec.exc_text], body
            assert not [rec for rec in records if rec.levelno >= logging.INFO], body
            summaries = [rec for rec in records if "rror" in rec.getMessage()]
            assert len(summaries) <= 1, [rec.getMessage() for rec in summaries]


async def test_client_mistakes_log_nothing_at_the_default_warning_level(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.WARNING)
    async with todo_runtime() as rt, served(rt) as (_app, http):
        for path, body, headers in CLIENT_MISTAKES:
            await http.post(path, content=body, headers=headers)
    assert sdk_records(caplog) == []


async def test_the_log_filter_is_attached_once() -> None:
    async with todo_runtime() as rt:
        for _ in range(3):
            a2a_app(rt, name="todo", version="1", base_url=BASE)
    for name in ("a2a.server.routes.jsonrpc_dispatcher", "a2a.utils.error_handlers"):
        kinds = [type(f).__name__ for f in logging.getLogger(name).filters]
        assert kinds.count("_ClientErrorLogFilter") == 1


# ---------------------------------------------------------------------------------------------
# 3. required bearer tokens


async def test_required_tokens_refuse_every_anonymous_request_but_the_card() -> None:
    async with todo_runtime() as rt:
        backend = BearerTokenBackend(TOKENS, required=True)
        async with served(rt, authentication=backend) as (_app, http):
            card = await http.get(CARD_PATH)
            create = rpc("SendMessage", send("create_todo", {"title": "Milk"}))
            anonymous = [
                await http.post(JSONRPC_PATH, content=create, headers=V1),
                await http.post(JSONRPC_PATH, content=rpc("GetExtendedAgentCard"), headers=V1),
                await http.post(
                    REST_PREFIX + "/message:send",
                    json=send("create_todo", {"title": "Milk"}),
                    headers=V1,
                ),
                await http.get(REST_PREFIX + "/tasks", headers=V1),
                await http.get(REST_PREFIX + "/extendedAgentCard", headers=V1),
            ]
            wrong = await http.post(
                JSONRPC_PATH, content=create, headers={**V1, "Authorization": "Bearer nope"}
            )
            assert rt.context()["todos"] == []  # type: ignore[index]
            alice = await http.post(
                JSONRPC_PATH, content=create, headers={**V1, "Authorization": "Bearer alice-token"}
            )
    assert card.status_code == 200
    body = card.json()
    assert body["securityRequirements"] == [{"schemes": {"foldkit": {}}}]
    assert body["securitySchemes"]["foldkit"]["httpAuthSecurityScheme"]["scheme"] == "bearer"
    for r in anonymous:
        assert r.status_code == 401, r.request.url
        assert r.headers["www-authenticate"] == "Bearer"
        assert "requires credentials" in r.json()["error"]["message"]  # the route's own shape
        assert "code" in r.json()["error"]
    assert wrong.status_code == 401
    assert "could not be verified" in wrong.json()["error"]["message"]
    assert wrong.json()["jsonrpc"] == "2.0"
    assert "nope" not in wrong.text
    assert alice.json()["result"]["task"]["status"]["state"] == "TASK_STATE_COMPLETED"
    assert [t["title"] for t in rt.context()["todos"]] == ["Milk"]  # type: ignore[index]


async def test_optional_tokens_still_let_anonymous_callers_in_and_declare_no_card_requirement() -> (
    None
):
    async with todo_runtime() as rt:
        async with served(rt, authentication=BearerTokenBackend(TOKENS)) as (_app, http):
            card = (await http.get(CARD_PATH)).json()
            create = rpc("SendMessage", send("create_todo", {"title": "Milk"}))
            r = await http.post(JSONRPC_PATH, content=create, headers=V1)
    assert "securityRequirements" not in card
    assert r.json()["result"]["task"]["status"]["state"] == "TASK_STATE_COMPLETED"


# ---------------------------------------------------------------------------------------------
# 4. allowed hosts behind 0.0.0.0


LAN = "192.168.1.20"
WILD = "http://0.0.0.0:8000"


async def call_as(http: httpx.AsyncClient, host: str, origin: str | None = None) -> int:
    headers = {**V1, "Host": host}
    if origin is not None:
        headers["Origin"] = origin
    body = rpc("SendMessage", send("create_todo", {"title": f"from {host} {origin}"}))
    r = await http.post(JSONRPC_PATH, content=body, headers=headers)
    if r.status_code == 200:
        assert r.json()["result"]["task"]["status"]["state"] == "TASK_STATE_COMPLETED"
    return r.status_code


async def test_by_default_a_server_on_0000_answers_only_loopback_names() -> None:
    async with todo_runtime() as rt, served(rt, base=WILD) as (_app, http):
        assert await call_as(http, f"{LAN}:8000") == 421
        assert (await http.get(CARD_PATH, headers={"Host": f"{LAN}:8000"})).status_code == 421
        assert await call_as(http, "127.0.0.1:8000") == 200


async def test_explicit_allowed_hosts_let_lan_clients_in_and_nobody_else() -> None:
    hosts = [*LOOPBACK_HOSTS, LAN, "todo.example"]
    async with (
        todo_runtime() as rt,
        served(rt, base=WILD, options=HttpOptions(allowed_hosts=hosts)) as (_app, http),
    ):
        assert await call_as(http, f"{LAN}:8000") == 200
        assert await call_as(http, "TODO.example") == 200
        assert await call_as(http, "localhost:8000", origin=f"http://{LAN}:8000") == 200
        assert (await http.get(CARD_PATH, headers={"Host": LAN})).status_code == 200
        assert await call_as(http, "evil.example") == 421
        assert await call_as(http, f"{LAN}:8000", origin="http://evil.example") == 403
    async with (
        todo_runtime() as rt,
        served(rt, base=WILD, options=HttpOptions(allowed_hosts=LAN)) as (_app, http),
    ):
        assert await call_as(http, LAN) == 200  # one name as a plain string
        assert await call_as(http, "127.0.0.1") == 200  # the loopback names always stay
        assert await call_as(http, "evil.example") == 421


async def test_star_accepts_any_host_and_a_name_with_a_port_is_refused() -> None:
    async with (
        todo_runtime() as rt,
        served(rt, base=WILD, options=HttpOptions(allowed_hosts="*")) as (_app, http),
    ):
        assert await call_as(http, "anything.example:9") == 200
        assert await call_as(http, LAN, origin="http://elsewhere.example") == 200
        assert await call_as(http, "127.0.0.1:8000@evil.example") == 421  # malformed: never
        with pytest.raises(ValueError, match="allowed_hosts"):  # refused where it is written
            HttpOptions(allowed_hosts=[f"{LAN}:8000"])
