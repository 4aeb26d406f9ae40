"""The todo app behind the shared JSON surface, with sessions, CSRF and a service caller."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any

import anyio
import anyio.lowlevel
import httpx
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.routing import Mount

from examples.todo import Model, User, run_todo
from foldkit_agent import AgentRuntime, AuditLog, Running
from foldkit_agent.adapters.web.surface import (
    CSRF_HEADER,
    PRINCIPAL_HEADER,
    CsrfTokens,
    agent_surface,
    service_caller,
)

BASE = "http://127.0.0.1:8000"
SESSIONS = {"s-demo": User(id="demo", can_delete=True), "s-guest": User(id="guest")}
SERVICE_TOKEN = "service-secret-token"
SECRET = b"0123456789abcdef-test"
CSRF = CsrfTokens(SECRET)


def session_of(request: Request) -> str | None:
    sid = request.cookies.get("todo_session")
    return sid if sid in SESSIONS else None


def credentials_of(request: Request) -> User | None:
    service = service_caller(request)
    if service is not None:
        asserted = request.headers.get(PRINCIPAL_HEADER)
        return User(id=f"{service}:{asserted}", can_delete=True) if asserted else None
    if request.headers.get("x-test-explode"):
        raise RuntimeError("session store down")
    sid = session_of(request)
    return SESSIONS.get(sid) if sid else None


def service_auth(token: str) -> str | None:
    return "native-server" if token == SERVICE_TOKEN else None


@dataclass
class Env:
    running: Running[Model, Any]
    rt: AgentRuntime[Model, Any]
    audit: AuditLog
    app: Starlette
    client: httpx.AsyncClient

    def token(self, sid: str = "s-demo") -> str:
        return CSRF.token_for(sid)

    async def invoke(
        self,
        name: str,
        body: Any = None,
        *,
        sid: str | None = "s-demo",
        token: str | None = "auto",
        headers: dict[str, str] | None = None,
        content: bytes | None = None,
    ) -> httpx.Response:
        h = {"content-type": "application/json"}
        if token == "auto" and sid is not None:
            token = self.token(sid)
        if token is not None and token != "auto":
            h[CSRF_HEADER] = token
        h.update(headers or {})
        self.client.cookies.clear()
        if sid:
            self.client.cookies.set("todo_session", sid)
        data = content if content is not None else json.dumps({} if body is None else body).encode()
        return await self.client.post(f"/agent/invoke/{name}", content=data, headers=h)

    async def answer_of(self, waiting: httpx.Response, sid: str = "s-demo") -> dict[str, Any]:
        """The own answer of the call ``invoke`` parked for the person (``waiting``, its 202),
        once it has one (polled through the public route, as the bridge does)."""
        assert waiting.status_code == 202, waiting.text
        key = waiting.json()["structuredContent"]["call"]
        cookie = {"cookie": f"todo_session={sid}"}
        with anyio.fail_after(10):
            while (
                got := await self.client.get(f"/agent/calls/{key}", headers=cookie)
            ).status_code == 202:
                await anyio.lowlevel.checkpoint()
        return got.json()

    async def answer_approval(self, approve: bool, sid: str = "s-demo") -> dict[str, Any]:
        """The person of session ``sid`` answers the one call waiting for their approval."""
        cookie = {"cookie": f"todo_session={sid}"}
        with anyio.fail_after(10):
            while True:  # until the invoke has reached its confirm step
                got = await self.client.get("/agent/approvals", headers=cookie)
                if listed := got.json()["approvals"]:
                    break
                await anyio.lowlevel.checkpoint()
        (request,) = listed
        headers = {**cookie, CSRF_HEADER: self.token(sid), "origin": BASE}
        answered = await self.client.post(
            f"/agent/approvals/{request['id']}", json={"approve": approve}, headers=headers
        )
        assert answered.status_code == 200, answered.text
        return request


@asynccontextmanager
async def environment(**kwargs: Any) -> AsyncIterator[Env]:
    from foldkit_agent import agent

    audit = agent.audit_log(capacity=100, record_principal=lambda u: u.id)
    async with run_todo(audit=audit) as (running, rt):
        surface = agent_surface(
            rt,
            credentials_of=credentials_of,
            session_of=session_of,
            service_auth=service_auth,
            csrf_secret=SECRET,
            **kwargs,
        )
        app = Starlette(routes=[Mount("/agent", app=surface)])
        async with httpx.AsyncClient(
            transport=httpx.ASGITransport(app=app), base_url=BASE
        ) as client:
            yield Env(running, rt, audit, app, client)


async def next_event(lines: AsyncIterator[str]) -> tuple[str, dict[str, Any]]:
    """The next server-sent event of ``lines``: its name and its JSON data."""
    event, data = "message", ""
    async for line in lines:
        if line.startswith("event:"):
            event = line.split(":", 1)[1].strip()
        elif line.startswith("data:"):
            data += line.split(":", 1)[1].strip()
        elif line == "" and data:
            return event, json.loads(data)
    raise AssertionError("the stream ended")
