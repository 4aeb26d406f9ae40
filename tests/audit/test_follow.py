"""Following the audit log: every entry recorded from now on, without ever slowing a dispatch."""

from __future__ import annotations

import logging

import pytest

from foldkit_agent import AuditEntry, Invocation, agent
from tests.support.audit_app import bind, record


def test_a_follower_sees_each_entry_as_it_is_kept_until_it_unfollows() -> None:
    audit = agent.audit_log()
    record(audit, "before")
    seen: list[AuditEntry] = []
    unfollow = audit.follow(seen.append)
    kept = record(audit, "one", capability="increment")
    assert seen == [kept]
    assert audit.entries()[-1] == kept
    unfollow()
    unfollow()  # twice is harmless
    record(audit, "after")
    assert [e.invocation_id for e in seen] == ["one"]


async def test_a_follower_that_raises_never_fails_the_dispatch(
    caplog: pytest.LogCaptureFixture,
) -> None:
    audit = agent.audit_log(record_principal=lambda p: p)
    host, rt = bind(audit)
    calls: list[str] = []

    def broken(entry: AuditEntry) -> None:
        calls.append(entry.capability)
        raise RuntimeError("follower bug")

    audit.follow(broken)
    good: list[str] = []
    audit.follow(lambda e: good.append(e.outcome))
    with caplog.at_level(logging.WARNING, logger="foldkit_agent.audit"):
        await rt.messages.dispatch_unknown(
            "increment", {"by": 2}, Invocation(transport="test", credentials="ann")
        )
    assert host.dispatched != []
    assert calls == ["increment"]
    assert good == ["ok"]  # the next follower still heard of it
    assert audit.follower_failures == 1
    assert [e.principal for e in audit.entries()] == ["ann"]
    assert "audit follower raised" in caplog.text
