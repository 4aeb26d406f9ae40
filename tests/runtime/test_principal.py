"""Where the principal is resolved (DESIGN §4.3, §4.6, §4.7; F18): after the snapshot, at
the authorize step, and only where something reads it."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from pydantic import BaseModel

from foldkit_agent import (
    AgentAuthorizationError,
    AgentCapabilityUnavailableError,
    AgentInvalidInputError,
    AgentUnknownCapabilityError,
    Invocation,
    Message,
    agent,
    message_union,
    surface,
)
from tests.support.hosts import RecordingHost


class Model(BaseModel, frozen=True):
    open: bool = True
    version: int = 0


class Guarded(Message):
    n: int = 0


class Plain(Message):
    n: int = 0


class Stamped(Message):
    owner: str | None = None


class NoInput(BaseModel):
    pass


Msg = message_union(Guarded, Plain, Stamped)
App = surface.application(model=Model, message=Msg)
Builder = agent.for_application(App)

Contract = Builder.make(
    messages=Builder.expose(
        {
            Guarded: Builder.variant(
                description="Needs a principal",
                available=lambda m: m.open,
                authorize=lambda r: r.principal == "alice" or agent.Deny("alice only"),
            ),
            Plain: "Anyone may",
            Stamped: Builder.variant(
                description="Records who asked",
                input=NoInput,
                to_message=lambda _, ctx: Stamped(owner=ctx.principal),
            ),
        }
    )
)


class Provider:
    """Counts its calls; fails when told to."""

    def __init__(self, *, fail: bool = False) -> None:
        self.calls = 0
        self.fail = fail

    def __call__(self, inv: Invocation) -> Any:
        self.calls += 1
        if self.fail:
            raise RuntimeError("session store down")
        return inv.credentials


async def test_a_failing_provider_on_an_unavailable_capability_reports_unavailable() -> None:
    provider = Provider(fail=True)
    rt = agent.bind(definition=Contract, host=RecordingHost(Model(open=False)), principal=provider)
    with pytest.raises(AgentCapabilityUnavailableError):
        await rt.messages.dispatch("guarded", {})
    assert provider.calls == 0


async def test_a_failing_provider_on_invalid_input_reports_invalid_input() -> None:
    provider = Provider(fail=True)
    rt = agent.bind(definition=Contract, host=RecordingHost(Model()), principal=provider)
    with pytest.raises(AgentInvalidInputError):
        await rt.messages.dispatch("guarded", {"n": "one"})
    assert provider.calls == 0


async def test_a_failing_provider_refuses_at_the_authorize_step() -> None:
    host = RecordingHost(Model())
    rt = agent.bind(definition=Contract, host=host, principal=Provider(fail=True))
    with pytest.raises(AgentAuthorizationError) as info:
        await rt.messages.dispatch("guarded", {})
    assert "session store" not in info.value.message
    assert host.dispatched == []


async def test_a_capability_without_authorize_never_runs_the_provider() -> None:
    provider = Provider(fail=True)
    host = RecordingHost(Model())
    rt = agent.bind(definition=Contract, host=host, principal=provider)
    result = await rt.messages.dispatch("plain", {"n": 1})
    assert result.message == Plain(n=1)
    assert provider.calls == 0


async def test_a_failing_provider_never_refuses_a_capability_without_authorize() -> None:
    host = RecordingHost(Model())
    rt = agent.bind(definition=Contract, host=host, principal=Provider(fail=True))
    result = await rt.messages.dispatch("stamped", {}, Invocation(credentials="alice"))
    assert result.message == Stamped(owner=None)


async def test_to_message_reads_the_principal_the_provider_derived() -> None:
    provider = Provider()
    rt = agent.bind(definition=Contract, host=RecordingHost(Model()), principal=provider)
    result = await rt.messages.dispatch("stamped", {}, Invocation(credentials="alice"))
    assert result.message == Stamped(owner="alice")
    assert provider.calls == 1


async def test_the_snapshot_is_read_before_an_async_provider_so_its_changes_are_not_seen() -> None:
    host = RecordingHost(Model(version=1))
    seen: list[int] = []

    async def provider(inv: Invocation) -> Any:
        host.current = Model(version=2)  # the application moves on while the provider runs
        await asyncio.sleep(0)
        return inv.credentials

    def authorize(request: Any) -> bool:
        seen.append(request.model.version)
        return True

    contract = Builder.make(
        messages=Builder.expose(
            {Guarded: Builder.variant(description="Guarded", authorize=authorize)}
        )
    )
    rt = agent.bind(definition=contract, host=host, principal=provider)
    await rt.messages.dispatch("guarded", {}, Invocation(credentials="alice"))
    assert seen == [1]
    assert host.model_reads == 1


async def test_f18_a_refusal_before_authorize_still_records_who_asked() -> None:
    audit = agent.audit_log(record_principal=lambda who: who)
    provider = Provider()
    rt = agent.bind(
        definition=Contract, host=RecordingHost(Model(open=False)), audit=audit, principal=provider
    )
    with pytest.raises(AgentCapabilityUnavailableError):
        await rt.messages.dispatch("guarded", {}, Invocation(credentials="bob"))
    await rt.messages.dispatch("plain", {}, Invocation(credentials="bob"))
    assert [(e.capability, e.principal, e.outcome) for e in audit.entries()] == [
        ("guarded", "bob", "AgentCapabilityUnavailableError"),
        ("plain", "bob", "ok"),
    ]


async def test_a_caller_naming_no_capability_is_recorded_as_itself() -> None:
    # issue 21 stranger: a probe for a name that does not exist was audited with no principal
    audit = agent.audit_log(record_principal=lambda who: who)
    rt = agent.bind(
        definition=Contract, host=RecordingHost(Model()), audit=audit, principal=Provider()
    )
    with pytest.raises(AgentUnknownCapabilityError):
        await rt.messages.dispatch_unknown("drop_tables", {}, Invocation(credentials="mallory"))
    (entry,) = audit.entries()
    assert (entry.capability, entry.principal, entry.decision, entry.outcome) == (
        "drop_tables",
        "mallory",
        "refused",
        "AgentUnknownCapabilityError",
    )


async def test_a_provider_failing_for_the_audit_alone_records_no_principal() -> None:
    audit = agent.audit_log(record_principal=lambda who: who)
    rt = agent.bind(
        definition=Contract, host=RecordingHost(Model()), audit=audit, principal=Provider(fail=True)
    )
    result = await rt.messages.dispatch("plain", {}, Invocation(credentials="bob"))
    assert result.message == Plain()
    (entry,) = audit.entries()
    assert (entry.principal, entry.decision) == (None, "dispatched")


Bare = Builder.make(
    messages=Builder.expose(
        {
            Guarded: Builder.variant(
                description="alice only", authorize=lambda r: r.principal == "alice"
            )
        }
    )
)


async def test_a_refusal_without_a_reason_says_when_no_caller_was_identified() -> None:
    from foldkit_agent.runtime.pipeline import NOBODY

    anonymous = agent.bind(definition=Bare, host=RecordingHost(Model()), principal=lambda _i: None)
    named = agent.bind(definition=Bare, host=RecordingHost(Model()), principal=lambda _i: "bob")
    with pytest.raises(AgentAuthorizationError) as nobody:
        await anonymous.messages.dispatch("guarded", {})
    with pytest.raises(AgentAuthorizationError) as bob:
        await named.messages.dispatch("guarded", {})
    assert nobody.value.message == f"Not authorized to use 'guarded': {NOBODY}"
    assert (bob.value.message, bob.value.reason) == ("Not authorized to use 'guarded'.", None)


async def test_credentials_the_provider_finds_no_caller_in_are_named_in_the_refusal() -> None:
    """The Quick start's first provider read ``.subject``, so an in-process call with
    ``credentials="alice"`` was refused as if nobody had called; the refusal says so now."""
    from foldkit_agent.runtime.pipeline import UNREAD

    reads_subject = agent.bind(
        definition=Bare,
        host=RecordingHost(Model()),
        principal=lambda inv: getattr(inv.credentials, "subject", None),
    )
    with pytest.raises(AgentAuthorizationError) as refused:
        await reads_subject.messages.dispatch("guarded", {}, Invocation(credentials="alice"))
    assert refused.value.message == f"Not authorized to use 'guarded': {UNREAD}"
    assert "bind(principal=...)" in refused.value.message
