"""Answered means audited: a durable sink holds each answer until its entry is stored.

The seam (DESIGN §13): ``AuditLog.note`` hands back a ticket when the sink is durable, and
``AuditLog.committed(ticket)`` resolves when the batch holding it was written; the runtime
awaits it before answering. These tests drive the seam directly, then through dispatch;
tests/audit/test_crash.py kills real processes. Blocking sinks use ``threading.Event``, never
a sleep.
"""

from __future__ import annotations

import asyncio
import logging
import threading
from pathlib import Path
from typing import Any

import pytest

from foldkit_agent import (
    AgentInvalidInputError,
    AuditEntry,
    AuditLog,
    AuditTicket,
    Invocation,
    JsonlAuditSink,
    SqliteAuditSink,
)
from tests.support.audit_app import Increment, bind

WAIT = 10.0  # upper bound for events the code sets (never reached when green)


class DurableSink:
    """Records batches; blocks inside ``write`` while ``gate`` is clear; may raise."""

    durable = True

    def __init__(self, *, blocked: bool = False, error: BaseException | None = None) -> None:
        self.batches: list[list[str]] = []
        self.gate = threading.Event()
        self.entered = threading.Event()
        self.error = error
        if not blocked:
            self.gate.set()

    def write(self, entries: list[AuditEntry]) -> None:
        self.entered.set()
        assert self.gate.wait(WAIT)
        if self.error is not None:
            raise self.error
        self.batches.append([e.invocation_id for e in entries])


def _note(audit: AuditLog, inv: str) -> AuditTicket | None:
    return audit.note(
        invocation_id=inv,
        transport="in-app",
        capability="create_todo",
        tag="RequestedCreateTodo",
        principal=None,
        decision="dispatched",
        outcome="ok",
    )


def test_without_a_durable_sink_note_hands_back_no_ticket(tmp_path: Path) -> None:
    class PlainSink:
        def write(self, entries: list[AuditEntry]) -> None:
            pass

    sqlite = SqliteAuditSink(tmp_path / "a.db")
    for audit in (AuditLog(), AuditLog(sink=PlainSink()), AuditLog(sink=sqlite)):
        assert audit.durable is False
        assert _note(audit, "i1") is None
        audit.close()


def test_the_shipped_sinks_are_durable_when_asked(tmp_path: Path) -> None:
    sinks = [
        SqliteAuditSink(tmp_path / "a.db", durable=True),
        JsonlAuditSink(tmp_path / "a.jsonl", durable=True),
    ]
    for sink in sinks:
        audit = AuditLog(sink=sink)
        assert audit.durable is True
        assert audit.close(WAIT)


async def test_committed_resolves_once_the_sink_has_stored_the_entry() -> None:
    sink = DurableSink(blocked=True)
    audit = AuditLog(sink=sink)
    ticket = _note(audit, "i1")
    assert ticket is not None
    assert ticket.state == "pending"
    waiting = asyncio.ensure_future(audit.committed(ticket))
    assert await asyncio.to_thread(sink.entered.wait, WAIT)
    await asyncio.sleep(0)  # let the waiter register; it must still be waiting
    assert not waiting.done()
    assert sink.batches == []
    sink.gate.set()
    assert await waiting is True
    assert sink.batches == [["i1"]]
    assert ticket.state == "committed"
    assert await audit.committed(ticket) is True  # again: at once
    assert audit.unconfirmed == 0
    assert audit.close(WAIT)


async def test_invocations_pending_while_a_batch_commits_share_the_next_commit() -> None:
    sink = DurableSink(blocked=True)
    audit = AuditLog(sink=sink)
    first = _note(audit, "first")
    assert first is not None
    assert await asyncio.to_thread(sink.entered.wait, WAIT)  # "first" is being committed

    async def call(n: int) -> bool:
        ticket = _note(audit, f"c{n}")
        assert ticket is not None
        return await audit.committed(ticket)

    calls = [asyncio.ensure_future(call(n)) for n in range(50)]
    await asyncio.sleep(0)
    assert not any(c.done() for c in calls)
    sink.gate.set()
    assert await asyncio.gather(audit.committed(first), *calls) == [True] * 51
    assert sink.batches == [["first"], [f"c{n}" for n in range(50)]]  # one commit for 50
    assert audit.close(WAIT)


async def test_a_failing_durable_sink_releases_the_caller_and_names_the_invocation(
    caplog: pytest.LogCaptureFixture,
) -> None:
    audit = AuditLog(sink=DurableSink(error=OSError("disk full")))
    ticket = _note(audit, "inv-lost-1")
    assert ticket is not None
    with caplog.at_level(logging.ERROR, logger="foldkit_agent.audit"):
        assert await audit.committed(ticket) is False
    assert ticket.state == "failed"
    assert audit.unconfirmed == 1
    assert audit.sink_failed_entries == 1
    [record] = [r for r in caplog.records if r.levelno == logging.ERROR]
    text = record.getMessage()
    assert "inv-lost-1" in text
    assert "create_todo" in text
    assert "OSError: disk full" in text
    assert audit.close(WAIT)


async def test_a_stuck_durable_sink_holds_a_caller_at_most_commit_timeout() -> None:
    sink = DurableSink(blocked=True)
    audit = AuditLog(sink=sink, commit_timeout=0.05)
    ticket = _note(audit, "slow")
    assert ticket is not None
    assert await audit.committed(ticket) is False  # the timeout, not the sink, ended the wait
    assert ticket.state == "pending"
    assert audit.unconfirmed == 1
    sink.gate.set()  # the entry is still written once the sink recovers
    assert await asyncio.to_thread(audit.flush, WAIT)
    assert sink.batches == [["slow"]]
    assert ticket.state == "committed"
    assert audit.close(WAIT)


async def test_an_entry_noted_after_close_is_reported_dropped_at_once() -> None:
    sink = DurableSink()
    audit = AuditLog(sink=sink)
    assert audit.close(WAIT)
    ticket = _note(audit, "late")
    assert ticket is not None
    assert ticket.state == "dropped"
    assert await audit.committed(ticket) is False
    assert audit.unconfirmed == 1
    assert audit.sink_dropped == 1


async def test_cancelling_a_waiting_caller_stops_the_wait_but_not_the_write() -> None:
    sink = DurableSink(blocked=True)
    audit = AuditLog(sink=sink)
    ticket = _note(audit, "cancelled")
    assert ticket is not None
    waiting = asyncio.ensure_future(audit.committed(ticket))
    await asyncio.sleep(0)
    waiting.cancel()
    with pytest.raises(asyncio.CancelledError):
        await waiting
    sink.gate.set()
    assert await asyncio.to_thread(audit.flush, WAIT)
    assert sink.batches == [["cancelled"]]
    assert audit.close(WAIT)


def test_waiters_on_several_event_loops_are_each_woken_on_their_own_loop() -> None:
    sink = DurableSink(blocked=True)
    audit = AuditLog(sink=sink)
    results: dict[str, Any] = {}

    def caller(name: str, ready: threading.Event) -> None:
        async def main() -> None:
            ticket = _note(audit, name)
            assert ticket is not None
            ready.set()
            results[name] = (await audit.committed(ticket), threading.current_thread().name)

        asyncio.run(main())

    readies = [threading.Event(), threading.Event()]
    threads = [
        threading.Thread(target=caller, args=(f"loop{n}", readies[n]), name=f"caller-{n}")
        for n in range(2)
    ]
    for t in threads:
        t.start()
    assert all(r.wait(WAIT) for r in readies)
    sink.gate.set()
    for t in threads:
        t.join(WAIT)
    assert results == {"loop0": (True, "caller-0"), "loop1": (True, "caller-1")}
    assert audit.close(WAIT)


def test_commit_timeout_must_be_positive() -> None:
    with pytest.raises(ValueError, match="commit_timeout"):
        AuditLog(commit_timeout=0)


# -- through dispatch ----------------------------------------------------------------------------


async def test_a_dispatch_answers_only_after_its_entry_is_committed() -> None:
    sink = DurableSink(blocked=True)
    audit = AuditLog(sink=sink)
    host, rt = bind(audit)
    call = asyncio.ensure_future(rt.messages.dispatch("increment", {"by": 2}, Invocation(id="d1")))
    assert await asyncio.to_thread(sink.entered.wait, WAIT)
    assert host.dispatched == [Increment(by=2)]  # applied ...
    assert not call.done()  # ... but not answered: the entry is not stored yet
    assert rt.pending() == 1
    sink.gate.set()
    result = await call
    assert result.message == Increment(by=2)
    assert sink.batches == [["d1"]]
    assert rt.pending() == 0
    assert audit.close(WAIT)


async def test_a_refusal_is_also_answered_after_its_entry_is_committed() -> None:
    sink = DurableSink(blocked=True)
    audit = AuditLog(sink=sink)
    _host, rt = bind(audit)
    call = asyncio.ensure_future(
        rt.messages.dispatch("increment", {"by": "2"}, Invocation(id="r1"))
    )
    assert await asyncio.to_thread(sink.entered.wait, WAIT)
    assert not call.done()
    sink.gate.set()
    with pytest.raises(AgentInvalidInputError):
        await call
    assert sink.batches == [["r1"]]
    assert audit.close(WAIT)


async def test_a_failing_durable_sink_never_withholds_the_answer(
    caplog: pytest.LogCaptureFixture,
) -> None:
    audit = AuditLog(sink=DurableSink(error=OSError("disk full")))
    host, rt = bind(audit)
    _host2, baseline = bind(AuditLog())
    with caplog.at_level(logging.ERROR, logger="foldkit_agent.audit"):
        got = await rt.messages.dispatch("increment", {"by": 1}, Invocation(id="x1"))
    want = await baseline.messages.dispatch("increment", {"by": 1}, Invocation(id="x1"))
    assert got == want  # the answer is the one without a sink: the Message was applied
    assert host.dispatched == [Increment(by=1)]
    assert audit.unconfirmed == 1
    assert any("x1" in r.getMessage() for r in caplog.records if r.levelno == logging.ERROR)
    assert audit.close(WAIT)


async def test_a_caller_cancelled_while_its_entry_commits_is_let_go() -> None:
    sink = DurableSink(blocked=True)
    audit = AuditLog(sink=sink)
    host, rt = bind(audit)
    call = asyncio.ensure_future(rt.messages.dispatch("increment", {"by": 1}, Invocation(id="c1")))
    assert await asyncio.to_thread(sink.entered.wait, WAIT)
    assert host.dispatched == [Increment(by=1)]
    call.cancel()
    with pytest.raises(asyncio.CancelledError):
        await call  # let go although the sink still holds the entry
    assert rt.pending() == 0
    assert sink.batches == []
    sink.gate.set()
    assert await asyncio.to_thread(audit.flush, WAIT)
    assert sink.batches == [["c1"]]  # audited all the same, as dispatched
    assert audit.entries()[0].decision == "dispatched"
    assert audit.close(WAIT)
