"""Fault injection: a host that raises, hangs or raises after delivery; observers, subscribers and
audit sinks that raise or block; clients that disconnect mid-call; servers that shut down with
calls pending. Each call still gets exactly one answer, one audit entry, and nothing hangs.
"""

from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest
from mcp import Client
from pydantic import BaseModel

from foldkit_agent import (
    AgentCancelledError,
    AgentCompletionTimeoutError,
    AgentError,
    AgentHostError,
    AuditEntry,
    Host,
    JsonlAuditSink,
    Message,
    Program,
    SqliteAuditSink,
    agent,
    message_union,
    surface,
)
from foldkit_agent.adapters.a2a import EXTENSION_URI, JSONRPC_PATH, a2a_app
from foldkit_agent.adapters.mcp import http_app, mcp_server
from tests.support.hostile import (
    a2a_send_body,
    asgi_client,
    mcp_call_body,
    mcp_headers,
    sse_or_json,
    until,
)
from tests.support.mcp_cart import Increment, LongWait, run_cart
from tests.support.serving import served

# A small application whose host can be told to fail in each way.


class Model(BaseModel, frozen=True):
    count: int = 0


class Bumped(Message):
    pass


class Waited(Message):
    pass


class Done(Message):
    pass


Msg = message_union(Bumped, Waited, Done)
App = surface.application(model=Model, message=Msg)


def update(model: Model, msg: Message) -> Model:
    return model.model_copy(update={"count": model.count + 1}) if isinstance(msg, Bumped) else model


Contract = agent.make(
    messages=agent.expose(
        Msg,
        {
            Bumped: agent.variant(name="bump", description="Add one"),
            Waited: agent.variant(
                name="wait",
                description="Completes on Done, which never comes",
                completion=agent.Completion(success=Done, timeout=0.2),
            ),
        },
    )
)


class FaultyHost:
    """Wraps a running Program's host; ``mode`` picks the fault."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.mode = "ok"
        self.hang = asyncio.Event()

    def host(self) -> Any:
        return Host(
            model=self.inner.model,
            dispatch=self.dispatch,
            subscribe=self.inner.subscribe,
            observe=self.inner.observe,
        )

    def dispatch(self, message: Message) -> Any:
        if self.mode == "raises":
            raise RuntimeError("secret-host-detail")
        if self.mode == "raises_after_delivery":
            self.inner.dispatch(message)
            raise RuntimeError("secret-host-detail")
        if self.mode == "hangs":
            return self.hang.wait()  # an awaitable that never finishes on its own
        self.inner.dispatch(message)
        return None


@asynccontextmanager
async def faulty(**audit_kw: Any) -> AsyncIterator[tuple[Any, FaultyHost, Any]]:
    program: Program[Model, Any] = Program(init=Model(), update=update)
    async with program.run() as running:
        host = FaultyHost(running)
        audit = agent.audit_log(capacity=100, **audit_kw)
        rt = agent.bind(definition=Contract, host=host.host(), audit=audit)
        try:
            yield rt, host, running
        finally:
            rt.close()


# -- the host ---------------------------------------------------------------------------------


async def test_a_host_dispatch_that_raises_answers_delivery_unknown_over_mcp() -> None:
    async with faulty() as (rt, host, running):
        host.mode = "raises"
        async with Client(mcp_server(rt, name="t", version="1")) as client:
            with anyio.fail_after(5):
                result = await client.call_tool("bump", {})
        assert result.is_error
        assert result.structured_content is not None
        assert result.structured_content["status"] == "unknown"
        assert "secret-host-detail" not in json.dumps(result.model_dump(mode="json"))
        assert [(e.decision, e.outcome) for e in rt.audit.entries()] == [
            ("unknown", "AgentHostError")
        ]
        assert running.applied == 0
        assert rt.pending() == 0


async def test_a_host_that_raises_after_delivery_applies_once_and_says_unknown() -> None:
    async with faulty() as (rt, host, running):
        host.mode = "raises_after_delivery"
        with anyio.fail_after(5), pytest.raises(AgentHostError) as caught:
            await rt.messages.dispatch("bump", {})
        assert caught.value.dispatched is None
        assert running.applied == 1
        assert running.model().count == 1
        assert [e.decision for e in rt.audit.entries()] == ["unknown"]


async def test_a_host_dispatch_that_hangs_ends_at_the_completion_deadline_f14() -> None:
    async with faulty() as (rt, host, _running):
        host.mode = "hangs"
        with anyio.fail_after(5), pytest.raises(AgentCompletionTimeoutError) as caught:
            await rt.messages.dispatch("wait", {})
        assert caught.value.dispatched is None  # the host never returned: delivery unknown
        assert "unknown" in caught.value.message
        assert [e.decision for e in rt.audit.entries()] == ["unknown"]
        assert rt.pending() == 0


async def test_a_host_dispatch_that_hangs_is_released_by_the_callers_signal() -> None:
    async with faulty() as (rt, host, _running):
        host.mode = "hangs"
        signal = asyncio.Event()
        task = asyncio.ensure_future(
            rt.messages.dispatch("bump", {}, agent.Invocation(signal=signal))
        )
        await until(lambda: rt.pending() > 0, 5)
        signal.set()
        with anyio.fail_after(5), pytest.raises(AgentCancelledError) as caught:
            await task
        assert caught.value.dispatched is None
        assert rt.pending() == 0
        assert [e.decision for e in rt.audit.entries()] == ["unknown"]


async def test_observers_and_subscribers_that_raise_break_neither_dispatch_nor_listing() -> None:
    async with faulty() as (rt, _host, running):

        def boom(_value: Any) -> None:
            raise RuntimeError("observer down")

        running.observe(boom)
        running.subscribe(boom)
        rt.watch(boom)
        async with Client(mcp_server(rt, name="t", version="1")) as client:
            with anyio.fail_after(5):
                for _ in range(3):
                    assert not (await client.call_tool("bump", {})).is_error
                assert {t.name for t in (await client.list_tools()).tools} == {"bump", "wait"}
        assert running.model().count == 3
        assert [e.decision for e in rt.audit.entries()] == ["dispatched"] * 3


# -- audit sinks ------------------------------------------------------------------------------


class RaisingSink:
    def write(self, entries: list[AuditEntry], /) -> None:
        raise OSError("disk full")


class BlockingSink:
    def __init__(self) -> None:
        self.release = threading.Event()
        self.written: list[AuditEntry] = []

    def write(self, entries: list[AuditEntry], /) -> None:
        self.release.wait()
        self.written.extend(entries)


async def test_an_audit_sink_that_raises_never_fails_a_dispatch() -> None:
    async with faulty(sink=RaisingSink()) as (rt, _host, running):
        with anyio.fail_after(5):
            for _ in range(20):
                await rt.messages.dispatch("bump", {})
        assert running.model().count == 20
        assert len(rt.audit.entries()) == 20  # every decision is still in memory
        assert await anyio.to_thread.run_sync(rt.audit.flush, 5.0)
        assert rt.audit.sink_failures >= 1
        assert rt.audit.sink_failed_entries == 20
        rt.audit.close()


async def test_an_audit_sink_that_blocks_never_delays_a_dispatch() -> None:
    sink = BlockingSink()
    async with faulty(sink=sink) as (rt, _host, running):
        with anyio.fail_after(5):  # would hang if recording waited for the sink
            for _ in range(50):
                await rt.messages.dispatch("bump", {})
        assert running.model().count == 50
        assert len(rt.audit.entries()) == 50
        sink.release.set()
        assert await anyio.to_thread.run_sync(rt.audit.flush, 5.0)
        assert len(sink.written) == 50
        rt.audit.close()


@pytest.mark.parametrize("kind", ["jsonl", "sqlite"])
async def test_a_lone_surrogate_off_the_wire_never_costs_a_durable_sink_its_batch(
    kind: str, tmp_path: Path
) -> None:
    """Regression: one name holding "\\ud800" made the JSONL/SQLite sink drop the whole batch."""
    sink: Any = (
        JsonlAuditSink(tmp_path / "a.jsonl")
        if kind == "jsonl"
        else SqliteAuditSink(tmp_path / "a.db")
    )
    async with faulty(sink=sink, include_input=True) as (rt, _host, _running):
        await rt.messages.dispatch("bump", {})
        with pytest.raises(AgentError):
            await rt.messages.dispatch_unknown("bu\ud800mp", {"k\udfff": "v\ud800"})
        await rt.messages.dispatch("bump", {})
        assert await anyio.to_thread.run_sync(rt.audit.flush, 5.0)
        assert rt.audit.sink_failures == 0
        assert rt.audit.sink_written == 3
        rt.audit.close()
    stored = list(sink.read()) if kind == "jsonl" else sink.query()
    assert [e.capability for e in stored] == ["bump", "bu\ufffdmp", "bump"]
    assert stored[1].input == {"k\ufffd": "v\ufffd"}


# -- disconnects and shutdown -----------------------------------------------------------------


async def test_an_mcp_http_client_that_disconnects_mid_call_aborts_it_f15() -> None:
    async with run_cart(LongWait) as cart:
        app = http_app(cart.rt, name="t", version="1")
        async with served(app) as base, httpx.AsyncClient(base_url=base) as http:

            async def call() -> None:
                await http.post(
                    "/mcp",
                    content=mcp_call_body('"wait_long"', "{}"),
                    headers=mcp_headers("wait_long"),
                )

            async with anyio.create_task_group() as tg:
                tg.start_soon(call)
                await until(lambda: cart.rt.pending() > 0)
                tg.cancel_scope.cancel()  # the client goes away; its connection closes
            await until(lambda: cart.rt.pending() == 0)  # far less than the 30 s wait
        entries = cart.audit.entries()
        assert [(e.decision, e.outcome) for e in entries] == [("unknown", "AgentCancelledError")]


async def test_mcp_http_shutdown_answers_pending_calls_outcome_unknown() -> None:
    """Before: shutdown waited for each pending completion's full timeout (30 s here)."""
    async with run_cart(LongWait) as cart:
        app = http_app(cart.rt, name="t", version="1")
        answers: list[dict[str, Any]] = []
        async with anyio.create_task_group() as outer:
            async with asgi_client(app) as http:

                async def call() -> None:
                    r = await http.post(
                        "/mcp",
                        content=mcp_call_body('"wait_long"', "{}"),
                        headers=mcp_headers("wait_long"),
                    )
                    answers.append(sse_or_json(r.text))

                for _ in range(3):
                    outer.start_soon(call)
                await until(lambda: cart.rt.pending() == 3)
            # leaving asgi_client ran the app's lifespan shutdown
            await until(lambda: len(answers) == 3)
        for answer in answers:
            result = answer["result"]
            assert result["isError"] is True
            assert result["structuredContent"]["_tag"] == "AgentCancelledError"
            assert result["structuredContent"]["status"] == "unknown"
            assert "rolled back" in result["content"][0]["text"]
        assert [e.decision for e in cart.audit.entries()] == ["unknown"] * 3
        assert cart.rt.pending() == 0


async def test_a2a_shutdown_answers_pending_calls_and_none_hangs() -> None:
    from tests.support.a2a_lab import LabWaitAgent, lab_runtime

    async with lab_runtime(LabWaitAgent) as (rt, _breakable, _running):
        app = a2a_app(rt, name="lab", version="1", base_url="http://testserver")
        answers: list[dict[str, Any]] = []
        skill = json.dumps({EXTENSION_URI: {"skill": "wait_long"}})
        async with anyio.create_task_group() as outer:
            async with asgi_client(app, base="http://testserver") as http:

                async def call() -> None:
                    r = await http.post(
                        JSONRPC_PATH,
                        content=a2a_send_body('{"seconds": 1}', skill),
                        headers={"A2A-Version": "1.0", "Content-Type": "application/json"},
                    )
                    answers.append(r.json())

                for _ in range(2):
                    outer.start_soon(call)
                await until(lambda: rt.pending() == 2)
            await until(lambda: len(answers) == 2)
        for answer in answers:
            state = answer["result"]["task"]["status"]["state"]
            assert state == "TASK_STATE_CANCELED", answer
        assert rt.audit is not None
        assert [e.decision for e in rt.audit.entries()] == ["unknown"] * 2
        assert rt.pending() == 0


async def test_many_concurrent_calls_with_a_raising_sink_all_answer_once_f23() -> None:
    async with run_cart() as cart:
        cart.audit._sink = RaisingSink()  # pyright: ignore[reportPrivateUsage]
        async with Client(mcp_server(cart.rt, name="t", version="1")) as client:
            with anyio.fail_after(20):
                results = await asyncio.gather(
                    *(client.call_tool("increment", {}) for _ in range(100))
                )
        assert [r.is_error for r in results] == [False] * 100
        assert len(cart.applied_of(Increment)) == 100
        assert len(cart.audit.entries()) == 100
