"""The audit log: one entry per decision, what it keeps and what it never keeps.

Field reports cited: F02 (listed, then gone: one audit entry), F03 (every refusal kind),
F15 (an invocation whose outcome is unknown is audited as ``unknown``), F20 (a predicate
that raises is audited as unavailable).
"""

from __future__ import annotations

import asyncio
import json
import threading
from typing import Any

import pytest

from foldkit_agent import REDACTED, AgentError, AuditEntry, AuditLog, Invocation, agent
from tests.support.audit_app import Failed, bind

REFUSALS: list[tuple[str, str, Any, Any, str, str | None, str]] = [
    # (case, capability, input, credentials, outcome, tag, decision)
    ("unknown name", "no_such_thing", {}, None, "AgentUnknownCapabilityError", None, "refused"),
    ("unavailable", "closed", {}, None, "AgentCapabilityUnavailableError", "Closed", "refused"),
    (
        "invalid input",
        "increment",
        {"by": "5"},
        None,
        "AgentInvalidInputError",
        "Increment",
        "refused",
    ),
    ("unauthorized", "delete", {}, "guest", "AgentAuthorizationError", "Delete", "refused"),
    ("no principal", "delete", {}, None, "AgentAuthorizationError", "Delete", "refused"),
    ("host failure", "broken", {}, None, "AgentHostError", "Broken", "unknown"),
    (
        "predicate raises (F20)",
        "fragile",
        {},
        None,
        "AgentCapabilityUnavailableError",
        "Fragile",
        "refused",
    ),
]


@pytest.mark.parametrize(
    ("case", "name", "payload", "creds", "outcome", "tag", "decision"),
    REFUSALS,
    ids=[r[0] for r in REFUSALS],
)
async def test_every_refusal_kind_writes_exactly_one_entry_with_its_tag(
    case: str, name: str, payload: Any, creds: Any, outcome: str, tag: str | None, decision: str
) -> None:
    audit = agent.audit_log()
    host, rt = bind(audit)
    inv = Invocation(transport="mcp", credentials=creds)
    with pytest.raises(AgentError) as info:
        await rt.messages.dispatch_unknown(name, payload, inv)
    assert info.value.tag == outcome
    [entry] = audit.entries()
    assert (entry.capability, entry.tag, entry.decision, entry.outcome) == (
        name,
        tag,
        decision,
        outcome,
    )
    assert (entry.invocation_id, entry.transport) == (inv.id, "mcp")
    assert host.dispatched == []


async def test_a_cancelled_invocation_writes_one_refused_entry_without_reading_the_model() -> None:
    audit = agent.audit_log()
    host, rt = bind(audit)
    signal = asyncio.Event()
    signal.set()
    with pytest.raises(AgentError):
        await rt.messages.dispatch("increment", {"by": 1}, Invocation(signal=signal))
    [entry] = audit.entries()
    assert (entry.decision, entry.outcome) == ("refused", "AgentCancelledError")
    assert host.model_reads == 0


async def test_a_completion_timeout_is_one_unknown_entry_f14() -> None:
    audit = agent.audit_log()
    host, rt = bind(audit)
    host.answers["late"] = None  # nothing ever answers
    with pytest.raises(AgentError) as info:
        await rt.messages.dispatch("wait", {"key": "late"})
    assert info.value.tag == "AgentCompletionTimeoutError"
    [entry] = audit.entries()
    assert (entry.tag, entry.decision, entry.outcome) == (
        "Wait",
        "unknown",
        "AgentCompletionTimeoutError",
    )


async def test_a_completion_failure_is_dispatched_with_outcome_failed() -> None:
    audit = agent.audit_log()
    host, rt = bind(audit)
    host.answers["bad"] = Failed
    result = await rt.messages.dispatch("wait", {"key": "bad"})
    assert result.completion is not None
    assert result.completion.status == "failed"
    [entry] = audit.entries()
    assert (entry.decision, entry.outcome) == ("dispatched", "failed")


async def test_success_is_one_dispatched_entry_per_call() -> None:
    audit = agent.audit_log()
    _host, rt = bind(audit)
    await rt.messages.dispatch("increment", {"by": 1})
    result = await rt.messages.dispatch("wait", {"key": "k"})
    assert result.completion is not None
    assert [(e.capability, e.decision, e.outcome) for e in audit.entries()] == [
        ("increment", "dispatched", "ok"),
        ("wait", "dispatched", "completed"),
    ]


async def test_a_cancelled_task_is_audited_as_unknown_and_still_cancelled_f15() -> None:
    audit = agent.audit_log()
    host, rt = bind(audit)
    host.answers["never"] = None
    host.sent = asyncio.Event()
    task = asyncio.create_task(rt.messages.dispatch("wait", {"key": "never"}))
    await host.sent.wait()  # the host has been called: the outcome is now unknown
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    [entry] = audit.entries()
    assert (entry.decision, entry.outcome) == ("unknown", "AgentCancelledError")
    assert rt.pending() == 0


async def test_the_input_is_not_kept_unless_asked() -> None:
    audit = agent.audit_log()
    _host, rt = bind(audit)
    await rt.messages.dispatch("login", {"user": "ann", "password": "hunter2"})
    [entry] = audit.entries()
    assert entry.input is None
    assert "hunter2" not in json.dumps(entry.to_json())


async def test_redaction_replaces_named_fields_at_any_depth() -> None:
    audit = agent.audit_log(include_input=True, redact=["password", "token"])
    _host, rt = bind(audit)
    payload = {
        "user": "ann",
        "password": "hunter2",
        "credentials": [{"token": "t-1", "label": "a"}, {"token": "t-2", "label": "b"}],
        "extra": {"token": "t-3", "note": "kept"},
    }
    await rt.messages.dispatch("login", payload)
    [entry] = audit.entries()
    assert entry.input == {
        "user": "ann",
        "password": REDACTED,
        "credentials": [{"token": REDACTED, "label": "a"}, {"token": REDACTED, "label": "b"}],
        "extra": {"token": REDACTED, "note": "kept"},
    }
    text = json.dumps(entry.to_json())
    for secret in ("hunter2", "t-1", "t-2", "t-3"):
        assert secret not in text
    assert payload["password"] == "hunter2"  # the caller's payload is not touched


async def test_refused_input_is_redacted_too() -> None:
    audit = agent.audit_log(include_input=True, redact=["password"])
    _host, rt = bind(audit)
    with pytest.raises(AgentError):
        await rt.messages.dispatch("login", {"user": "ann", "password": "hunter2", "x": 1})
    [entry] = audit.entries()
    assert entry.decision == "refused"
    assert entry.input == {"user": "ann", "password": REDACTED, "x": 1}


def _walk(value: Any) -> list[Any]:
    out = [value]
    if isinstance(value, dict):
        for k, v in value.items():
            out += [k, *_walk(v)]
    elif isinstance(value, list | tuple):
        for v in value:
            out += _walk(v)
    return out


async def test_no_model_anywhere_in_an_entry_by_any_setting() -> None:
    audit = agent.audit_log(include_input=True, record_principal=lambda p: p)
    host, rt = bind(audit)
    creds = "admin"
    await rt.messages.dispatch("increment", {"by": 2}, Invocation(credentials=creds))
    await rt.messages.dispatch("delete", {}, Invocation(credentials=creds))
    with pytest.raises(AgentError):
        await rt.messages.dispatch("closed", {}, Invocation(credentials=creds))
    model = host.current
    for entry in audit.entries():
        values = [getattr(entry, f) for f in AuditEntry.__slots__]
        for part in [v for value in values for v in _walk(value)]:
            assert part is not model
            assert not isinstance(part, type(model))
        assert model.secret not in json.dumps(entry.to_json(), default=str)


async def test_the_principal_is_recorded_only_through_its_projection() -> None:
    plain = agent.audit_log()
    projected = agent.audit_log(principal=lambda who: {"id": who})
    by_old_name = agent.audit_log(record_principal=lambda who: {"id": who})
    cases = ((plain, None), (projected, {"id": "admin"}), (by_old_name, {"id": "admin"}))
    for audit, expected in cases:
        _host, rt = bind(audit)
        await rt.messages.dispatch("delete", {}, Invocation(credentials="admin"))
        [entry] = audit.entries()
        assert entry.principal == expected


def test_principal_and_record_principal_are_one_option_given_once() -> None:
    assert agent.audit_log(principal=str).records_principal
    assert AuditLog(record_principal=str).records_principal
    with pytest.raises(TypeError, match="not both"):
        agent.audit_log(principal=str, record_principal=str)
    with pytest.raises(TypeError, match="not both"):
        AuditLog(principal=str, record_principal=str)


async def test_a_principal_projection_that_raises_records_no_principal_and_fails_nothing() -> None:
    def bad(_who: Any) -> Any:
        raise ValueError("no")

    audit = agent.audit_log(record_principal=bad)
    _host, rt = bind(audit)
    await rt.messages.dispatch("delete", {}, Invocation(credentials="admin"))
    [entry] = audit.entries()
    assert (entry.decision, entry.principal) == ("dispatched", None)


async def test_the_ring_buffer_keeps_the_newest_and_counts_evictions() -> None:
    audit = agent.audit_log(capacity=3)
    _host, rt = bind(audit)
    for i in range(5):
        await rt.messages.dispatch("increment", {"by": i})
    assert audit.evicted == 2
    assert len(audit) == 3
    ids = [e.invocation_id for e in audit.entries()]
    assert len(set(ids)) == 3


def _refusal(audit: AuditLog, inv: str) -> None:
    audit.note(inv, "in-app", "c", None, None, "refused", "AgentUnknownCapabilityError")


@pytest.mark.parametrize("capacity", [1, 3, 64, 200])
def test_the_ring_keeps_exactly_the_newest_capacity_entries_across_trims(capacity: int) -> None:
    audit = AuditLog(capacity=capacity)
    for n in range(1, 3 * capacity + 150):
        _refusal(audit, f"i-{n}")
        kept = min(n, capacity)
        assert (len(audit), audit.evicted) == (kept, n - kept)
    ids = [e.invocation_id for e in audit.entries()]
    assert ids == [f"i-{n}" for n in range(3 * capacity + 150 - capacity, 3 * capacity + 150)]


def test_threads_recording_into_one_log_lose_no_entry_and_no_eviction() -> None:
    audit = AuditLog(capacity=100)

    def record(t: int) -> None:
        for n in range(2_000):
            _refusal(audit, f"{t}-{n}")
            if n % 500 == 0:
                audit.entries()  # a reader converting rows while others append

    threads = [threading.Thread(target=record, args=(t,)) for t in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert (len(audit), audit.evicted) == (100, 8_000 - 100)
    assert len({e.invocation_id for e in audit.entries()}) == 100


def test_record_returns_its_own_entry_while_a_follower_records_another() -> None:
    audit = AuditLog()
    audit.follow(lambda e: _refusal(audit, "echo") if e.invocation_id == "mine" else None)
    entry = audit.record(
        invocation_id="mine",
        transport="in-app",
        capability="c",
        tag="T",
        principal=None,
        decision="dispatched",
        outcome="ok",
    )
    assert entry.invocation_id == "mine"
    assert [e.invocation_id for e in audit.entries()] == ["mine", "echo"]
    assert audit.entries()[0] is entry


def test_a_capacity_below_one_is_refused() -> None:
    with pytest.raises(ValueError, match="at least 1"):
        agent.audit_log(capacity=0)


def test_an_input_that_cannot_be_copied_is_recorded_as_unrecordable() -> None:
    loop: dict[str, Any] = {}
    loop["self"] = loop
    audit = AuditLog(include_input=True)
    entry = audit.record(
        invocation_id="i",
        transport="in-app",
        capability="c",
        tag=None,
        principal=None,
        decision="refused",
        outcome="AgentInvalidInputError",
        input=loop,
    )
    assert entry.input == "[unrecordable]"


def test_an_entry_round_trips_through_json() -> None:
    audit = AuditLog(include_input=True)
    entry = audit.record(
        invocation_id="i",
        transport="a2a",
        capability="c",
        tag="T",
        principal=None,
        decision="unknown",
        outcome="AgentHostError",
        input={"a": [1, 2]},
    )
    assert AuditEntry.from_json(json.loads(json.dumps(entry.to_json()))) == entry
