"""A capability with no hook step takes the runtime's written-out path (issue 20), and answers
and audits exactly as the general path does.

A capability without ``authorize``, ``to_message``, ``confirm`` or a completion, called without
a signal of its own, outside a drain and without a tracer, runs ``AgentRuntime._invoke_plain``;
an invocation that brings its own signal takes the general path (``Dispatch.run``) for the same
capability. Each case runs both ways on a fresh runtime and compares what the caller and the
audit see.
"""

from __future__ import annotations

import asyncio
import dataclasses
from datetime import UTC, datetime
from typing import Any

import pytest

from foldkit_agent import AgentCancelledError, AgentContractError, Invocation, agent
from tests.support.audit_app import bind

EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
CASES: list[tuple[str, Any]] = [
    ("increment", {"by": 1}),
    ("increment", {"by": "1"}),
    ("increment", {"by": 1, "extra": True}),
    ("increment", {"by": 2.0}),
    ("increment", [1]),
    ("increment", {"by": "\ud800"}),
    ("closed", {}),
    (
        "login",
        {"user": "ann", "password": "hunter2", "credentials": [{"token": "t", "label": "l"}]},
    ),
    ("broken", {}),
    ("fragile", {}),
    ("nope", {"by": 1}),
]


async def seen(name: str, payload: Any, signal: asyncio.Event | None) -> tuple[Any, ...]:
    audit = agent.audit_log(include_input=True, redact=["password"])
    host, rt = bind(audit)
    outcome = await rt.call(name, payload, Invocation(id="inv-1", transport="mcp", signal=signal))
    (entry,) = audit.entries()
    recorded = dataclasses.replace(entry, at=EPOCH)
    return (
        (outcome.ok, outcome.kind, outcome.text, outcome.data),
        recorded,
        host.dispatched,
        host.model_reads,
        rt.pending(),
    )


def test_only_capabilities_without_a_hook_step_are_plain() -> None:
    _host, rt = bind(agent.audit_log())
    plain = {c.name for c in rt.definition.capabilities if id(c) in rt._plain}  # pyright: ignore[reportPrivateUsage]
    assert plain == {"increment", "closed", "login", "broken", "fragile"}  # not delete, wait


@pytest.mark.parametrize(("name", "payload"), CASES)
async def test_a_plain_call_answers_and_audits_as_the_general_path_does(
    name: str, payload: Any
) -> None:
    plain = await seen(name, payload, None)
    general = await seen(name, payload, asyncio.Event())
    assert plain == general


async def test_a_plain_call_that_reuses_an_id_in_flight_is_refused_and_sends_nothing() -> None:
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
    assert rt.abort_in_flight() == 1  # the waiting plain call can be aborted
    with pytest.raises(AgentCancelledError) as cancelled:
        await first
    assert cancelled.value.dispatched is None  # the host was called: delivery unknown
    assert len(host.dispatched) == 1
    assert rt.pending() == 0
    assert [(e.decision, e.outcome) for e in audit.entries()] == [
        ("refused", "AgentContractError"),
        ("unknown", "AgentCancelledError"),
    ]


async def test_a_plain_call_made_before_a_drain_and_run_after_it_is_refused() -> None:
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
