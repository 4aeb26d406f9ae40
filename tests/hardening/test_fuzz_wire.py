"""Wire fuzzing: hostile bodies against MCP (streamable HTTP and the in-process SDK client), A2A
(JSON-RPC and HTTP+JSON) and the HTTP invoke surface.

Every input gets a clean refusal (an error result, a JSON-RPC error or a 4xx; never a 500, a
-32603 with library text, a hang or a crash) and nothing is dispatched: the Program applied no
Message and no audit entry says ``dispatched``. Every await is bounded (``anyio.fail_after``).
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

import anyio
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from mcp import Client

from examples.todo import run_todo
from foldkit_agent.adapters.a2a import EXTENSION_URI, JSONRPC_PATH, REST_PREFIX, a2a_app
from foldkit_agent.adapters.mcp import http_app, mcp_server
from foldkit_agent.edge import HttpOptions
from foldkit_agent.edge.wire import WireError, loads_strict
from tests.support.a2a_lab import BearerBackend
from tests.support.hostile import (
    A2A_HEADERS,
    HOSTILE_INPUTS,
    MALFORMED_BODIES,
    TEN_MB_STRING,
    a2a_rest_body,
    a2a_send_body,
    asgi_client,
    hostile_texts,
    json_values,
    mcp_call_body,
    mcp_headers,
    sse_or_json,
)
from tests.support.mcp_cart import run_cart
from tests.support.web_surface import environment

LEAKS = (
    "Traceback",
    "Expecting",
    "line 1",
    "json.decoder",
    "codec",
    "recursion",
    "google.protobuf",
)
SKILL = json.dumps({EXTENSION_URI: {"skill": "create_todo"}})


def nothing_dispatched(running: Any, rt: Any) -> None:
    assert running.applied == 0
    assert running.model().todos == ()
    assert rt.audit is not None
    assert [e for e in rt.audit.entries() if e.decision != "refused"] == []
    assert rt.pending() == 0


def no_leak(text: str) -> None:
    for leak in LEAKS:
        assert leak not in text, (leak, text[:300])


# -- strict JSON ------------------------------------------------------------------------------


@pytest.mark.parametrize("name", sorted(HOSTILE_INPUTS))
def test_loads_strict_refuses_or_parses_every_hostile_input_without_crashing(name: str) -> None:
    text = HOSTILE_INPUTS[name]
    try:
        loads_strict(text.encode("utf-8", "surrogatepass"))
    except WireError as err:
        assert err.status == 400  # noqa: PT017
        no_leak(err.text)


@given(hostile_texts())
@settings(max_examples=300, deadline=None)
def test_loads_strict_either_parses_plain_json_or_raises_wire_error(text: str) -> None:
    try:
        value = loads_strict(text.encode("utf-8", "surrogatepass"))
    except WireError as err:
        assert err.status == 400  # noqa: PT017
        return
    json.dumps(value, allow_nan=False).encode("utf-8")  # what it accepts is plain, storable JSON


# -- MCP over streamable HTTP (raw JSON-RPC posts, modern era) --------------------------------


@pytest.mark.parametrize("name", sorted(HOSTILE_INPUTS))
async def test_mcp_http_hostile_arguments_are_refused_and_nothing_dispatched(name: str) -> None:
    async with run_todo() as (running, rt):
        app = http_app(rt, name="t", version="1")
        async with asgi_client(app) as http:
            with anyio.fail_after(20):
                r = await http.post(
                    "/mcp",
                    content=mcp_call_body('"create_todo"', HOSTILE_INPUTS[name]),
                    headers=mcp_headers(),
                )
            assert r.status_code in (200, 400), r.text[:300]
            answer = sse_or_json(r.text)
            if r.status_code == 200 and "result" in answer:
                assert answer["result"]["isError"] is True
            else:
                assert answer["error"]["code"] in (-32700, -32600, -32602)
            no_leak(r.text)
        nothing_dispatched(running, rt)


@pytest.mark.parametrize("name", sorted(MALFORMED_BODIES))
async def test_mcp_http_malformed_bodies_are_parse_errors(name: str) -> None:
    async with run_todo() as (running, rt):
        app = http_app(rt, name="t", version="1")
        async with asgi_client(app) as http:
            with anyio.fail_after(10):
                r = await http.post("/mcp", content=MALFORMED_BODIES[name], headers=mcp_headers())
            assert r.status_code == 400
            assert r.json()["error"]["code"] in (-32700, -32600)
        nothing_dispatched(running, rt)


async def test_mcp_http_bodies_over_the_limit_are_413_before_parsing() -> None:
    async with run_todo() as (running, rt):
        app = http_app(rt, name="t", version="1")
        async with asgi_client(app) as http:
            with anyio.fail_after(20):
                r = await http.post(
                    "/mcp",
                    content=mcp_call_body('"create_todo"', TEN_MB_STRING),
                    headers=mcp_headers(),
                )
            assert r.status_code == 413
            small = http_app(rt, name="t", version="1", options=HttpOptions(max_body=1000))
            async with asgi_client(small) as tiny:
                r = await tiny.post(
                    "/mcp",
                    content=mcp_call_body('"create_todo"', '{"title": "%s"}' % ("x" * 2000)),
                    headers=mcp_headers(),
                )
                assert r.status_code == 413
        nothing_dispatched(running, rt)


@pytest.mark.parametrize(
    "ctype", ["text/plain", "application/x-www-form-urlencoded", "multipart/form-data"]
)
async def test_mcp_http_wrong_content_types_are_refused(ctype: str) -> None:
    async with run_todo() as (running, rt):
        app = http_app(rt, name="t", version="1")
        async with asgi_client(app) as http:
            with anyio.fail_after(10):
                r = await http.post(
                    "/mcp",
                    content=mcp_call_body('"create_todo"', '{"title": "a"}'),
                    headers={**mcp_headers(), "Content-Type": ctype},
                )
            assert r.status_code in (400, 415)
        nothing_dispatched(running, rt)


async def test_mcp_http_legacy_session_refuses_hostile_arguments_too() -> None:
    async with run_todo() as (running, rt):
        app = http_app(rt, name="t", version="1")
        async with asgi_client(app) as http:
            base = {
                "Accept": "application/json, text/event-stream",
                "Content-Type": "application/json",
            }
            with anyio.fail_after(10):
                init = await http.post(
                    "/mcp",
                    json={
                        "jsonrpc": "2.0",
                        "id": 0,
                        "method": "initialize",
                        "params": {
                            "protocolVersion": "2025-11-25",
                            "capabilities": {},
                            "clientInfo": {"name": "hostile", "version": "1"},
                        },
                    },
                    headers=base,
                )
            assert init.status_code == 200
            session = {
                **base,
                "mcp-session-id": init.headers["mcp-session-id"],
                "mcp-protocol-version": "2025-11-25",
            }
            await http.post(
                "/mcp",
                json={"jsonrpc": "2.0", "method": "notifications/initialized"},
                headers=session,
            )
            for name in sorted(HOSTILE_INPUTS):
                body = (
                    '{"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": '
                    f'{{"name": "create_todo", "arguments": {HOSTILE_INPUTS[name]}}}}}'
                ).encode("utf-8", "surrogatepass")
                with anyio.fail_after(20):
                    r = await http.post("/mcp", content=body, headers=session)
                assert r.status_code in (200, 400), (name, r.status_code)
                answer = sse_or_json(r.text)
                if "result" in answer:
                    assert answer["result"]["isError"] is True, name
                no_leak(r.text)
        nothing_dispatched(running, rt)


# -- MCP in process (the SDK client sends what hypothesis draws) ------------------------------


@given(st.lists(json_values().filter(lambda v: v != {}), min_size=1, max_size=15))
@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_mcp_in_process_any_json_arguments_to_a_no_field_tool_are_refused(
    values: list[Any],
) -> None:
    async def scenario() -> None:
        async with run_cart() as cart:
            server = mcp_server(cart.rt, name="t", version="1")
            async with Client(server) as client:
                for value in values:
                    args = value if isinstance(value, dict) else {"value": value}
                    with anyio.fail_after(10):
                        result = await client.call_tool("increment", args)
                    assert result.is_error
            assert cart.running.model().count == 0
            assert {e.decision for e in cart.audit.entries()} == {"refused"}
            assert len(cart.audit.entries()) == len(values)
            assert cart.rt.pending() == 0

    asyncio.run(scenario())


@given(st.text(max_size=40).filter(lambda s: s not in {"increment", "checkout", "pay", "reset"}))
@settings(max_examples=40, deadline=None)
def test_mcp_in_process_any_tool_name_is_unknown_and_audited_once(name: str) -> None:
    async def scenario() -> None:
        async with run_cart() as cart:
            async with Client(mcp_server(cart.rt, name="t", version="1")) as client:
                with anyio.fail_after(10):
                    result = await client.call_tool(name, {})
            assert result.is_error
            assert result.structured_content is not None
            assert result.structured_content["_tag"] in (
                "AgentUnknownCapabilityError",
                "AgentCapabilityUnavailableError",
            )
            assert len(cart.audit.entries()) == 1
            assert cart.running.model().count == 0

    asyncio.run(scenario())


# -- A2A (raw JSON-RPC and HTTP+JSON) ----------------------------------------------------------


def a2a_refused(r: Any) -> None:
    assert r.status_code != 500, r.text[:300]
    no_leak(r.text)
    if r.status_code == 200:
        body = r.json()
        if "error" in body:
            assert body["error"]["code"] != -32603, body
            return
        task = body.get("result", body).get("task")
        assert task is not None, body
        assert task["status"]["state"] == "TASK_STATE_REJECTED", task["status"]
    else:
        assert 400 <= r.status_code < 500


@pytest.mark.parametrize("name", sorted(HOSTILE_INPUTS))
async def test_a2a_hostile_data_parts_are_refused_and_nothing_dispatched(name: str) -> None:
    async with run_todo() as (running, rt):
        app = a2a_app(
            rt, name="t", version="1", base_url="http://testserver", authentication=BearerBackend()
        )
        async with asgi_client(app, base="http://testserver") as http:
            with anyio.fail_after(20):
                rpc = await http.post(
                    JSONRPC_PATH,
                    content=a2a_send_body(HOSTILE_INPUTS[name], SKILL),
                    headers=A2A_HEADERS,
                )
                rest = await http.post(
                    REST_PREFIX + "/message:send",
                    content=a2a_rest_body(HOSTILE_INPUTS[name], SKILL),
                    headers=A2A_HEADERS,
                )
            a2a_refused(rpc)
            a2a_refused(rest)
        nothing_dispatched(running, rt)


@pytest.mark.parametrize(
    "metadata",
    [
        '"skill"',
        "[1]",
        f'{{"{EXTENSION_URI}": [1]}}',
        f'{{"{EXTENSION_URI}": {{"skill": 5}}}}',
        f'{{"{EXTENSION_URI}": {{"skill": ""}}}}',
        f'{{"{EXTENSION_URI}": {{"skill": "\\ud800"}}}}',
        f'{{"{EXTENSION_URI}": {{"skill": "create_todo", "skill": "delete_todo"}}}}',
        '{{"{}": {{"skill": "{}"}}}}'.format(EXTENSION_URI, "x" * 100_000),
        f'{{"{EXTENSION_URI}": {{"skill": "create_todo", "principal": "admin"}}}}',
    ],
)
async def test_a2a_hostile_metadata_is_refused_and_nothing_dispatched(metadata: str) -> None:
    async with run_todo() as (running, rt):
        app = a2a_app(
            rt, name="t", version="1", base_url="http://testserver", authentication=BearerBackend()
        )
        async with asgi_client(app, base="http://testserver") as http:
            with anyio.fail_after(20):
                r = await http.post(
                    JSONRPC_PATH, content=a2a_send_body("{}", metadata), headers=A2A_HEADERS
                )
            a2a_refused(r)
        nothing_dispatched(running, rt)


@pytest.mark.parametrize("name", sorted(MALFORMED_BODIES))
async def test_a2a_malformed_bodies_are_refused_without_library_text(name: str) -> None:
    async with run_todo() as (running, rt):
        app = a2a_app(rt, name="t", version="1", base_url="http://testserver")
        async with asgi_client(app, base="http://testserver") as http:
            with anyio.fail_after(10):
                r = await http.post(
                    JSONRPC_PATH, content=MALFORMED_BODIES[name], headers=A2A_HEADERS
                )
            assert r.status_code in (200, 400), r.status_code
            assert r.json()["error"]["code"] in (-32700, -32600)
            no_leak(r.text)
        nothing_dispatched(running, rt)


async def test_a2a_bodies_over_the_documented_limit_are_413() -> None:
    async with run_todo() as (running, rt):
        app = a2a_app(rt, name="t", version="1", base_url="http://testserver")
        async with asgi_client(app, base="http://testserver") as http:
            with anyio.fail_after(20):
                r = await http.post(
                    JSONRPC_PATH, content=a2a_send_body(TEN_MB_STRING, SKILL), headers=A2A_HEADERS
                )
                assert r.status_code == 413
                rest = await http.post(
                    REST_PREFIX + "/message:send",
                    content=a2a_rest_body(TEN_MB_STRING, SKILL),
                    headers=A2A_HEADERS,
                )
                assert rest.status_code == 413
        nothing_dispatched(running, rt)


@pytest.mark.parametrize("ctype", ["text/plain", "application/x-www-form-urlencoded", ""])
async def test_a2a_non_json_content_types_are_415(ctype: str) -> None:
    """A text/plain POST needs no CORS preflight: a web page could otherwise drive the agent."""
    async with run_todo() as (running, rt):
        app = a2a_app(rt, name="t", version="1", base_url="http://testserver")
        async with asgi_client(app, base="http://testserver") as http:
            with anyio.fail_after(10):
                r = await http.post(
                    JSONRPC_PATH,
                    content=a2a_send_body('{"title": "a"}', SKILL),
                    headers={**A2A_HEADERS, "Content-Type": ctype},
                )
            assert r.status_code == 415
        nothing_dispatched(running, rt)


# -- the HTTP invoke surface -------------------------------------------------------------------


@pytest.mark.parametrize("name", sorted(HOSTILE_INPUTS))
async def test_http_surface_hostile_bodies_are_refused_and_nothing_dispatched(name: str) -> None:
    async with environment(options=HttpOptions(max_body=2 * 1024 * 1024)) as env:
        with anyio.fail_after(20):
            r = await env.invoke(
                "create_todo", content=HOSTILE_INPUTS[name].encode("utf-8", "surrogatepass")
            )
        assert r.status_code in (200, 400), r.status_code
        assert r.json()["isError"] is True
        no_leak(r.text)
        nothing_dispatched(env.running, env.rt)


async def test_http_surface_ten_megabytes_is_413_by_default() -> None:
    async with environment() as env:
        with anyio.fail_after(20):
            r = await env.invoke("create_todo", content=TEN_MB_STRING.encode())
        assert r.status_code == 413
        nothing_dispatched(env.running, env.rt)


@given(st.lists(hostile_texts(), min_size=1, max_size=10))
@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_http_surface_any_body_is_answered_4xx_or_an_error_result(texts: list[str]) -> None:
    async def scenario() -> None:
        async with environment() as env:
            for text in texts:
                with anyio.fail_after(10):
                    r = await env.invoke(
                        "select_todo", content=text.encode("utf-8", "surrogatepass")
                    )
                assert r.status_code in (200, 400), r.status_code
                assert r.json()["isError"] is True  # select_todo is unavailable with no todos
            nothing_dispatched(env.running, env.rt)

    asyncio.run(scenario())
