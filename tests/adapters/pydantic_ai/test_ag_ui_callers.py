"""The AG-UI app among many callers: bearer tokens name each caller, and one caller's open
runs cannot take the runs another caller needs (served by uvicorn on a real socket)."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from typing import Any

import httpx
from pydantic_ai import Agent
from pydantic_ai.messages import ModelMessage, UserPromptPart
from pydantic_ai.models.function import AgentInfo, DeltaToolCalls, FunctionModel

from foldkit_agent.adapters.pydantic_ai.ag_ui import ag_ui_app
from foldkit_agent.edge import CallerLimits, Grant, HttpOptions, TokenTable
from tests.adapters.pydantic_ai.test_ag_ui import script
from tests.support.inproc import run_notes
from tests.support.serving import served

TOKENS = TokenTable({"alice-token": Grant("alice"), "bob-token": Grant("bob")})


class Held:
    """A model whose "wait" runs stay open until :attr:`go` is set; any other run answers."""

    def __init__(self) -> None:
        self.waiting = asyncio.Event()
        self.go = asyncio.Event()

    async def stream(
        self, messages: list[ModelMessage], info: AgentInfo
    ) -> AsyncIterator[str | DeltaToolCalls]:
        parts = getattr(messages[-1], "parts", [])
        said = next(str(p.content) for p in parts if isinstance(p, UserPromptPart))
        if said == "wait":
            self.waiting.set()
            await self.go.wait()
        yield f"you said {said}"


def run_input(text: str) -> dict[str, Any]:
    return {
        "threadId": "t1",
        "runId": "r1",
        "state": {},
        "messages": [{"id": "m1", "role": "user", "content": text}],
        "tools": [],
        "context": [],
        "forwardedProps": {},
    }


def bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}", "Accept": "text/event-stream"}


def types_of(body: str) -> list[str]:
    return [json.loads(line[5:])["type"] for line in body.splitlines() if line.startswith("data:")]


async def test_a_caller_at_its_share_of_open_runs_is_refused_while_another_caller_runs() -> None:
    model = Held()
    options = HttpOptions(tokens=TOKENS, caps=CallerLimits(streams_per_caller=1))
    async with run_notes() as (_running, rt, _sent):
        app = ag_ui_app(rt, Agent(FunctionModel(stream_function=model.stream)), options=options)
        async with served(app) as origin, httpx.AsyncClient(base_url=origin) as client:
            async with client.stream(
                "POST", "/", json=run_input("wait"), headers=bearer("alice-token")
            ) as first:
                await model.waiting.wait()
                again = await client.post("/", json=run_input("hi"), headers=bearer("alice-token"))
                bob = await client.post("/", json=run_input("hi"), headers=bearer("bob-token"))
                assert app.state.ag_ui_runs.held_by("principal:alice") == 1
                model.go.set()
                body = (await first.aread()).decode()
            after = await client.post("/", json=run_input("hi"), headers=bearer("alice-token"))
    assert again.status_code == 429
    assert again.headers["Retry-After"] == "5"
    assert again.json()["error"]["message"] == (
        "This caller already holds 1 open AG-UI runs, the most one caller may hold (per-caller "
        "cap 1). Let one of them finish (or stop one) before starting another."
    )
    assert bob.status_code == 200
    assert types_of(bob.text)[-1] == "RUN_FINISHED"
    assert types_of(body)[-1] == "RUN_FINISHED"
    assert after.status_code == 200  # her finished run gave its place back


async def test_the_runs_calls_carry_the_verified_token_as_their_credentials() -> None:
    async with run_notes() as (_running, rt, _sent):
        copilot = Agent(script("add_note", {"text": "eggs"}))
        app = ag_ui_app(rt, copilot, options=HttpOptions(tokens=TOKENS))
        async with served(app) as origin, httpx.AsyncClient(base_url=origin) as client:
            got = await client.post("/", json=run_input("go"), headers=bearer("bob-token"))
        assert got.status_code == 200
        assert rt.audit is not None
        (entry,) = rt.audit.entries()
        assert (entry.transport, entry.capability) == ("ag-ui", "add_note")
        assert entry.principal == Grant("bob")  # the notes app records its credentials as is
