"""Property tests over random plans: whatever steps a capability has and however each one
ends, a call is audited exactly once, reads the Model exactly once when its capability is
known (never when it is not), and a refusal before the send sends nothing."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pydantic import BaseModel

from foldkit_agent import (
    AgentError,
    Approval,
    InputRejected,
    Invocation,
    Message,
    agent,
    message_union,
    projection,
    surface,
)


class Model(BaseModel, frozen=True):
    open: bool = True


class Set(Message):
    qty: int


class Done(Message):
    qty: int


class Failed(Message):
    qty: int


class QtyIn(BaseModel):
    qty: int


Msg = message_union(Set, Done, Failed)
App = surface.application(model=Model, message=Msg, initial=Model(), update=lambda m, _: m)


def _raise(*_: Any) -> Any:
    raise RuntimeError("hook exploded")


def _reject(*_: Any) -> Any:
    raise InputRejected("is not in stock", path="qty")


AVAILABLE: dict[str, Callable[[Any], Any] | None] = {
    "none": None,
    "holds": lambda _m: True,
    "fails": lambda _m: False,
    "raises": _raise,
}
AUTHORIZE: dict[str, Callable[[Any], Any] | None] = {
    "none": None,
    "allows": lambda _r: True,
    "denies": lambda _r: agent.Deny("not you"),
    "raises": _raise,
}
TO_MESSAGE: dict[str, Callable[[Any, Any], Any] | None] = {
    "none": None,
    "builds": lambda inp, _ctx: Set(qty=inp.qty),
    "rejects": _reject,
    "raises": _raise,
}
RESULT = {"completed": Done, "failed": Failed, "silent": None}


class Host:
    """Answers a ``Set`` with the chosen result Message, on the next loop turn."""

    def __init__(self, result: type[Message] | None, explode: bool) -> None:
        self.result = result
        self.explode = explode
        self.model_reads = 0
        self.dispatched: list[Message] = []
        self._observers: list[Callable[[Any], None]] = []

    def model(self) -> Model:
        self.model_reads += 1
        return Model()

    def dispatch(self, message: Message) -> None:
        if self.explode:
            raise RuntimeError("host exploded")
        self.dispatched.append(message)
        if self.result is not None and isinstance(message, Set):
            reply = self.result(qty=message.qty)
            asyncio.get_running_loop().call_soon(self._emit, reply)

    def _emit(self, message: Message) -> None:
        for cb in list(self._observers):
            cb(message)

    def observe(self, cb: Callable[[Any], None]) -> Callable[[], None]:
        self._observers.append(cb)
        return lambda: self._observers.remove(cb)


plans = st.fixed_dictionaries(
    {
        "available": st.sampled_from(sorted(AVAILABLE)),
        "authorize": st.sampled_from(sorted(AUTHORIZE)),
        "to_message": st.sampled_from(sorted(TO_MESSAGE)),
        "confirm": st.sampled_from(["none", "approved", "declined", "no-approver"]),
        "completion": st.booleans(),
        "result": st.sampled_from(sorted(RESULT)),
        "explode": st.booleans(),
        "principal": st.sampled_from([None, "ann"]),
        "payload": st.sampled_from([{"qty": 1}, {"qty": "1"}, {}, [1], {"qty": 1, "x": 2}]),
        "name": st.sampled_from(["set", "set", "set", "nope"]),
    }
)


def _contract(p: dict[str, Any]) -> Any:
    to_message = TO_MESSAGE[p["to_message"]]
    variant = agent.variant(
        description="Set a quantity",
        available=AVAILABLE[p["available"]],
        authorize=AUTHORIZE[p["authorize"]],
        input=QtyIn if to_message is not None else None,
        to_message=to_message,
        confirm=True if p["confirm"] != "none" else None,
        completion=agent.Completion(success=Done, failure=Failed, timeout=0.05)
        if p["completion"]
        else None,
    )
    return agent.make(
        context=projection.pick(App.model.open), messages=agent.expose(Msg, {Set: variant})
    )


async def _approve(_request: Any) -> Approval:
    return Approval(approved=True, by="bob")


async def _decline(_request: Any) -> Approval:
    return Approval(approved=False)


def _call(p: dict[str, Any]) -> tuple[Any, Host, list[Any]]:
    host = Host(RESULT[p["result"]], p["explode"])
    audit = agent.audit_log(record_principal=lambda who: who)
    rt = agent.bind(
        definition=_contract(p), host=host, audit=audit, principal=lambda inv: inv.credentials
    )
    approver = {"approved": _approve, "declined": _decline}.get(p["confirm"])
    inv = Invocation(credentials=p["principal"], approver=approver)

    async def go() -> Any:
        try:
            return await rt.messages.dispatch_unknown(p["name"], p["payload"], inv)
        except AgentError as err:
            return err

    outcome = asyncio.run(go())
    assert rt.pending() == 0
    return outcome, host, audit.entries()


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(p=plans)
def test_every_call_is_audited_exactly_once_and_a_refusal_sends_nothing(p: dict[str, Any]) -> None:
    outcome, host, entries = _call(p)
    [entry] = entries
    if isinstance(outcome, AgentError):
        assert entry.outcome == outcome.tag
        if entry.decision == "refused":
            assert host.dispatched == []  # refused before the send: nothing was sent
        else:
            assert entry.decision == "unknown"
    else:
        assert entry.decision == "dispatched"
        assert host.dispatched == [outcome.message]
        assert entry.outcome == ("ok" if outcome.completion is None else outcome.completion.status)
    assert entry.principal == p["principal"]  # recorded, refused or not (no hook reads it late)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(p=plans)
def test_the_model_is_read_once_when_the_capability_is_known_and_again_for_an_approval(
    p: dict[str, Any],
) -> None:
    _outcome, host, entries = _call(p)
    [entry] = entries
    # a person's yes is checked against the Model as it is then (answers bound to their Model)
    again = entry.approval in ("approved", "stale")
    assert host.model_reads == (0 if p["name"] == "nope" else 1 + again)
