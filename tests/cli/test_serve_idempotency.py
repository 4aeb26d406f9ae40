"""A retried call with one idempotency key against a real ``foldkit-agent serve``, on every
transport: MCP (SEP-3182's ``_meta`` key, the official client), A2A (our extension's
``idempotencyKey``, the official SDK client), the page surface and Agent Native (the
``Idempotency-Key`` header). Each makes one todo and answers the retry with the first answer;
the same key with other input is refused as a conflict."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import anyio
import httpx
from google.protobuf.json_format import MessageToDict
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from foldkit_agent import IDEMPOTENCY_HEADER, IDEMPOTENCY_META, SqliteAuditSink
from foldkit_agent.adapters.web.csrf import CSRF_HEADER
from tests.support.a2a_lab import skill_request
from tests.support.hostile import mcp_call_body, mcp_headers
from tests.support.serving import Lines, a2a_client, serve_process, serving, todos_of

SERVICE = "s3rvice-token-0123456789"
EVERY_TRANSPORT = ("--mcp", "http", "--a2a", "--webmcp", "--native-token", SERVICE)


def meta(key: str) -> Any:
    return {IDEMPOTENCY_META: key}


async def test_a_retried_create_todo_with_one_key_makes_one_todo() -> None:
    async with (
        serve_process("examples.todo:runtime", "--mcp", "http") as origin,
        Client(streamable_http_client(f"{origin}/mcp")) as mcp,
    ):
        first = await mcp.call_tool("create_todo", {"title": "Milk"}, meta=meta("retry-1"))
        again = await mcp.call_tool("create_todo", {"title": "Milk"}, meta=meta("retry-1"))
        other = await mcp.call_tool("create_todo", {"title": "Eggs"}, meta=meta("retry-1"))
        assert first.is_error is False
        assert again.structured_content == first.structured_content
        assert other.is_error is True
        assert other.structured_content["reason"] == "conflict"
        # a second run would have made a second Milk, answered "failed" (a duplicate title)
        assert again.structured_content["status"] == "completed"
        contents = (await mcp.read_resource("agent://context")).contents[0]
        todos = json.loads(getattr(contents, "text", "{}"))["todos"]
        assert [t["title"] for t in todos] == ["Milk"]


async def a2a_result(client: Any, title: str, key: Any) -> dict[str, Any]:
    """The data of the one artifact (or the refusal's status message) of one A2A call."""
    events = [
        e
        async for e in client.send_message(skill_request("create_todo", {"title": title}, key=key))
    ]
    task = [e.task for e in events if e.HasField("task")][-1]
    if task.artifacts:
        return MessageToDict(task.artifacts[0].parts[0].data)
    return {"state": task.status.state, "text": task.status.message.parts[0].text}


async def http_result(
    hc: httpx.AsyncClient, path: str, title: str, key: str, **headers: str
) -> Any:
    r = await hc.post(path, json={"title": title}, headers={IDEMPOTENCY_HEADER: key, **headers})
    assert r.status_code == 200, r.text
    return r.json()


async def test_a2a_the_page_and_agent_native_carry_a_key_too() -> None:
    async with (
        serve_process("examples.todo:runtime", *EVERY_TRANSPORT) as origin,
        Client(streamable_http_client(f"{origin}/mcp")) as mcp,
    ):
        async with a2a_client(origin) as a2a:
            first = await a2a_result(a2a, "A2A milk", "a2a-1")
            again = await a2a_result(a2a, "A2A milk", "a2a-1")
            other = await a2a_result(a2a, "A2A eggs", "a2a-1")
            malformed = await a2a_result(a2a, "A2A bread", 7)  # a key that is not a string
        assert first["status"] == "completed"
        assert again == first  # the first answer, its invocation id included
        assert "first used with other input" in other["text"]
        assert "must be a string of 1 to 255" in malformed["text"]  # refused, never run bare

        async with httpx.AsyncClient(base_url=origin, timeout=30) as page:
            session = (await page.get("/agent/session")).json()
            csrf = {CSRF_HEADER: session["csrfToken"]}
            path = "/agent/invoke/create_todo"
            first = await http_result(page, path, "Page milk", "page-1", **csrf)
            again = await http_result(page, path, "Page milk", "page-1", **csrf)
            other = await http_result(page, path, "Page eggs", "page-1", **csrf)
        assert first["structuredContent"]["status"] == "completed"
        assert again == first
        assert other["isError"] is True
        assert other["structuredContent"]["reason"] == "conflict"

        bearer = {"Authorization": f"Bearer {SERVICE}"}
        async with httpx.AsyncClient(base_url=origin, timeout=30) as native:
            path = "/native/invoke/create_todo"
            first = await http_result(native, path, "Native milk", "native-1", **bearer)
            again = await http_result(native, path, "Native milk", "native-1", **bearer)
            other = await http_result(native, path, "Native eggs", "native-1", **bearer)
        assert first["structuredContent"]["status"] == "completed"
        assert again == first
        assert other["structuredContent"]["reason"] == "conflict"

        titles = [t["title"] for t in await todos_of(mcp)]
        assert titles == ["A2A milk", "Page milk", "Native milk"]


async def test_after_kill_9_mid_call_the_retry_answers_outcome_unknown_and_sends_nothing(
    tmp_path: Path,
) -> None:
    db = tmp_path / "audit.db"
    args = ("--mcp", "http", "--audit", f"sqlite:{db}", "--audit-durable")
    async with serving(*args, target="tests.support.drain_app:runtime") as server:
        async with httpx.AsyncClient(base_url=server.origin, timeout=30) as hc:
            body = mcp_call_body('"hold"', "{}", meta("hold-1"))
            first = asyncio.ensure_future(
                hc.post("/mcp", content=body, headers=mcp_headers("hold"))
            )
            await server.line(r"^holding ")  # the application applied it; no answer yet
            await server.kill()
            (lost,) = await asyncio.gather(first, return_exceptions=True)
            assert isinstance(lost, httpx.HTTPError)  # the first call never answered
    said = Lines()
    async with serve_process("tests.support.drain_app:runtime", *args, stderr=said) as origin:
        async with Client(streamable_http_client(f"{origin}/mcp")) as mcp:
            reasons: list[str] = []
            with anyio.fail_after(30):
                # the dead process's lease runs out (10 s) without a renewal: until then the
                # retry is told the first call is in progress, and to retry later, as here
                while not reasons or reasons[-1] == "in_progress":
                    if reasons:
                        await anyio.sleep(1)
                    retry = await mcp.call_tool("hold", {}, meta=meta("hold-1"))
                    assert retry.is_error is True
                    reasons.append(retry.structured_content["reason"])
            text = retry.content[0].text
    assert reasons[-1] == "unknown"
    assert set(reasons[:-1]) <= {"in_progress"}
    assert "interrupted" in text
    assert not [line for line in said if line.startswith("holding ")]  # nothing applied
    # the first call never answered, so it has no entry; every retry sent nothing
    entries = SqliteAuditSink(db).query(capability="hold")
    assert len(entries) == len(reasons)
    assert {(e.decision, e.outcome) for e in entries} == {("refused", "AgentIdempotencyError")}
