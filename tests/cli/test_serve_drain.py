"""Graceful drain: SIGTERM / SIGINT to a real ``foldkit-agent serve`` with calls in flight on
every transport (issue 15).

Each test starts one ``serve`` subprocess with MCP, A2A, the WebMCP page and the Agent Native
endpoint on one port and a non-durable SQLite audit, starts one ``hold`` call per transport
(MCP both eras with the official client, A2A ``message/send`` and ``message/stream`` with the
SDK client, the page with its session and CSRF token, native with its service token), waits
until the application has applied all six (it prints ``holding <id>``), then signals. Before:
the process died with the signal (-15), 2026-era MCP, page and native callers got HTTP 500,
legacy-era MCP an SSE stream without an answer, A2A a task left ``WORKING``, and the audit
lost the entries still queued.
"""

from __future__ import annotations

import asyncio
import os
import re
import signal
import sys
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
import httpx
import httpx2
import pytest
from a2a.client import A2ACardResolver, ClientConfig, create_client
from a2a.helpers import new_data_part
from a2a.types import Message, Role, SendMessageRequest, TaskState
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from foldkit_agent import SqliteAuditSink
from foldkit_agent.adapters.a2a import EXTENSION_URI
from foldkit_agent.adapters.web.csrf import CSRF_HEADER
from tests.support.hostile import until
from tests.support.paths import ROOT

SERVICE = "s3rvice-token-0123456789"
TRANSPORTS = ("mcp-legacy", "mcp-2026", "a2a-send", "a2a-stream", "page", "native")


@dataclass
class Answer:
    """One caller's answer, in protocol-neutral terms."""

    transport: str
    ok: bool
    status: str  # MCP/page/native: structuredContent["status"]; A2A: the task state's name
    text: str
    invocation_id: str | None = None


@dataclass
class Server:
    proc: asyncio.subprocess.Process
    origin: str
    audit: Path
    lines: list[str] = field(default_factory=list[str])

    async def until(self, pattern: str, count: int = 1) -> None:
        """Read standard error until ``count`` lines match ``pattern``."""
        assert self.proc.stderr is not None
        with anyio.fail_after(30):
            while sum(1 for line in self.lines if re.search(pattern, line)) < count:
                raw = await self.proc.stderr.readline()
                assert raw, f"serve exited; it said: {''.join(self.lines)}"
                self.lines.append(raw.decode())


@asynccontextmanager
async def serving(tmp_path: Path, *extra: str) -> AsyncIterator[Server]:
    audit = tmp_path / "audit.db"
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "foldkit_agent.cli", "serve", "tests.support.drain_app:runtime",
        "--mcp", "http", "--a2a", "--webmcp", "--native-token", SERVICE,
        "--port", "0", "--audit", f"sqlite:{audit}", *extra,
        cwd=ROOT,
        stderr=asyncio.subprocess.PIPE,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )  # fmt: skip
    assert proc.stderr is not None
    try:
        with anyio.fail_after(30):
            line = (await proc.stderr.readline()).decode()
        found = re.search(r"http://[^/\s]+", line)
        assert found is not None, line
        yield Server(proc, found.group(0), audit, [line])
    finally:
        if proc.returncode is None:
            proc.kill()
            await proc.wait()


async def mcp_call(origin: str, mode: str, name: str) -> Answer:
    http = httpx2.AsyncClient(timeout=60)
    answers: list[Answer] = []
    try:
        wire = streamable_http_client(f"{origin}/mcp", http_client=http)
        async with Client(wire, mode=mode) as mcp:
            await mcp.list_tools()  # as agents do; the client checks results against it
            result = await mcp.call_tool("hold", {})
            data: dict[str, Any] = result.structured_content or {}
            text = result.content[0].text  # type: ignore[union-attr]
            answers.append(
                Answer(name, not result.is_error, data["status"], text, data.get("invocation_id"))
            )
    except* httpx2.ConnectError:
        # Closing the session after the answer needs a new connection, which a server that
        # stopped accepting refuses; the answer itself arrived (asserted below).
        pass
    assert answers, f"{name}: no answer"
    return answers[0]


def _skill(streaming: bool) -> SendMessageRequest:
    msg = Message(
        role=Role.ROLE_USER,
        message_id=str(uuid.uuid4()),
        parts=[new_data_part({})],
        extensions=[EXTENSION_URI],
    )
    request = SendMessageRequest(message=msg)
    request.metadata.update({EXTENSION_URI: {"skill": "hold"}})
    del streaming
    return request


async def a2a_call(origin: str, streaming: bool, name: str) -> Answer:
    async with httpx.AsyncClient(base_url=origin, timeout=60) as hc:
        card = await A2ACardResolver(hc, origin).get_agent_card()
        client = await create_client(
            card, client_config=ClientConfig(httpx_client=hc, streaming=streaming)
        )
        last: Any = None
        task_id: str | None = None
        async for event in client.send_message(_skill(streaming)):
            if event.HasField("task"):
                last, task_id = event.task.status, event.task.id
            elif event.HasField("status_update"):
                last, task_id = event.status_update.status, event.status_update.task_id
        await client.close()
    assert last is not None
    text = last.message.parts[0].text if last.message.parts else ""
    state = TaskState.Name(last.state)
    return Answer(name, state == "TASK_STATE_COMPLETED", state, text, task_id)


async def page_call(origin: str) -> Answer:
    async with httpx.AsyncClient(base_url=origin, timeout=60) as hc:
        session = (await hc.get("/agent/session")).json()
        r = await hc.post(
            "/agent/invoke/hold", json={}, headers={CSRF_HEADER: session["csrfToken"]}
        )
    body = r.json()
    assert r.status_code == 200, body
    data = body["structuredContent"]
    return Answer(
        "page",
        not body["isError"],
        data["status"],
        body["content"][0]["text"],
        data.get("invocation_id"),
    )


async def native_call(origin: str) -> Answer:
    async with httpx.AsyncClient(base_url=origin, timeout=60) as hc:
        r = await hc.post(
            "/native/invoke/hold", json={}, headers={"Authorization": f"Bearer {SERVICE}"}
        )
    body = r.json()
    assert r.status_code == 200, body
    data = body["structuredContent"]
    return Answer(
        "native",
        not body["isError"],
        data["status"],
        body["content"][0]["text"],
        data.get("invocation_id"),
    )


def callers(origin: str) -> list[Callable[[], Awaitable[Answer]]]:
    return [
        lambda: mcp_call(origin, "legacy", "mcp-legacy"),
        lambda: mcp_call(origin, "auto", "mcp-2026"),
        lambda: a2a_call(origin, False, "a2a-send"),
        lambda: a2a_call(origin, True, "a2a-stream"),
        lambda: page_call(origin),
        lambda: native_call(origin),
    ]


async def calls_then(server: Server, act: Callable[[], Awaitable[None]]) -> dict[str, Answer]:
    """One held call per transport; ``act`` once the application has applied all six."""
    answers: dict[str, Answer] = {}

    async def run(call: Callable[[], Awaitable[Answer]]) -> None:
        answer = await call()
        answers[answer.transport] = answer

    with anyio.fail_after(60):
        async with anyio.create_task_group() as tg:
            for call in callers(server.origin):
                tg.start_soon(run, call)
            await server.until(r"^holding ", count=len(TRANSPORTS))
            await act()
    return answers


async def new_call_during_the_drain(origin: str) -> dict[str, Any]:
    async with httpx.AsyncClient(base_url=origin, timeout=30) as hc:
        r = await hc.post(
            "/native/invoke/hold", json={}, headers={"Authorization": f"Bearer {SERVICE}"}
        )
    assert r.status_code == 200, r.text
    return r.json()


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "SIGINT"])
async def test_calls_in_flight_finish_during_the_drain_and_are_all_audited(
    tmp_path: Path, sig: signal.Signals
) -> None:
    async with serving(tmp_path) as server:

        async def stop_then_release() -> None:
            server.proc.send_signal(sig)
            await server.until(r"shutting down: draining 6 call")
            late = await new_call_during_the_drain(server.origin)  # it stopped accepting
            assert late["isError"] is True
            assert late["structuredContent"]["status"] == "refused"
            assert "shutting down" in late["content"][0]["text"]
            assert "nothing was sent" in late["content"][0]["text"]
            server.proc.send_signal(signal.SIGUSR1)  # the application completes the six

        answers = await calls_then(server, stop_then_release)
        with anyio.fail_after(30):
            assert await server.proc.wait() == 0
    assert sorted(answers) == sorted(TRANSPORTS)
    for answer in answers.values():
        assert answer.ok, answer
        assert answer.status in ("completed", "TASK_STATE_COMPLETED"), answer
    entries = SqliteAuditSink(server.audit).query()
    applied = [e for e in entries if e.decision == "dispatched"]
    assert sorted(e.invocation_id for e in applied) == sorted(
        a.invocation_id for a in answers.values()
    )
    assert {e.outcome for e in applied} == {"completed"}
    refused = [(e.decision, e.outcome) for e in entries if e not in applied]
    assert refused == [("refused", "AgentCancelledError")]  # the call that came too late


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "SIGINT"])
async def test_calls_still_running_at_the_drain_deadline_answer_outcome_unknown(
    tmp_path: Path, sig: signal.Signals
) -> None:
    async with serving(tmp_path, "--drain-timeout", "0.5") as server:

        async def stop() -> None:
            server.proc.send_signal(sig)

        answers = await calls_then(server, stop)
        with anyio.fail_after(30):
            assert await server.proc.wait() == 0
    assert sorted(answers) == sorted(TRANSPORTS)
    for answer in answers.values():
        assert not answer.ok, answer
        assert "server shut down" in answer.text, answer
        assert "nothing was rolled back" in answer.text, answer
    for name in ("mcp-legacy", "mcp-2026", "page", "native"):
        assert answers[name].status == "unknown", answers[name]
    for name in ("a2a-send", "a2a-stream"):
        assert answers[name].status == "TASK_STATE_CANCELED", answers[name]
    entries = SqliteAuditSink(server.audit).query()
    assert len(entries) == len(TRANSPORTS)
    assert {(e.decision, e.outcome) for e in entries} == {("unknown", "AgentCancelledError")}
    a2a_ids = {answers[n].invocation_id for n in ("a2a-send", "a2a-stream")}
    assert a2a_ids <= {e.invocation_id for e in entries}  # the task id is the invocation id


# -- disconnect cancels: a caller that goes away sets its call's signal ---------------------

GONE_CALLERS = {
    "mcp-legacy": lambda origin: mcp_call(origin, "legacy", "mcp-legacy"),
    "mcp-2026": lambda origin: mcp_call(origin, "auto", "mcp-2026"),
    "a2a-send": lambda origin: a2a_call(origin, False, "a2a-send"),
    "a2a-stream": lambda origin: a2a_call(origin, True, "a2a-stream"),
    "page": page_call,
    "native": native_call,
}


async def test_a_caller_that_goes_away_aborts_its_call_on_every_transport(tmp_path: Path) -> None:
    """Before: legacy-era MCP and A2A calls ran on to their completion timeout (30 s here)
    for nobody. Each call here is aborted as soon as its client leaves: its audit entry says
    ``AgentCancelledError`` (a call left to time out would say ``AgentCompletionTimeoutError``,
    after 30 s)."""
    async with serving(tmp_path) as server:
        sink = SqliteAuditSink(server.audit)
        for n, (name, call) in enumerate(GONE_CALLERS.items(), start=1):
            async with anyio.create_task_group() as tg:
                tg.start_soon(call, server.origin)
                await server.until(r"^holding ", count=n)
                tg.cancel_scope.cancel()  # the client goes away; its connection closes
            await until(lambda n=n: len(sink.query()) >= n, bound=20)  # stored a few ms after
            entry = sink.query()[-1]
            assert (entry.decision, entry.outcome) == ("unknown", "AgentCancelledError"), name
        server.proc.send_signal(signal.SIGTERM)
        with anyio.fail_after(30):
            assert await server.proc.wait() == 0


# -- a second signal cuts the drain short, and still answers and audits every call ---------


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "SIGINT"])
async def test_a_second_signal_answers_every_call_now_and_keeps_the_audit(
    tmp_path: Path, sig: signal.Signals
) -> None:
    """Before: the second signal forced uvicorn out, the callers got no answer and the
    process exited 0 without closing the audit sink."""
    async with serving(tmp_path, "--drain-timeout", "120") as server:

        async def signal_twice() -> None:
            server.proc.send_signal(sig)
            await server.until(r"shutting down: draining 6 call")  # waiting up to 120 s
            server.proc.send_signal(sig)

        answers = await calls_then(server, signal_twice)
        assert server.proc.stderr is not None
        with anyio.fail_after(30):
            said = (await server.proc.stderr.read()).decode()  # to the end: the process ended
            code = await server.proc.wait()
    assert code == 128 + sig  # 143 or 130: the drain was cut short
    assert "second signal: aborting the calls still in flight now" in said
    assert sorted(answers) == sorted(TRANSPORTS)
    for answer in answers.values():
        assert not answer.ok, answer
        assert "server shut down" in answer.text, answer
    for name in ("mcp-legacy", "mcp-2026", "page", "native"):
        assert answers[name].status == "unknown", answers[name]
    for name in ("a2a-send", "a2a-stream"):
        assert answers[name].status == "TASK_STATE_CANCELED", answers[name]
    entries = SqliteAuditSink(server.audit).query()  # every answered call is in the audit
    assert len(entries) == len(TRANSPORTS)
    assert {(e.decision, e.outcome) for e in entries} == {("unknown", "AgentCancelledError")}
    answered = {a.invocation_id for a in answers.values() if a.invocation_id}
    assert answered <= {e.invocation_id for e in entries}
