"""Stateful property test: application Messages and agent invocations, interleaved.

Invariants after every step:
* the listed capabilities equal the set the predicates compute from the current Model;
* only Messages that passed the five steps reach ``update`` (the application's own Messages
  aside), and each accepted invocation reaches it exactly once;
* one audit entry per invocation;
* nothing is left pending.
"""

from __future__ import annotations

import asyncio
from typing import Any

from hypothesis import settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, rule
from pydantic import BaseModel

from foldkit_agent import (
    AgentError,
    Invocation,
    Message,
    Program,
    agent,
    message_union,
    projection,
    surface,
)

# MODEL


class Model(BaseModel, frozen=True):
    items: tuple[str, ...] = ()
    locked: bool = False
    checked_out: int = 0


# MESSAGE


class AddedItem(Message):
    item: str


class RemovedItem(Message):
    item: str


class RequestedCheckout(Message):
    request_id: str | None = None


class CheckedOut(Message):
    request_id: str | None = None


class Locked(Message):
    pass


class Unlocked(Message):
    pass


Msg = message_union(AddedItem, RemovedItem, RequestedCheckout, CheckedOut, Locked, Unlocked)
App = surface.application(model=Model, message=Msg)


# UPDATE


def update(model: Model, msg: Message) -> Any:
    match msg:
        case AddedItem(item=i):
            return model.model_copy(update={"items": (*model.items, i)})
        case RemovedItem(item=i):
            return model.model_copy(update={"items": tuple(x for x in model.items if x != i)})
        case RequestedCheckout(request_id=rid):

            async def confirm() -> Message:
                return CheckedOut(request_id=rid)

            return model, [confirm]
        case CheckedOut():
            return model.model_copy(update={"checked_out": model.checked_out + 1, "items": ()})
        case Locked():
            return model.model_copy(update={"locked": True})
        case Unlocked():
            return model.model_copy(update={"locked": False})
    return model


class NoInput(BaseModel):
    pass


PREDICATES = {
    "added_item": lambda m: not m.locked,
    "removed_item": lambda m: len(m.items) > 0,
    "checkout": lambda m: len(m.items) > 0 and not m.locked,
    "locked": lambda m: not m.locked,
}

Contract = agent.make(
    context=projection.pick(App.model.items),
    messages=agent.expose(
        Msg,
        {
            AddedItem: agent.variant(description="Add", available=PREDICATES["added_item"]),
            RemovedItem: agent.variant(
                description="Remove",
                available=PREDICATES["removed_item"],
                authorize=lambda r: r.principal == "owner" or agent.Deny("owner only"),
            ),
            RequestedCheckout: agent.variant(
                name="checkout",
                description="Check out",
                available=PREDICATES["checkout"],
                input=NoInput,
                to_message=lambda _, ctx: RequestedCheckout(request_id=ctx.invocation.id),
                completion=agent.Completion(
                    success=CheckedOut, correlate=agent.by_invocation_id("request_id"), timeout=5
                ),
            ),
            Locked: agent.variant(description="Lock", available=PREDICATES["locked"]),
        },
    ),
)

names = st.sampled_from(["added_item", "removed_item", "checkout", "locked", "nope"])
payloads = st.one_of(
    st.fixed_dictionaries({"item": st.sampled_from(["a", "b"])}),
    st.just({}),
    st.just({"item": 5}),
    st.just({"item": "a", "extra": True}),
    st.just([]),
)
principals = st.sampled_from([None, "owner", "guest"])


class AgentAndApplication(RuleBasedStateMachine):
    def __init__(self) -> None:
        super().__init__()
        self.loop = asyncio.new_event_loop()
        self.program = Program(init=Model(), update=update)
        self.cm = self.program.run()
        self.running = self.loop.run_until_complete(self.cm.__aenter__())
        self.audit = agent.audit_log(capacity=100_000)
        self.rt = agent.bind(
            definition=Contract,
            host=self.running.host,
            audit=self.audit,
            principal=lambda inv: inv.credentials,
        )
        self.seen: list[Message] = []
        self.running.host.observe(self.seen.append)
        self.invocations = 0
        self.accepted = 0
        self.app_messages = 0

    def teardown(self) -> None:
        self.loop.run_until_complete(self.cm.__aexit__(None, None, None))
        self.loop.close()

    def run(self, coro: Any) -> Any:
        return self.loop.run_until_complete(coro)

    @rule(item=st.sampled_from(["a", "b", "c"]))
    def application_adds(self, item: str) -> None:
        self.running.dispatch(AddedItem(item=item))
        self.app_messages += 1

    @rule(locked=st.booleans())
    def application_toggles_the_lock(self, locked: bool) -> None:
        self.running.dispatch(Locked() if locked else Unlocked())
        self.app_messages += 1

    @rule(name=names, payload=payloads, who=principals)
    def agent_invokes(self, name: str, payload: Any, who: str | None) -> None:
        self.invocations += 1
        before = len(self.seen)

        async def call() -> Any:
            try:
                return await self.rt.messages.dispatch_unknown(
                    name, payload, Invocation(credentials=who)
                )
            except AgentError as err:
                return err

        outcome = self.run(call())
        if not isinstance(outcome, AgentError):
            self.accepted += 1
            assert outcome.message in self.seen[before:]
        else:
            assert outcome.tag in {
                "AgentUnknownCapabilityError",
                "AgentCapabilityUnavailableError",
                "AgentInvalidInputError",
                "AgentAuthorizationError",
            }
            assert len(self.seen) == before  # a refusal sends nothing

    @rule()
    def agent_cancels_a_checkout_while_waiting(self) -> None:
        self.invocations += 1

        async def call() -> Any:
            signal = asyncio.Event()
            task = asyncio.ensure_future(
                self.rt.messages.dispatch_unknown("checkout", {}, Invocation(signal=signal))
            )
            await asyncio.sleep(0)
            signal.set()
            try:
                return await task
            except AgentError as err:
                return err

        outcome = self.run(call())
        if not isinstance(outcome, AgentError):
            self.accepted += 1
        self.run(self.running.settled())

    @rule()
    def settle(self) -> None:
        self.run(self.running.settled())

    @invariant()
    def listed_equals_the_predicates(self) -> None:
        model = self.running.model()
        expected = [n for n, p in PREDICATES.items() if p(model)]
        assert [c.name for c in self.rt.messages.available()] == expected

    @invariant()
    def one_audit_entry_per_invocation(self) -> None:
        assert len(self.audit.entries()) == self.invocations

    @invariant()
    def nothing_left_pending(self) -> None:
        assert self.rt.pending() == 0

    @invariant()
    def only_validated_messages_reached_update(self) -> None:
        sent_by_agent = sum(1 for e in self.audit.entries() if e.decision != "refused")
        results = [m for m in self.seen if isinstance(m, CheckedOut)]
        requests = [m for m in self.seen if isinstance(m, RequestedCheckout)]
        # Every Message update saw is the application's own, a command's result, or one that
        # an invocation sent after passing all five steps: nothing else got through.
        assert len(self.seen) - len(results) == self.app_messages + sent_by_agent
        assert len(results) <= len(requests)
        assert sent_by_agent >= self.accepted


AgentAndApplication.TestCase.settings = settings(
    max_examples=40, stateful_step_count=30, deadline=None
)
test_agent_and_application = AgentAndApplication.TestCase
