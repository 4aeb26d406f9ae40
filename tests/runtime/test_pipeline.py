"""One call through the pipeline, as the caller, the audit log and the host see it.

Every capability takes the same pipeline; one with nothing to authorize, construct, confirm or
wait for simply has those steps absent (its plan, decided at bind). Each refusal kind below
is answered, audited exactly once and sends what it should, whether or not the invocation
brings a signal of its own.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from foldkit_agent import AgentCancelledError, AgentContractError, Invocation, agent
from tests.support.approval_app import Contract, Model
from tests.support.audit_app import bind
from tests.support.hosts import RecordingHost

LOGIN = {"user": "ann", "password": "hunter2", "credentials": [{"token": "t", "label": "l"}]}
# name, payload -> outcome kind, (audit decision, outcome, tag), Messages sent, Model reads
CASES: list[tuple[str, Any, str, tuple[str, str, str | None], int, int]] = [
    ("increment", {"by": 1}, "dispatched", ("dispatched", "ok", "Increment"), 1, 1),
    ("increment", {"by": "1"}, "refused", ("refused", "AgentInvalidInputError", "Increment"), 0, 1),
    (
        "increment",
        {"by": 1, "extra": True},
        "refused",
        ("refused", "AgentInvalidInputError", "Increment"),
        0,
        1,
    ),
    ("increment", {"by": 2.0}, "refused", ("refused", "AgentInvalidInputError", "Increment"), 0, 1),
    ("increment", [1], "refused", ("refused", "AgentInvalidInputError", "Increment"), 0, 1),
    (
        "increment",
        {"by": "\ud800"},
        "refused",
        ("refused", "AgentInvalidInputError", "Increment"),
        0,
        1,
    ),
    ("closed", {}, "refused", ("refused", "AgentCapabilityUnavailableError", "Closed"), 0, 1),
    ("login", LOGIN, "dispatched", ("dispatched", "ok", "Login"), 1, 1),
    ("broken", {}, "unknown", ("unknown", "AgentHostError", "Broken"), 0, 1),
    ("fragile", {}, "refused", ("refused", "AgentCapabilityUnavailableError", "Fragile"), 0, 1),
    ("nope", {"by": 1}, "refused", ("refused", "AgentUnknownCapabilityError", None), 0, 0),
]


@pytest.mark.parametrize("own_signal", [False, True], ids=["no-signal", "own-signal"])
@pytest.mark.parametrize(("name", "payload", "kind", "audited", "sent", "reads"), CASES)
async def test_each_call_is_answered_audited_once_and_reads_the_model_at_most_once(
    name: str,
    payload: Any,
    kind: str,
    audited: tuple[str, str, str | None],
    sent: int,
    reads: int,
    own_signal: bool,
) -> None:
    audit = agent.audit_log(include_input=True, redact=["password"])
    host, rt = bind(audit)
    signal = asyncio.Event() if own_signal else None
    inv = Invocation(id="inv-1", transport="mcp", signal=signal)
    outcome = await rt.call(name, payload, inv)
    assert (outcome.ok, outcome.kind) == (kind == "dispatched", kind)
    [entry] = audit.entries()
    assert (entry.decision, entry.outcome, entry.tag) == audited
    assert (entry.invocation_id, entry.transport, entry.capability) == ("inv-1", "mcp", name)
    assert (len(host.dispatched), host.model_reads, rt.pending()) == (sent, reads, 0)


async def test_the_audited_input_is_redacted_and_made_storable() -> None:
    audit = agent.audit_log(include_input=True, redact=["password"])
    _host, rt = bind(audit)
    await rt.call("login", LOGIN, Invocation())
    await rt.call("increment", {"by": "\ud800"}, Invocation())
    assert [e.input for e in audit.entries()] == [
        {"user": "ann", "password": "[redacted]", "credentials": [{"token": "t", "label": "l"}]},
        {"by": "\ufffd"},  # a lone surrogate cannot be stored: replaced where it stands
    ]


async def test_a_call_that_reuses_an_id_in_flight_is_refused_and_sends_nothing() -> None:
    audit = agent.audit_log()
    host, rt = bind(audit)
    gate: asyncio.Future[None] = asyncio.get_running_loop().create_future()
    sync_dispatch = host.dispatch

    def held(message: Any) -> Any:
        sync_dispatch(message)
        return gate  # the first call waits on the host

    host.dispatch = held  # type: ignore[method-assign]
    host.sent = asyncio.Event()
    first = asyncio.ensure_future(
        rt.messages.dispatch_unknown("increment", {"by": 1}, Invocation(id="x"))
    )
    await host.sent.wait()
    assert rt.pending() == 1
    with pytest.raises(AgentContractError, match="reuses the invocation id"):
        await rt.messages.dispatch_unknown("increment", {"by": 2}, Invocation(id="x"))
    assert rt.abort_in_flight() == 1  # a call waiting on the host can be aborted
    with pytest.raises(AgentCancelledError) as cancelled:
        await first
    assert cancelled.value.dispatched is None  # the host was called: delivery unknown
    assert len(host.dispatched) == 1
    assert rt.pending() == 0
    assert [(e.decision, e.outcome) for e in audit.entries()] == [
        ("refused", "AgentContractError"),
        ("unknown", "AgentCancelledError"),
    ]


async def test_a_call_made_before_a_drain_and_run_after_it_is_refused() -> None:
    audit = agent.audit_log()
    host, rt = bind(audit)
    call = rt.messages.dispatch_unknown("increment", {"by": 1})  # made, not yet run
    rt.stop_accepting()
    with pytest.raises(AgentCancelledError) as refused:
        await call
    assert (refused.value.dispatched, host.dispatched) == (False, [])
    assert [(e.decision, e.outcome) for e in audit.entries()] == [
        ("refused", "AgentCancelledError")
    ]


def test_each_capability_has_only_the_steps_its_declaration_needs() -> None:
    _host, rt = bind(agent.audit_log())
    steps = {
        name: (plan.authorizes, plan.to_message is not None, plan.asks_person, plan.waits)
        for name, plan in rt.plans.items()
    }
    assert steps == {
        "increment": (False, False, False, False),
        "closed": (False, False, False, False),
        "login": (False, False, False, False),
        "delete": (True, False, False, False),
        "wait": (False, False, False, True),
        "broken": (False, False, False, False),
        "fragile": (False, False, False, False),
    }


def test_a_call_may_wait_exactly_when_it_may_ask_a_person_or_waits_for_its_completion() -> None:
    _host, rt = bind(agent.audit_log())
    assert {name for name, plan in rt.plans.items() if plan.may_wait} == {"wait"}
    shelf = agent.bind(definition=Contract, host=RecordingHost(Model()))
    asking = {name: plan.may_wait for name, plan in shelf.plans.items()}
    # remove_item and note always ask, add_item asks for some titles, rename_item never does
    assert asking == {"add_item": True, "remove_item": True, "rename_item": False, "note": True}


def test_a_principal_is_resolved_for_every_call_once_the_audit_records_principals() -> None:
    _host, rt = bind(agent.audit_log())
    assert rt.plans["increment"].principal is None
    rt.audit = agent.audit_log(record_principal=lambda p: p)
    assert rt.plans["increment"].principal is not None
    assert rt.plan("increment") is rt.plans["increment"]
    assert rt.plan("nope") is None
