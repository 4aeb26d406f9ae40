"""Idempotency keys kept in the audit database (audit/keys.py SqlKeys): a second process on
the same file answers the first call's outcome; a running call whose owner stopped renewing
its lease (a killed worker) answers "unknown" and runs nothing."""

from __future__ import annotations

from pathlib import Path

import pytest

from examples.todo import run_todo
from foldkit_agent import AgentIdempotencyError, IdempotencyKeys, Invocation, SqliteAuditSink


async def test_a_key_in_the_database_answers_after_a_restart(tmp_path: Path) -> None:
    sink = SqliteAuditSink(tmp_path / "audit.db")
    inv = Invocation(idempotency_key="k")
    async with run_todo() as (_running, rt):
        rt.idempotency = IdempotencyKeys(sink.idempotency_keys())
        first = await rt.messages.dispatch_unknown("create_todo", {"title": "Milk"}, inv)
    async with run_todo() as (running, rt):  # a new application, as after a restart
        rt.idempotency = IdempotencyKeys(SqliteAuditSink(tmp_path / "audit.db").idempotency_keys())
        again = await rt.messages.dispatch_unknown("create_todo", {"title": "Milk"}, inv)
        assert running.model().todos == ()  # nothing ran here
        assert again.invocation.id == first.invocation.id
        assert again.message == first.message
        assert again.completion == first.completion


async def test_a_call_whose_owner_died_answers_unknown(tmp_path: Path) -> None:
    now = [1000.0]
    keys = IdempotencyKeys(
        SqliteAuditSink(tmp_path / "audit.db").idempotency_keys(), lease=10, clock=lambda: now[0]
    )
    async with run_todo() as (running, rt):
        rt.idempotency = keys
        inv = Invocation(idempotency_key="k")
        await rt.messages.dispatch_unknown("create_todo", {"title": "Milk"}, inv)
        # The first call's record as a killed worker leaves it: running, lease not renewed.
        store = keys.store
        rows = store._run("SELECT key FROM idempotency_keys", ()).fetchall()  # pyright: ignore[reportAttributeAccessIssue, reportUnknownMemberType]
        store._run(  # pyright: ignore[reportAttributeAccessIssue, reportUnknownMemberType]
            "UPDATE idempotency_keys SET state = 'running', owner = 'dead', lease_until = ?",
            (now[0] + 10,),
        )
        assert len(rows) == 1
        with pytest.raises(AgentIdempotencyError) as err:
            await rt.messages.dispatch_unknown("create_todo", {"title": "Milk"}, inv)
        assert err.value.reason == "in_progress"  # within the lease it may still be running
        now[0] += 11
        with pytest.raises(AgentIdempotencyError) as err:
            await rt.messages.dispatch_unknown("create_todo", {"title": "Milk"}, inv)
        assert err.value.reason == "unknown"
        assert "outcome is unknown" in err.value.message
        assert running.model().next_id == 2  # one create only
