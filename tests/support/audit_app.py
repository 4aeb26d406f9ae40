"""A small application for the audit, tracing and sink tests: one capability per refusal kind."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

from pydantic import BaseModel

from foldkit_agent import (
    AgentRuntime,
    AuditEntry,
    AuditLog,
    Invocation,
    Message,
    agent,
    message_union,
    surface,
)


class Model(BaseModel, frozen=True):
    count: int = 0
    open: bool = True
    secret: str = "model-secret-7f3a"


class Credential(BaseModel, frozen=True):
    token: str
    label: str


class Increment(Message):
    by: int


class Closed(Message):
    pass


class Login(Message):
    user: str
    password: str
    credentials: tuple[Credential, ...] = ()
    extra: dict[str, str] = {}


class Delete(Message):
    pass


class Wait(Message):
    key: str


class Done(Message):
    key: str


class Failed(Message):
    key: str


class Broken(Message):
    pass


class Fragile(Message):
    pass


Msg = message_union(Increment, Closed, Login, Delete, Wait, Done, Failed, Broken, Fragile)
App = surface.application(model=Model, message=Msg, initial=Model())
B = agent.for_application(App)


def _explode(_model: Model) -> bool:
    raise KeyError("boom")


Definition = B.make(
    messages=B.expose(
        Msg,
        {
            Increment: "Add to the counter",
            Closed: B.variant(description="Only while closed", available=lambda m: not m.open),
            Login: "Log in (the input carries secrets)",
            Delete: B.variant(
                description="Needs an admin",
                authorize=lambda req: req.principal == "admin" or agent.Deny("admins only"),
            ),
            Wait: B.variant(
                description="Completes on Done, fails on Failed",
                completion=agent.Completion(
                    success=Done,
                    failure=Failed,
                    correlate=lambda req, res, _call: req.key == res.key,
                    timeout=0.05,
                ),
            ),
            Broken: "The host refuses this one",
            Fragile: B.variant(description="Its predicate raises (F20)", available=_explode),
        },
    )
)


class TestHost:
    """A host over a fixed Model; ``Broken`` raises, ``Wait`` answers per ``answers``."""

    __test__ = False

    def __init__(self) -> None:
        self.current = Model()
        self.dispatched: list[Message] = []
        self.model_reads = 0
        self.answers: dict[str, type[Message] | None] = {}
        self.sent: asyncio.Event | None = None  # set on every accepted dispatch
        self._observers: list[Callable[[Any], None]] = []

    def model(self) -> Model:
        self.model_reads += 1
        return self.current

    def dispatch(self, message: Message) -> None:
        if isinstance(message, Broken):
            raise RuntimeError("host exploded")
        self.dispatched.append(message)
        if self.sent is not None:
            self.sent.set()
        if isinstance(message, Wait):
            answer = self.answers.get(message.key, Done)
            if answer is not None:
                reply = answer(key=message.key)
                asyncio.get_running_loop().call_soon(self._emit, reply)

    def _emit(self, message: Message) -> None:
        for cb in list(self._observers):
            cb(message)

    def observe(self, cb: Callable[[Any], None]) -> Callable[[], None]:
        self._observers.append(cb)
        return lambda: self._observers.remove(cb)


def principal(inv: Invocation) -> Any:
    return inv.credentials


def bind(audit: AuditLog | None) -> tuple[TestHost, AgentRuntime[Model, Any]]:
    host = TestHost()
    rt = B.bind(definition=Definition, host=host, audit=audit, principal=principal)
    return host, rt


def record(audit: AuditLog, inv: str, *, capability: str = "c", **kw: Any) -> AuditEntry:
    """``audit.record`` one dispatched entry for ``inv``, with ``kw`` overriding its fields."""
    fields: dict[str, Any] = {
        "transport": "in-app",
        "tag": "T",
        "principal": None,
        "decision": "dispatched",
        "outcome": "ok",
    }
    fields.update(kw)
    return audit.record(invocation_id=inv, capability=capability, **fields)
