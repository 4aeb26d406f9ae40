"""Hostile inputs shared by the hardening tests, and small helpers to aim them at each adapter."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import Any

import anyio
import httpx
from hypothesis import strategies as st

MB = 1024 * 1024
DEEP = 10_000

# The JSON text of one *input value* (MCP arguments, A2A data part, HTTP invoke body), raw, so
# that what no well-behaved client would send can be sent.
HOSTILE_INPUTS: dict[str, str] = {
    "array": "[1, 2]",
    "string": '"title"',
    "number": "5",
    "true": "true",
    "deep_arrays": '{"title": ' + "[" * DEEP + "]" * DEEP + "}",
    "deep_objects": '{"title": ' + '{"a": ' * DEEP + "1" + "}" * DEEP + "}",
    "lone_surrogate": '{"title": "\\ud800"}',
    "lone_surrogate_key": '{"\\udfff": "x"}',
    "nan": '{"title": NaN}',
    "infinity": '{"title": Infinity}',
    "minus_infinity": '{"title": -Infinity}',
    "duplicate_keys": '{"title": "a", "title": "b"}',
    "huge_integer": '{"title": ' + "9" * 5000 + "}",
    "extra_field": '{"title": "a", "principal": "admin"}',
    "wrong_type": '{"title": 5}',
    "null_title": '{"title": null}',
    "long_string_1mb": '{"title": "' + "x" * MB + '"}',
}
"""Inputs every adapter must refuse without dispatching anything (for ``create_todo``)."""

MALFORMED_BODIES: dict[str, bytes] = {
    "truncated": b'{"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {',
    "single_quotes": b"{'jsonrpc': '2.0'}",
    "not_utf8": b"\xff\xfe{}",
    "empty_array": b"[]",
    "bare_string": b'"hello"',
    "tru": b"tru",
}
"""Whole request bodies that are not one well-formed request object."""

TEN_MB_STRING = '{"title": "' + "x" * (10 * MB) + '"}'
"""Above every documented body limit (MCP 4 MiB, A2A 1 MiB, HTTP surface 64 KiB): 413."""


def json_values(max_leaves: int = 20) -> st.SearchStrategy[Any]:
    """Arbitrary JSON values, including awkward strings and floats."""
    leaves = (
        st.none()
        | st.booleans()
        | st.integers(min_value=-(2**70), max_value=2**70)
        | st.floats(allow_nan=False, allow_infinity=False)
        | st.text(max_size=30)
    )
    return st.recursive(
        leaves,
        lambda children: (
            st.lists(children, max_size=4)
            | st.dictionaries(st.text(max_size=10), children, max_size=4)
        ),
        max_leaves=max_leaves,
    )


def hostile_texts() -> st.SearchStrategy[str]:
    """JSON-ish texts: valid JSON, JSON with duplicate keys or constants spliced in, garbage."""
    spliced = st.tuples(json_values(), st.sampled_from(["NaN", "Infinity", '"\\ud83d"'])).map(
        lambda pair: f'{{"title": {json.dumps(pair[0])}, "x": {pair[1]}}}'
    )
    duplicated = json_values().map(lambda v: f'{{"a": {json.dumps(v)}, "a": {json.dumps(v)}}}')
    return (
        json_values().map(json.dumps)
        | spliced
        | duplicated
        | st.text(max_size=40)
        | st.binary(max_size=40).map(lambda b: b.decode("latin-1"))
    )


@asynccontextmanager
async def asgi_client(
    app: Any, base: str = "http://127.0.0.1:8000", **kw: Any
) -> AsyncIterator[httpx.AsyncClient]:
    """An httpx client on ``app`` (in process) with the app's lifespan running."""
    up = anyio.Event()
    stop = anyio.Event()

    async def life() -> None:
        async with app.router.lifespan_context(app):
            up.set()
            await stop.wait()

    async with anyio.create_task_group() as tg:
        tg.start_soon(life)
        with anyio.fail_after(10):
            await up.wait()
        try:
            async with httpx.AsyncClient(
                transport=httpx.ASGITransport(app=app), base_url=base, timeout=30, **kw
            ) as client:
                yield client
        finally:
            stop.set()


MODERN_META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientInfo": {"name": "hostile", "version": "1"},
    "io.modelcontextprotocol/clientCapabilities": {},
}


def mcp_call_body(name_json: str, arguments_json: str, meta: dict[str, Any] | None = None) -> bytes:
    """A modern-era ``tools/call`` request with raw JSON spliced in for the name and arguments."""
    meta_json = json.dumps({**MODERN_META, **(meta or {})})
    text = (
        f'{{"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {{"name": {name_json}, '
        f'"arguments": {arguments_json}, "_meta": {meta_json}}}}}'
    )
    return text.encode("utf-8", "surrogatepass")


def mcp_headers(name: str = "create_todo", token: str | None = None) -> dict[str, str]:
    headers = {
        "Accept": "application/json, text/event-stream",
        "Content-Type": "application/json",
        "MCP-Protocol-Version": "2026-07-28",
        "Mcp-Method": "tools/call",
        "Mcp-Name": name,
    }
    if token:
        headers["Authorization"] = f"Bearer {token}"
    return headers


def _a2a_message(data_json: str) -> str:
    return '{"role": "ROLE_USER", "messageId": "m-1", "parts": [{"data": ' + data_json + "}]}"


def a2a_send_body(data_json: str, metadata_json: str) -> bytes:
    """A JSON-RPC ``SendMessage`` with raw JSON spliced in for the data part and metadata."""
    text = (
        '{"jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": {"message": '
        + _a2a_message(data_json)
        + ', "metadata": '
        + metadata_json
        + "}}"
    )
    return text.encode("utf-8", "surrogatepass")


def a2a_rest_body(data_json: str, metadata_json: str) -> bytes:
    """The HTTP+JSON ``message:send`` body for the same call."""
    text = '{"message": ' + _a2a_message(data_json) + ', "metadata": ' + metadata_json + "}"
    return text.encode("utf-8", "surrogatepass")


def sse_or_json(text: str) -> dict[str, Any]:
    """The one JSON-RPC message in a JSON or server-sent-events response body."""
    text = text.strip()
    if text.startswith("{"):
        return json.loads(text)
    data = [line[5:].strip() for line in text.splitlines() if line.startswith("data:")]
    messages = [json.loads(d) for d in data if d]
    assert len(messages) == 1, text[:500]
    return messages[0]


async def until(condition: Callable[[], bool], bound: float = 10.0) -> None:
    """Wait until ``condition()`` holds, polling; fail after ``bound`` seconds.

    For states with no event to wait on (``runtime.pending()``, a response list); the bound turns
    a hang into a failure instead of a stalled CI run.
    """
    with anyio.fail_after(bound):
        while not condition():  # noqa: ASYNC110
            await anyio.sleep(0.005)


A2A_HEADERS = {
    "A2A-Version": "1.0",
    "Content-Type": "application/json",
    "Authorization": "Bearer alice-tok",
}
