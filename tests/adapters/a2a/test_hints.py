"""What an A2A caller sees of titles and hints, and the WORKING rhythm of a waiting call
(DESIGN §10), through the official a2a-sdk client in-process."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import anyio
import httpx
from a2a.client import A2ACardResolver, ClientConfig, create_client
from a2a.types import StreamResponse, TaskState
from google.protobuf.json_format import MessageToDict

from examples.todo import runtime as todo_runtime
from foldkit_agent import Hints
from foldkit_agent.adapters.a2a import CARD_PATH, EXTENSION_URI, a2a_app
from foldkit_agent.adapters.a2a.card import hint_tags
from foldkit_agent.cli.serve import bind_socket, run_http
from foldkit_agent.edge import HttpOptions
from tests.support.a2a_lab import Finished, LabWaitAgent, lab_runtime, skill_request

BASE = "http://testserver"
INTERVAL = 0.05


async def test_each_skill_is_named_by_its_title_and_tagged_with_its_hints() -> None:
    async with todo_runtime() as rt:
        app = a2a_app(rt, name="todo", version="1", base_url=BASE)
        async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url=BASE) as hc:
            card = (await hc.get(CARD_PATH)).json()
    skills = {s["id"]: s for s in card["skills"]}
    assert skills["select_todo"]["name"] == "Select todo"
    assert skills["select_todo"]["tags"] == [
        "SelectedTodo",
        "non-destructive",
        "idempotent",
        "closed-world",
    ]
    assert skills["delete_todo"]["name"] == "Delete selected todo"
    assert skills["delete_todo"]["tags"] == ["RequestedDeleteTodo", "destructive", "closed-world"]
    (ext,) = card["capabilities"]["extensions"]
    assert ext["uri"] == EXTENSION_URI
    assert ext["params"]["skills"]["delete_todo"]["hints"] == {
        "read_only": False,
        "destructive": True,
        "idempotent": False,
        "open_world": False,
    }


def test_hint_tags_say_nothing_about_what_was_not_declared() -> None:
    assert hint_tags(Hints()) == []
    assert hint_tags(Hints(read_only=True, destructive=False, idempotent=True)) == ["read-only"]
    assert hint_tags(Hints(destructive=True, open_world=True)) == ["destructive", "open-world"]


@asynccontextmanager
async def served_a2a(rt: Any, **options: Any) -> AsyncIterator[str]:
    """``a2a_app`` on a real loopback socket (the in-process transport buffers event streams)."""
    sock = bind_socket("127.0.0.1", 0)
    origin = f"http://127.0.0.1:{sock.getsockname()[1]}"
    app = a2a_app(rt, name="lab", version="1", base_url=origin, **options)
    async with anyio.create_task_group() as tg:
        tg.start_soon(lambda: run_http(app, sock=sock))
        try:
            yield origin
        finally:
            tg.cancel_scope.cancel()
    sock.close()


async def test_a_streaming_call_gets_working_updates_until_it_completes_and_none_after() -> None:
    async with (
        lab_runtime(LabWaitAgent) as (lab, _breakable, running),
        served_a2a(lab, options=HttpOptions(progress_interval=INTERVAL)) as origin,
    ):
        async with httpx.AsyncClient(base_url=origin, timeout=10) as hc:
            card = await A2ACardResolver(hc, origin).get_agent_card()
            client = await create_client(
                card, client_config=ClientConfig(httpx_client=hc, streaming=True)
            )
            events: list[StreamResponse] = []
            beats: list[dict[str, Any]] = []
            with anyio.fail_after(20):
                async for ev in client.send_message(skill_request("wait_long", {})):
                    events.append(ev)
                    if not ev.HasField("status_update"):
                        continue
                    status = ev.status_update.status
                    if status.state == TaskState.TASK_STATE_WORKING and status.message.parts:
                        data = next(p.data for p in status.message.parts if p.HasField("data"))
                        beats.append(MessageToDict(data))
                        if len(beats) == 3:
                            running.dispatch(Finished())  # the completion arrives now
            await client.close()
    states = [e.status_update.status.state for e in events if e.HasField("status_update")]
    assert states[-1] == TaskState.TASK_STATE_COMPLETED
    assert all(s == TaskState.TASK_STATE_WORKING for s in states[:-1])  # none after the end
    assert len(beats) >= 3
    waited = [b["waited_seconds"] for b in beats]
    assert waited == sorted(set(waited))
    assert waited[:3] == [INTERVAL, 2 * INTERVAL, 3 * INTERVAL]
    assert {b["timeout_seconds"] for b in beats} == {30.0}
    first = next(
        p.text
        for e in events
        if e.HasField("status_update") and e.status_update.status.message.parts
        for p in e.status_update.status.message.parts
        if p.HasField("text")
    )
    assert first == "wait_long is waiting for Finished (up to 30 s)"
