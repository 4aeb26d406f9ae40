"""JSON-RPC endpoints refuse what is not one JSON-RPC 2.0 message, in our own words.

Found by a newcomer attacking a running server: an empty body, a batch, ``"jsonrpc": "1.0"``
or an object id reached the SDKs, whose answers quoted pydantic or the stdlib parser.
"""

from __future__ import annotations

from typing import Any

import anyio
import pytest

from examples.todo import run_todo
from foldkit_agent.adapters.a2a import JSONRPC_PATH, a2a_app
from foldkit_agent.adapters.mcp import http_app
from foldkit_agent.edge.wire import WireError, jsonrpc_problem, loads_strict
from tests.support.hostile import A2A_HEADERS, asgi_client, mcp_headers

NOT_JSONRPC: dict[str, bytes] = {
    "empty": b"",
    "whitespace": b"  \n",
    "batch": b'[{"jsonrpc": "2.0", "id": 1, "method": "tools/list"}]',
    "version_1": b'{"jsonrpc": "1.0", "id": 1, "method": "tools/list"}',
    "no_version": b'{"id": 1, "method": "tools/list"}',
    "no_method": b'{"jsonrpc": "2.0", "id": 1}',
    "object_id": b'{"jsonrpc": "2.0", "id": {"a": 1}, "method": "tools/list"}',
    "null_id": b'{"jsonrpc": "2.0", "id": null, "method": "tools/list"}',
    "bool_id": b'{"jsonrpc": "2.0", "id": true, "method": "tools/list"}',
    "number_method": b'{"jsonrpc": "2.0", "id": 1, "method": 5}',
    "array_params": b'{"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": [1]}',
    "string_params": b'{"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": "x"}',
}
LEAKS = ("pydantic", "validation error", "Expecting value", "EOF while parsing", "line 1", "union[")


def answered_in_our_words(r: Any) -> None:
    assert r.status_code == 400, r.status_code
    error = r.json()["error"]
    assert error["code"] in (-32700, -32600, -32602)
    text = r.text
    for leak in LEAKS:
        assert leak not in text, (leak, text[:300])
    assert any(
        phrase in error["message"] for phrase in ("JSON-RPC", "not valid JSON", "params must be")
    )


@pytest.mark.parametrize("name", sorted(NOT_JSONRPC))
async def test_mcp_http_refuses_what_is_not_one_jsonrpc_message(name: str) -> None:
    async with run_todo() as (running, rt):
        async with asgi_client(http_app(rt, name="t", version="1")) as http:
            with anyio.fail_after(10):
                r = await http.post("/mcp", content=NOT_JSONRPC[name], headers=mcp_headers())
            answered_in_our_words(r)
        assert running.applied == 0


@pytest.mark.parametrize("name", sorted(NOT_JSONRPC))
async def test_a2a_jsonrpc_refuses_what_is_not_one_jsonrpc_message(name: str) -> None:
    async with run_todo() as (running, rt):
        app = a2a_app(rt, name="t", version="1", base_url="http://testserver")
        async with asgi_client(app, base="http://testserver") as http:
            with anyio.fail_after(10):
                r = await http.post(JSONRPC_PATH, content=NOT_JSONRPC[name], headers=A2A_HEADERS)
            answered_in_our_words(r)
        assert running.applied == 0


def test_a_client_response_to_a_server_request_is_a_jsonrpc_message() -> None:
    assert jsonrpc_problem({"jsonrpc": "2.0", "id": "s-1", "result": {}}) is None
    assert jsonrpc_problem({"jsonrpc": "2.0", "method": "notifications/initialized"}) is None


def test_a_number_too_long_to_read_is_named_as_such() -> None:
    with pytest.raises(WireError) as info:
        loads_strict('{"qty": ' + "9" * 5000 + "}")
    assert info.value.status == 400
    assert info.value.text == "The body holds a number longer than 4,000 digits."
    assert loads_strict('{"qty": ' + "9" * 4000 + "}")["qty"] == int("9" * 4000)
