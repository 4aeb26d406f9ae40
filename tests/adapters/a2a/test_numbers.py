"""A2A answers integers as integers where the capability's schema says integer (DESIGN §6).

The wire carries data parts as ``google.protobuf.Value`` (every number a double), which the SDK
writes as ``1.0``; the adapter writes them back along the capability's schema. Tested with the
A2A SDK client over a real socket, reading the raw JSON it received: JSON-RPC ``SendMessage``
and ``SendStreamingMessage``, and the HTTP+JSON binding; nested fields and arrays included; a
``float`` field stays a float.
"""

from __future__ import annotations

import json
import re
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import anyio
import httpx
import pytest
from a2a.client import A2ACardResolver, ClientConfig, create_client

from foldkit_agent.adapters.a2a import EXTENSION_URI, REST_PREFIX, a2a_app
from foldkit_agent.adapters.a2a.numbers import restore_integers
from tests.support.a2a_lab import lab_runtime, skill_request
from tests.support.serving import served_built

ARGS = {"by": 2, "factor": 2, "sizes": [1, 2], "items": [{"qty": 3}, {"qty": 4, "label": "b"}]}
SENT = {
    "_tag": "Added",
    "by": 2,
    "factor": 2.0,
    "sizes": [1, 2],
    "items": [{"qty": 3, "label": ""}, {"qty": 4, "label": "b"}],
    "code": None,
}


def typed(value: Any) -> Any:
    """``value`` with every number tagged by its JSON type, so ``1`` and ``1.0`` differ."""
    if isinstance(value, dict):
        return {k: typed(v) for k, v in value.items()}  # pyright: ignore[reportUnknownVariableType]
    if isinstance(value, list):
        return [typed(v) for v in value]  # pyright: ignore[reportUnknownVariableType]
    if isinstance(value, bool) or value is None or isinstance(value, str):
        return value
    return (type(value).__name__, value)


def outcome_parts(doc: Any) -> list[dict[str, Any]]:
    """Every data part in a JSON answer that holds one of our outcomes."""
    found: list[dict[str, Any]] = []
    stack = [doc]
    while stack:
        node = stack.pop()
        if isinstance(node, list):
            stack.extend(node)
        elif isinstance(node, dict):
            data = node.get("data")
            if isinstance(data, dict) and "capability" in data:
                found.append(data)
            else:
                stack.extend(node.values())
    return found


@asynccontextmanager
async def lab_over_http(*, streaming: bool) -> AsyncIterator[tuple[Any, list[bytes]]]:
    """The lab app served on a loopback port; the A2A SDK client; the raw bodies it read."""
    bodies: list[bytes] = []

    async def keep(response: httpx.Response) -> None:
        await response.aread()
        bodies.append(response.content)

    async with lab_runtime() as (lab, _breakable, _running):

        def build(origin: str) -> Any:
            return a2a_app(lab, name="lab", version="1", base_url=origin)

        async with (
            served_built(build) as origin,
            httpx.AsyncClient(event_hooks={"response": [keep]}, timeout=30) as hc,
        ):
            card = await A2ACardResolver(hc, origin).get_agent_card()
            client = await create_client(
                card, client_config=ClientConfig(httpx_client=hc, streaming=streaming)
            )
            try:
                yield client, bodies
            finally:
                await client.close()


@pytest.mark.parametrize("streaming", [False, True], ids=["send", "stream"])
async def test_a_result_artifact_carries_integers_as_json_integers(streaming: bool) -> None:
    async with lab_over_http(streaming=streaming) as (client, bodies):
        with anyio.fail_after(20):
            async for _event in client.send_message(skill_request("added", ARGS)):
                pass
    answers = [b for b in bodies if b"capability" in b]
    assert answers, "no answer carried an outcome"
    docs: list[Any] = []
    for body in answers:
        if streaming:
            docs += [
                json.loads(line[5:]) for line in body.decode().splitlines() if line[:5] == "data:"
            ]
        else:
            docs.append(json.loads(body))
    parts = [p for d in docs for p in outcome_parts(d)]
    assert parts
    for data in parts:
        assert typed(data["message"]) == typed(SENT)
        assert data["status"] == "dispatched"
    raw = b"".join(answers)
    assert re.search(rb'"by": ?2[,}]', raw)  # JSON 2, not 2.0
    assert re.search(rb'"qty": ?3[,}]', raw)  # nested in an array of objects
    assert re.search(rb'"factor": ?2\.0[,}]', raw)  # a float field stays a float


async def test_the_http_json_binding_answers_integers_as_integers() -> None:
    async with lab_runtime() as (lab, _breakable, _running):

        def build(origin: str) -> Any:
            return a2a_app(lab, name="lab", version="1", base_url=origin)

        request = {
            "message": {
                "role": "ROLE_USER",
                "messageId": "m-1",
                "parts": [{"data": ARGS}],
            },
            "metadata": {EXTENSION_URI: {"skill": "added"}},
        }
        async with served_built(build) as origin, httpx.AsyncClient(timeout=30) as hc:
            r = await hc.post(
                origin + REST_PREFIX + "/message:send",
                json=request,
                headers={"A2A-Version": "1.0"},
            )
    assert r.status_code == 200, r.text
    [data] = outcome_parts(r.json())
    assert typed(data["message"]) == typed(SENT)


def test_only_outcome_parts_of_known_capabilities_are_rewritten() -> None:
    schema = {
        "type": "object",
        "properties": {
            "message": {
                "type": "object",
                "properties": {"n": {"type": "integer"}, "x": {"type": "number"}},
            }
        },
    }
    doc = {
        "history": [{"parts": [{"data": {"n": 1.0}}]}],  # not an outcome: untouched
        "artifacts": [
            {"parts": [{"data": {"capability": "known", "message": {"n": 1.0, "x": 1.0}}}]},
            {"parts": [{"data": {"capability": "other", "message": {"n": 1.0}}}]},
        ],
        "status": {"message": {"parts": [{"data": {"waited_seconds": 5.0}}]}},
    }
    assert restore_integers(doc, {"known": schema}.get)
    assert typed(doc) == typed(
        {
            "history": [{"parts": [{"data": {"n": 1.0}}]}],
            "artifacts": [
                {"parts": [{"data": {"capability": "known", "message": {"n": 1, "x": 1.0}}}]},
                {"parts": [{"data": {"capability": "other", "message": {"n": 1.0}}}]},
            ],
            "status": {"message": {"parts": [{"data": {"waited_seconds": 5.0}}]}},
        }
    )
    assert not restore_integers({"parts": [{"data": {"n": 2.0}}]}, {"known": schema}.get)
