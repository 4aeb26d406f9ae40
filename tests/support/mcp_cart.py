"""A tiny cart application for the MCP adapter tests (F01, F02, F03, F15, F23).

Written only against foldkit_agent's public API: Model, Messages, update on Program, and a
contract exposing a few of the Messages.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel

from foldkit_agent import (
    AgentRuntime,
    AuditLog,
    Invocation,
    Message,
    Program,
    agent,
    message_union,
    projection,
    surface,
)


class Model(BaseModel, frozen=True):
    items: tuple[str, ...] = ()
    count: int = 0
    marker: int = 0
    hidden: int = 0


class AddedItem(Message):
    item: str


class RemovedItem(Message):
    item: str


class Ticked(Message):
    """Changes nothing an agent can see."""


class Marked(Message):
    """Changes only the ``marker`` resource: a sentinel that ends a notification sequence."""


class RequestedCheckout(Message):
    pass


class Increment(Message):
    pass


class RequestedPay(Message):
    amount: int
    request_id: str | None = None


class Paid(Message):
    request_id: str | None = None


class PaymentFailed(Message):
    request_id: str | None = None


class RequestedWait(Message):
    request_id: str | None = None


class Waited(Message):
    request_id: str | None = None


class RequestedReset(Message):
    pass


CartMessage = message_union(
    AddedItem,
    RemovedItem,
    Ticked,
    Marked,
    RequestedCheckout,
    Increment,
    RequestedPay,
    Paid,
    PaymentFailed,
    RequestedWait,
    Waited,
    RequestedReset,
)


def update(model: Model, message: Message) -> Any:
    match message:
        case AddedItem(item=item):
            return model.model_copy(update={"items": (*model.items, item)})
        case RemovedItem(item=item):
            items = list(model.items)
            if item in items:
                items.remove(item)
            return model.model_copy(update={"items": tuple(items)})
        case Ticked():
            return model.model_copy(update={"hidden": model.hidden + 1})
        case Marked():
            return model.model_copy(update={"marker": model.marker + 1})
        case RequestedCheckout():
            return model.model_copy(update={"items": ()})
        case Increment():
            return model.model_copy(update={"count": model.count + 1})
        case RequestedPay(amount=amount, request_id=rid):

            async def pay() -> Message:
                await asyncio.sleep(0)
                return Paid(request_id=rid) if amount <= 100 else PaymentFailed(request_id=rid)

            return model, [pay]
        case _:
            return model


App = surface.application(model=Model, message=CartMessage, initial=Model(), update=update)
Cart = agent.for_application(App)


class PayInput(BaseModel):
    amount: int


class NoInput(BaseModel):
    pass


@dataclass(frozen=True)
class Caller:
    id: str
    scopes: tuple[str, ...] = ()


def principal(invocation: Invocation) -> Caller | None:
    creds = invocation.credentials
    if isinstance(creds, Caller):
        return creds
    subject = getattr(creds, "subject", None)
    if not isinstance(subject, str):
        return None
    return Caller(subject, tuple(getattr(creds, "scopes", ()) or ()))


def _admin(request: Any) -> Any:
    who: Caller | None = request.principal
    if who is None:
        return agent.Deny("sign in first")
    if "cart:admin" not in who.scopes:
        return agent.Deny(f"{who.id} is not a cart admin")
    return True


Definition = Cart.make(
    context=projection.pick(App.model.items, App.model.count),
    messages=Cart.expose(
        CartMessage,
        {
            RequestedCheckout: Cart.variant(
                name="checkout",
                description="Check out the cart",
                available=lambda m: len(m.items) > 0,
            ),
            Increment: Cart.variant(name="increment", description="Add one to the counter"),
            RequestedPay: Cart.variant(
                name="pay",
                description="Pay; amounts over 100 fail",
                input=PayInput,
                to_message=lambda inp, ctx: RequestedPay(
                    amount=inp.amount, request_id=ctx.invocation.id
                ),
                completion=agent.Completion(
                    success=Paid,
                    failure=PaymentFailed,
                    correlate=agent.by_invocation_id("request_id"),
                    timeout=5.0,
                ),
            ),
            RequestedWait: Cart.variant(
                name="wait_briefly",
                description="Waits for a result that never comes (times out)",
                input=NoInput,
                to_message=lambda _i, ctx: RequestedWait(request_id=ctx.invocation.id),
                completion=agent.Completion(
                    success=Waited, correlate=agent.by_invocation_id("request_id"), timeout=0.05
                ),
            ),
            RequestedReset: Cart.variant(name="reset", description="Admins only", authorize=_admin),
        },
    ),
    resources=[
        Cart.resource(
            "marker", description="A test sentinel", projection=projection.pick(App.model.marker)
        ),
    ],
)

LongWait = Cart.make(
    messages=Cart.expose(
        CartMessage,
        {
            RequestedWait: Cart.variant(
                name="wait_long",
                description="Waits up to 30 s for a result that never comes",
                input=NoInput,
                to_message=lambda _i, ctx: RequestedWait(request_id=ctx.invocation.id),
                completion=agent.Completion(
                    success=Waited, correlate=agent.by_invocation_id("request_id"), timeout=30
                ),
            ),
        },
    ),
)


@dataclass
class CartApp:
    running: Any
    rt: AgentRuntime[Any, Any]
    audit: AuditLog
    applied: list[Message] = field(default_factory=list[Message])
    recorded: asyncio.Event = field(default_factory=asyncio.Event)

    def dispatch(self, message: Message) -> None:
        self.running.dispatch(message)

    def applied_of(self, kind: type[Message]) -> list[Message]:
        return [m for m in self.applied if isinstance(m, kind)]


@asynccontextmanager
async def run_cart(definition: Any = Definition) -> AsyncGenerator[CartApp]:
    program: Program[Model, Any] = Program(init=Model(), update=update)
    async with program.run() as running:
        audit = agent.audit_log(capacity=100, record_principal=lambda c: getattr(c, "id", None))
        rt = Cart.bind(definition=definition, host=running.host, audit=audit, principal=principal)
        cart = CartApp(running, rt, audit)
        unobserve = running.host.observe(cart.applied.append)
        original: Callable[..., Any] = audit.note

        def note(*args: Any, **kwargs: Any) -> Any:
            out = original(*args, **kwargs)
            cart.recorded.set()
            return out

        audit.note = note  # type: ignore[method-assign]
        try:
            yield cart
        finally:
            unobserve()
            rt.close()


@asynccontextmanager
async def long_wait_runtime() -> AsyncGenerator[AgentRuntime[Any, Any]]:
    """``foldkit-agent serve tests.support.mcp_cart:long_wait_runtime``: ``wait_long`` only."""
    async with run_cart(LongWait) as cart:
        yield cart.rt
