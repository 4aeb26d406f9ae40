"""``runtime.call``: the one entry adapters use, and the audit entry every decision writes
(DESIGN §3, §4.3, §4.11; F03)."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from pydantic import BaseModel

from foldkit_agent import (
    AgentCapabilityUnavailableError,
    AgentHostError,
    Invocation,
    Message,
    agent,
    message_union,
    surface,
)
from tests.support.hosts import RecordingHost


class Model(BaseModel, frozen=True):
    count: int = 0
    open: bool = True


class Incremented(Message):
    by: int


class Saved(Message):
    key: str


class Slow(Message):
    pass


Msg = message_union(Incremented, Saved, Slow)
App = surface.application(model=Model, message=Msg)
Builder = agent.for_application(App)


def contract(**saved: Any) -> Any:
    return Builder.make(
        messages=Builder.expose(
            {
                Incremented: Builder.variant(
                    description="Add to the counter", available=lambda m: m.open
                ),
                Saved: Builder.variant(
                    description="Save",
                    completion=agent.Completion(success=Saved, **saved),
                ),
                Slow: "Never answers",
            }
        )
    )


class BrokenModelHost(RecordingHost):
    def model(self) -> Any:
        raise RuntimeError("the store is gone")


async def test_call_answers_a_success_as_a_dispatched_outcome() -> None:
    host = RecordingHost(Model())
    rt = agent.bind(definition=contract(), host=host)
    outcome = await rt.call("incremented", {"by": 2}, Invocation(transport="mcp"))
    assert (outcome.ok, outcome.kind, outcome.capability) == (True, "dispatched", "incremented")
    assert outcome.data["message"] == {"_tag": "Incremented", "by": 2}
    assert host.dispatched == [Incremented(by=2)]


async def test_call_answers_refusals_as_outcomes_and_never_raises_f03() -> None:
    rt = agent.bind(definition=contract(), host=RecordingHost(Model(open=False)))
    unknown = await rt.call("drop_tables", {})
    unavailable = await rt.call("incremented", {"by": 1})
    invalid = await rt.call("saved", {"key": 1})
    assert [(o.ok, o.kind, o.data["_tag"]) for o in (unknown, unavailable, invalid)] == [
        (False, "refused", "AgentUnknownCapabilityError"),
        (False, "refused", "AgentCapabilityUnavailableError"),
        (False, "refused", "AgentInvalidInputError"),
    ]
    assert unavailable.text == "Refused: " + (
        AgentCapabilityUnavailableError(capability="incremented").message
    )
    assert unknown.text.startswith("Refused: There is no capability named 'drop_tables'.")


async def test_call_answers_an_unexpected_error_as_a_defect_without_its_text() -> None:
    rt = agent.bind(definition=contract(), host=BrokenModelHost(Model()))
    outcome = await rt.call("incremented", {"by": 1})
    assert (outcome.ok, outcome.kind, outcome.capability) == (False, "defect", "incremented")
    assert "store" not in outcome.text
    assert "store" not in str(outcome.data)


async def test_call_reraises_the_cancellation_of_its_task_after_auditing_it() -> None:
    started = asyncio.Event()

    async def hang(_: Any) -> None:
        started.set()
        await asyncio.Event().wait()

    host = RecordingHost(Model())
    host.dispatch = hang  # type: ignore[method-assign]
    audit = agent.audit_log()
    rt = agent.bind(definition=contract(), host=host, audit=audit)
    task = asyncio.ensure_future(rt.call("slow", {}))
    await started.wait()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    (entry,) = audit.entries()
    assert (entry.decision, entry.outcome) == ("unknown", "AgentCancelledError")
    assert rt.pending() == 0


async def test_a_host_model_that_raises_is_audited_as_a_defect_and_nothing_is_sent() -> None:
    audit = agent.audit_log()
    host = BrokenModelHost(Model())
    rt = agent.bind(definition=contract(), host=host, audit=audit)
    with pytest.raises(RuntimeError):
        await rt.messages.dispatch("incremented", {"by": 1})
    (entry,) = audit.entries()
    assert (entry.capability, entry.decision, entry.outcome) == ("incremented", "refused", "defect")
    assert host.dispatched == []


async def test_a_correlate_key_that_raises_before_sending_is_a_refused_defect_not_unknown() -> None:
    def broken_key(_request: Any, _call: Any) -> str:
        raise KeyError("no key")

    audit = agent.audit_log()
    host = RecordingHost(Model())
    correlate = agent.correlate_key(request=broken_key, result=lambda res: res.key)
    rt = agent.bind(definition=contract(correlate=correlate), host=host, audit=audit)
    outcome = await rt.call("saved", {"key": "k"})
    assert outcome.kind == "defect"
    (entry,) = audit.entries()
    assert (entry.decision, entry.outcome) == ("refused", "defect")
    assert host.dispatched == []


async def test_delivery_is_unknown_only_once_the_host_was_called() -> None:
    def refuse(_: Any) -> None:
        raise ConnectionError("broker down")

    audit = agent.audit_log()
    host = RecordingHost(Model())
    host.dispatch = refuse  # type: ignore[method-assign]
    rt = agent.bind(definition=contract(), host=host, audit=audit)
    refused = await rt.call("incremented", {"by": "x"})
    failed = await rt.call("incremented", {"by": 1})
    assert (refused.kind, failed.kind) == ("refused", "unknown")
    assert failed.data["_tag"] == AgentHostError.tag
    assert [e.decision for e in audit.entries()] == ["refused", "unknown"]


async def test_a_calls_one_audit_entry_names_its_invocation_capability_and_decision() -> None:
    audit = agent.audit_log(include_input=True)
    rt = agent.bind(definition=contract(), host=RecordingHost(Model()), audit=audit)
    await rt.call("incremented", {"by": 1}, Invocation(id="inv-1", transport="mcp"))
    [entry] = audit.entries()
    assert entry.to_json() | {"at": None} == {
        "at": None,
        "invocation_id": "inv-1",
        "transport": "mcp",
        "capability": "incremented",
        "tag": "Incremented",
        "principal": None,
        "decision": "dispatched",
        "outcome": "ok",
        "input": {"by": 1},
        "approval": None,  # no confirm: nobody was asked
        "approved_by": None,
        "approval_text": None,
        "approval_asks": None,
        "actor": None,  # the invocation named nobody who pressed it
        "declined_by": None,
    }


async def test_a_failure_message_is_told_in_the_applications_own_words_f03() -> None:
    from examples.todo import runtime

    async with runtime() as rt:
        first = await rt.call("create_todo", {"title": "Milk"})
        again = await rt.call("create_todo", {"title": "Milk"})
    assert (first.kind, again.kind) == ("completed", "failed")
    assert again.text == (
        "create_todo failed: a todo with this title already exists (FailedToSaveTodo). "
        "Nothing was rolled back."
    )


def test_a_failure_without_a_reason_is_named_by_its_tag_and_a_long_reason_is_cut() -> None:
    from foldkit_agent.runtime.outcome import MAX_REASON, _failure_text  # pyright: ignore[reportPrivateUsage]

    bare = _failure_text("pay", {"result": {"_tag": "Declined", "code": 7}})
    long = _failure_text("pay", {"result": {"_tag": "Declined", "error": "x" * 1000}})
    assert bare == "pay failed: the application reported Declined. Nothing was rolled back."
    assert long.startswith("pay failed: " + "x" * (MAX_REASON - 1) + "… (Declined)")
