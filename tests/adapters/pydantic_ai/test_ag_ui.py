"""The AG-UI app: a pydantic-ai run streamed as AG-UI events, the context as shared state."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from typing import Any

import httpx
import jsonpatch  # pyright: ignore[reportMissingTypeStubs]
from pydantic_ai import Agent
from pydantic_ai.messages import ModelMessage, ToolReturnPart
from pydantic_ai.models.function import AgentInfo, DeltaToolCall, DeltaToolCalls, FunctionModel

from examples.todo import User, run_todo
from foldkit_agent.adapters.pydantic_ai.ag_ui import ag_ui_app
from tests.support.inproc import run_notes

ALICE = User(id="alice", can_delete=True)


def script(name: str, args: dict[str, Any], seen: list[str] | None = None) -> FunctionModel:
    """A streamed model that calls one tool, then says how it went (each tool return's
    content kept in ``seen``)."""

    async def stream(
        messages: list[ModelMessage], info: AgentInfo
    ) -> AsyncIterator[str | DeltaToolCalls]:
        returns = [p for p in getattr(messages[-1], "parts", []) if isinstance(p, ToolReturnPart)]
        if not returns:
            yield {0: DeltaToolCall(name=name, json_args=json.dumps(args), tool_call_id="call-1")}
        else:
            if seen is not None:
                seen.extend(str(r.content) for r in returns)
            yield f"done: {returns[0].outcome}"

    return FunctionModel(stream_function=stream)


def run_input(**extra: Any) -> dict[str, Any]:
    return {
        "threadId": "t1",
        "runId": "r1",
        "state": {"notes": ["written by the front end"]},
        "messages": [{"id": "m1", "role": "user", "content": "go"}],
        "tools": [],
        "context": [],
        "forwardedProps": {},
        **extra,
    }


async def events(app: Any, body: dict[str, Any]) -> list[dict[str, Any]]:
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1") as client:
        got = await client.post("/", json=body, headers={"accept": "text/event-stream"})
    assert got.status_code == 200, got.text
    return [json.loads(line[5:]) for line in got.text.splitlines() if line.startswith("data:")]


async def test_a_run_streams_the_context_as_a_snapshot_then_a_json_patch_of_each_change() -> None:
    async with run_notes() as (running, rt, _sent):
        copilot = Agent(script("add_note", {"text": "eggs"}))
        got = await events(ag_ui_app(rt, copilot, credentials="alice"), run_input())
        await running.settled()
        types = [e["type"] for e in got]
        assert types[:2] == ["RUN_STARTED", "STATE_SNAPSHOT"]
        assert types[-1] == "RUN_FINISHED"
        snapshot = got[1]["snapshot"]
        assert snapshot == {"notes": ["buy milk", "call mom"]}
        (delta,) = [e for e in got if e["type"] == "STATE_DELTA"]
        assert types.index("STATE_DELTA") > types.index("TOOL_CALL_RESULT")
        applied = jsonpatch.apply_patch(snapshot, delta["delta"])  # pyright: ignore[reportUnknownMemberType]
        assert applied == rt.context() == {"notes": ["buy milk", "call mom", "eggs"]}
        (entry,) = rt.audit.entries()
        assert (entry.transport, entry.capability) == ("ag-ui", "add_note")
        assert entry.principal == "alice"


async def test_state_the_front_end_sends_is_never_written_to_the_model() -> None:
    async with run_notes() as (running, rt, sent):
        copilot = Agent(script("no_such_tool", {}))
        got = await events(ag_ui_app(rt, copilot), run_input())
        assert running.host.model().notes == ("buy milk", "call mom")
        assert sent == []
        assert [e for e in got if e["type"] == "STATE_DELTA"] == []


def resumed(answer: dict[str, Any]) -> dict[str, Any]:
    """The run input that answers the interrupt of ``remove_note(index=0)`` with ``answer``,
    with the conversation as the front end holds it."""
    call = {
        "id": "call-1",
        "type": "function",
        "function": {"name": "remove_note", "arguments": json.dumps({"index": 0})},
    }
    return run_input(
        runId="r2",
        messages=[
            {"id": "m1", "role": "user", "content": "go"},
            {"id": "m2", "role": "assistant", "toolCalls": [call]},
        ],
        resume=[{"interruptId": "int-call-1", "status": "resolved", "payload": answer}],
    )


async def test_a_confirm_call_ends_the_run_in_an_interrupt_showing_the_request() -> None:
    async with run_notes() as (_running, rt, sent):
        app = ag_ui_app(rt, Agent(script("remove_note", {"index": 0})))
        finished = (await events(app, run_input()))[-1]
        assert finished["type"] == "RUN_FINISHED"
        (interrupt,) = finished["outcome"]["interrupts"]
        asked = interrupt["metadata"]
        assert (asked["capability"], asked["preview"]) == (
            "remove_note",
            [{"op": "remove", "path": "/notes/0"}],
        )
        assert "Nothing is sent unless you approve." in asked["text"]
        assert sent == []
        assert rt.audit.entries() == []  # still waiting for the person


async def test_an_approved_interrupt_sends_the_message_once_and_the_delta_shows_it() -> None:
    async with run_notes() as (running, rt, sent):
        app = ag_ui_app(rt, Agent(script("remove_note", {"index": 0})))
        await events(app, run_input())
        got = await events(app, resumed({"approved": True}))
        await running.settled()
        assert [type(m).__name__ for m in sent] == ["RemovedNote"]
        snapshot = next(e["snapshot"] for e in got if e["type"] == "STATE_SNAPSHOT")
        (delta,) = [e["delta"] for e in got if e["type"] == "STATE_DELTA"]
        assert jsonpatch.apply_patch(snapshot, delta) == {"notes": ["call mom"]}  # pyright: ignore[reportUnknownMemberType]
        (entry,) = rt.audit.entries()
        assert (entry.capability, entry.decision, entry.approval) == (
            "remove_note",
            "dispatched",
            "approved",
        )


async def test_a_declined_interrupt_sends_nothing_and_the_reason_reaches_the_model() -> None:
    async with run_notes() as (_running, rt, sent):
        seen: list[str] = []
        app = ag_ui_app(rt, Agent(script("remove_note", {"index": 0}, seen)))
        await events(app, run_input())
        got = await events(app, resumed({"approved": False, "reason": "keep the milk"}))
        assert sent == []
        assert [e for e in got if e["type"] == "STATE_DELTA"] == []
        assert any("keep the milk" in text for text in seen)
        (entry,) = rt.audit.entries()
        assert (entry.decision, entry.approval) == ("refused", "declined")


async def test_the_credentials_of_each_run_come_from_its_request_never_from_the_run_input() -> None:
    async with run_notes() as (_running, rt, _sent):
        app = ag_ui_app(
            rt,
            Agent(script("add_note", {"text": "eggs"})),
            credentials_of=lambda request: request.headers.get("x-signed-in"),
        )
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1") as client:
            body = run_input(forwardedProps={"principal": "mallory"})
            got = await client.post("/", json=body, headers={"x-signed-in": "bob"})
        assert got.status_code == 200
        (entry,) = rt.audit.entries()
        assert entry.principal == "bob"


class StuckStore:
    """A todo store whose ``create`` never finishes until released: a call waits on it."""

    def __init__(self) -> None:
        self.creating = asyncio.Event()
        self.release = asyncio.Event()

    async def load(self) -> tuple[Any, ...]:
        return ()

    async def create(self, todo: Any) -> bool:
        self.creating.set()
        await self.release.wait()
        return True

    async def save(self, todo: Any) -> None:
        return None

    async def delete(self, todo_id: str) -> None:
        return None

    async def close(self) -> None:
        self.release.set()


async def test_a_run_the_front_end_abandons_ends_and_its_call_is_audited_once() -> None:
    store = StuckStore()
    async with run_todo(store=store) as (_running, rt):
        app = ag_ui_app(rt, Agent(script("create_todo", {"title": "Milk"})), credentials=ALICE)
        started = asyncio.Event()
        gone = asyncio.Event()
        body = json.dumps(run_input()).encode()
        first = True

        async def receive() -> dict[str, Any]:
            nonlocal first
            if first:
                first = False
                return {"type": "http.request", "body": body, "more_body": False}
            await gone.wait()  # the front end closes its connection once the call waits
            return {"type": "http.disconnect"}

        async def send(message: dict[str, Any]) -> None:
            if message["type"] == "http.response.start":
                started.set()

        scope = {
            "type": "http",
            "method": "POST",
            "path": "/",
            "root_path": "",
            "scheme": "http",
            "query_string": b"",
            "server": ("127.0.0.1", 80),
            "client": ("127.0.0.1", 5000),
            "headers": [(b"host", b"127.0.0.1"), (b"content-type", b"application/json")],
        }
        served = asyncio.ensure_future(app(scope, receive, send))
        await store.creating.wait()
        gone.set()
        await served
        assert started.is_set()
        (entry,) = rt.audit.entries()
        assert (entry.capability, entry.decision) == ("create_todo", "unknown")
        assert entry.outcome == "AgentCancelledError"
