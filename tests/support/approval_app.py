"""A small shelf application whose removals need a person's approval, and test approvers.

``remove_item`` is ``confirm=True``; ``add_item`` asks only for titles that start with
``"!"`` (a predicate); ``rename_item`` never asks. The Program host can simulate, so
approval requests carry a preview of the context projection.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel

from foldkit_agent import (
    AgentRuntime,
    Approval,
    ApprovalRequest,
    Message,
    Program,
    agent,
    message_union,
    projection,
    surface,
)


class Model(BaseModel, frozen=True):
    items: tuple[str, ...] = ()
    note: str = ""


class AddedItem(Message):
    title: str


class RemovedItem(Message):
    title: str


class RenamedItem(Message):
    title: str
    to: str


class Noted(Message):
    text: str


Msg = message_union(AddedItem, RemovedItem, RenamedItem, Noted)
App = surface.application(model=Model, message=Msg)


def update(model: Model, msg: Message) -> Any:
    match msg:
        case AddedItem(title=t):
            return model.model_copy(update={"items": (*model.items, t)})
        case RemovedItem(title=t):
            return model.model_copy(update={"items": tuple(i for i in model.items if i != t)})
        case RenamedItem(title=t, to=to):
            items = tuple(to if i == t else i for i in model.items)
            return model.model_copy(update={"items": items})
        case Noted(text=text):
            return model.model_copy(update={"note": text})
    return model


Shelf = agent.for_application(App)


def _shouting(request: Any) -> bool:
    return request.input.title.startswith("!")


Contract = Shelf.make(
    context=projection.pick(App.model.items),
    messages=Shelf.expose(
        {
            AddedItem: Shelf.variant(name="add_item", description="Add an item", confirm=_shouting),
            RemovedItem: Shelf.variant(
                name="remove_item",
                description="Remove an item from the shelf",
                available=lambda m: len(m.items) > 0,
                confirm=True,
            ),
            RenamedItem: Shelf.variant(name="rename_item", description="Rename an item"),
            Noted: Shelf.variant(name="note", description="Write the note", confirm=True),
        }
    ),
)


@asynccontextmanager
async def shelf(
    *items: str, approval_timeout: float | None = None, **bind: Any
) -> AsyncIterator[tuple[Any, AgentRuntime[Model, Any]]]:
    """Run the shelf with ``items``; yields ``(running, runtime)`` with an audit log."""
    program: Program[Model, Any] = Program(init=Model(items=items), update=update)
    async with program.run() as running:
        extra: dict[str, Any] = dict(bind)
        if approval_timeout is not None:
            extra["approval_timeout"] = approval_timeout
        rt = Shelf.bind(
            definition=Contract,
            host=running.host,
            audit=agent.audit_log(capacity=10_000),
            **extra,
        )
        try:
            yield running, rt
        finally:
            rt.close()


@asynccontextmanager
async def runtime() -> AsyncIterator[AgentRuntime[Model, Any]]:
    """The shelf as ``foldkit-agent serve tests.support.approval_app:runtime`` runs it."""
    async with shelf("milk") as (_running, rt):
        yield rt


@dataclass
class ScriptedApprover:
    """Answers every request with ``answer`` (after recording it).

    ``answer`` is an :class:`Approval`, or a callable ``(request) -> Approval`` / raising.
    """

    answer: Approval | Callable[[ApprovalRequest], Any]
    requests: list[ApprovalRequest] = field(default_factory=lambda: [])

    async def __call__(self, request: ApprovalRequest) -> Approval:
        self.requests.append(request)
        if isinstance(self.answer, Approval):
            return self.answer
        return self.answer(request)


@dataclass
class HeldApprover:
    """Holds each request until the test answers it: ``asked`` is set once a request arrives.

    ``cancelled`` counts approver calls that were cancelled while waiting.
    """

    requests: list[ApprovalRequest] = field(default_factory=lambda: [])
    futures: list[asyncio.Future[Approval]] = field(default_factory=lambda: [])
    asked: asyncio.Event = field(default_factory=asyncio.Event)
    cancelled: int = 0

    async def __call__(self, request: ApprovalRequest) -> Approval:
        fut: asyncio.Future[Approval] = asyncio.get_running_loop().create_future()
        self.requests.append(request)
        self.futures.append(fut)
        self.asked.set()
        try:
            return await fut
        except asyncio.CancelledError:
            self.cancelled += 1
            raise
