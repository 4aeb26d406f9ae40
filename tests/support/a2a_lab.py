"""Shared pieces for the A2A tests: an auth backend, a small lab app, request helpers and an
in-process SDK client."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import httpx
from a2a.auth.user import User
from a2a.client import A2ACardResolver, ClientConfig, create_client
from a2a.server.context import ServerCallContext
from pydantic import BaseModel
from starlette.authentication import (
    AuthCredentials,
    AuthenticationBackend,
    AuthenticationError,
    SimpleUser,
)
from starlette.requests import HTTPConnection

from foldkit_agent import AgentRuntime, Host, Message, Program, agent, message_union, surface
from foldkit_agent.adapters.a2a import EXTENSION_URI, KEY_FIELD

TOKENS: dict[str, tuple[str, list[str]]] = {
    "alice-tok": ("alice", ["todos:delete"]),
    "bob-tok": ("bob", []),
}


class BearerBackend(AuthenticationBackend):
    """``Authorization: Bearer <token>`` from :data:`TOKENS`; no header means anonymous."""

    async def authenticate(self, conn: HTTPConnection) -> tuple[AuthCredentials, SimpleUser] | None:
        header = conn.headers.get("authorization", "")
        if not header:
            return None
        token = header.removeprefix("Bearer ").strip()
        if token not in TOKENS:
            raise AuthenticationError("unknown token " + token)
        name, scopes = TOKENS[token]
        return AuthCredentials(scopes), SimpleUser(name)


# A small lab application: integers at several depths, a completion that never arrives, and a
# host that can be told to break.


class Item(BaseModel, frozen=True):
    qty: int
    label: str = ""


class LabModel(BaseModel, frozen=True):
    total: int = 0
    last: dict[str, Any] | None = None


class Added(Message):
    by: int
    factor: float | None = None
    sizes: tuple[int, ...] = ()
    items: tuple[Item, ...] = ()
    code: str | None = None


class Waited(Message):
    seconds: float = 0


class Finished(Message):
    pass


LabMsg = message_union(Added, Waited, Finished)
LabApp = surface.application(model=LabModel, message=LabMsg)


def lab_update(model: LabModel, msg: Message) -> LabModel:
    match msg:
        case Added(by=by):
            return model.model_copy(update={"total": model.total + by, "last": msg.encode()})
        case _:
            return model


_lab = agent.for_application(LabApp)
LabAgent = _lab.make(
    messages=_lab.expose(
        LabMsg,
        {
            Added: "Add to the total",
            Waited: _lab.variant(
                name="wait_quick",
                description="Waits for a completion that never comes, briefly",
                completion=agent.Completion(success=Finished, timeout=0.05),
            ),
        },
    ),
)
LabWaitAgent = _lab.make(
    messages=_lab.expose(
        LabMsg,
        {
            Waited: _lab.variant(
                name="wait_long",
                description="Waits for a completion that never comes",
                completion=agent.Completion(success=Finished, timeout=30.0),
            ),
        },
    ),
)


class BreakableHost:
    """Delegates to a running Program's host; ``broken=True`` makes ``model()`` raise."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.broken = False

    def as_host(self) -> Any:
        return Host(
            model=self._model,
            dispatch=self.inner.dispatch,
            subscribe=self.inner.subscribe,
            observe=self.inner.observe,
        )

    def _model(self) -> Any:
        if self.broken:
            raise RuntimeError("secret-detail-4711 in /srv/app/model.py")
        return self.inner.model()


@asynccontextmanager
async def lab_runtime(
    definition: Any = LabAgent,
) -> AsyncIterator[tuple[AgentRuntime[Any, Any], BreakableHost, Any]]:
    program: Program[LabModel, Any] = Program(init=LabModel(), update=lab_update)
    async with program.run() as running:
        breakable = BreakableHost(running.host)
        rt = agent.bind(
            definition=definition, host=breakable.as_host(), audit=agent.audit_log(capacity=100)
        )
        try:
            yield rt, breakable, running
        finally:
            rt.close()


def skill_request(
    skill: str | None, args: Any = None, *, where: str = "request", key: Any = None
) -> Any:
    """A ``SendMessageRequest`` naming ``skill`` in request (or message) metadata, with the
    idempotency ``key`` beside it when given."""
    from a2a.helpers import new_data_part
    from a2a.types import Message as A2AMessage
    from a2a.types import Role, SendMessageRequest

    parts = [] if args is None else [new_data_part(args)]
    msg = A2AMessage(
        role=Role.ROLE_USER, message_id=str(uuid.uuid4()), parts=parts, extensions=[EXTENSION_URI]
    )
    entry: dict[str, Any] = {"skill": skill} if key is None else {"skill": skill, KEY_FIELD: key}
    if skill is not None and where == "message":
        msg.metadata.update({EXTENSION_URI: entry})
    req = SendMessageRequest(message=msg)
    if skill is not None and where == "request":
        req.metadata.update({EXTENSION_URI: entry})
    return req


class NamedUser(User):
    """An authenticated A2A user called ``name`` (what a task store scopes tasks by)."""

    def __init__(self, name: str) -> None:
        self.name = name

    @property
    def is_authenticated(self) -> bool:
        return True

    @property
    def user_name(self) -> str:
        return self.name


def call_context(user: str) -> ServerCallContext:
    """An SDK call context of the authenticated ``user``, as a task store is given one."""
    return ServerCallContext(user=NamedUser(user))


BASE = "http://testserver"
"""The origin the in-process A2A tests address (``httpx.ASGITransport``)."""


@asynccontextmanager
async def a2a_client(
    app: Any, token: str | None = None, *, streaming: bool = False
) -> AsyncIterator[Any]:
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    async with (
        httpx.AsyncClient(
            transport=httpx.ASGITransport(app=app), base_url=BASE, headers=headers
        ) as hc,
        card_client(hc, BASE, streaming=streaming) as client,
    ):
        yield client


@asynccontextmanager
async def card_client(hc: Any, origin: str, *, streaming: bool = False) -> AsyncIterator[Any]:
    """The official A2A SDK client built from the public card at ``origin``, over ``hc``."""
    card = await A2ACardResolver(hc, origin).get_agent_card()
    client = await create_client(
        card, client_config=ClientConfig(httpx_client=hc, streaming=streaming)
    )
    try:
        yield client
    finally:
        await client.close()
