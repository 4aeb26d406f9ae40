"""The audit entry records the approval decision and who approved (DESIGN §11)."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from foldkit_agent import AuditEntry, AuditLog, JsonlAuditSink, SqliteAuditSink


def _approved(audit: AuditLog) -> AuditEntry:
    return audit.record(
        invocation_id="i1",
        transport="mcp",
        capability="remove_item",
        tag="RemovedItem",
        principal=None,
        decision="dispatched",
        outcome="ok",
        approval="approved",
        approved_by="alice",
    )


def _declined(audit: AuditLog) -> AuditEntry:
    return audit.record(
        invocation_id="i2",
        transport="mcp",
        capability="remove_item",
        tag="RemovedItem",
        principal=None,
        decision="refused",
        outcome="AgentApprovalError",
        approval="declined",
    )


def test_an_entry_carries_approval_and_approved_by_through_json() -> None:
    audit = AuditLog()
    entry = _approved(audit)
    data = entry.to_json()
    assert (data["approval"], data["approved_by"]) == ("approved", "alice")
    assert AuditEntry.from_json(json.loads(json.dumps(data))) == entry
    assert audit.entries()[-1].approval == "approved"


def test_entries_without_approval_read_as_none_and_unknown_values_are_refused() -> None:
    audit = AuditLog()
    data = _declined(audit).to_json()
    del data["approval"], data["approved_by"]  # an entry written before approval existed
    old = AuditEntry.from_json(data)
    assert (old.approval, old.approved_by) == (None, None)
    with pytest.raises(ValueError, match="approval"):
        AuditEntry.from_json({**data, "approval": "maybe"})


def test_who_approved_is_stored_as_text_of_bounded_length() -> None:
    audit = AuditLog()
    entry = audit.record(
        invocation_id="i",
        transport="web",
        capability="c",
        tag="T",
        principal=None,
        decision="dispatched",
        outcome="ok",
        approval="approved",
        approved_by="x" * 1000 + "\ud800",
    )
    assert entry.approved_by == "x" * 200


def test_the_jsonl_sink_keeps_the_approval_fields(tmp_path: Path) -> None:
    sink = JsonlAuditSink(tmp_path / "audit.jsonl")
    audit = AuditLog(sink=sink)
    _approved(audit)
    _declined(audit)
    audit.close()
    assert [(e.approval, e.approved_by) for e in sink.read()] == [
        ("approved", "alice"),
        ("declined", None),
    ]


def test_the_sqlite_sink_stores_and_reads_the_approval_columns(tmp_path: Path) -> None:
    sink = SqliteAuditSink(tmp_path / "audit.db")
    audit = AuditLog(sink=sink)
    _approved(audit)
    _declined(audit)
    audit.close()
    assert [(e.approval, e.approved_by) for e in sink.query()] == [
        ("approved", "alice"),
        ("declined", None),
    ]


def test_a_database_from_before_approval_gains_the_columns_and_keeps_its_rows(
    tmp_path: Path,
) -> None:
    path = tmp_path / "old.db"
    conn = sqlite3.connect(path)
    conn.executescript(
        """
        CREATE TABLE audit_entries (
            id INTEGER PRIMARY KEY, at TEXT NOT NULL, invocation_id TEXT NOT NULL,
            transport TEXT NOT NULL, capability TEXT NOT NULL, tag TEXT, principal TEXT,
            decision TEXT NOT NULL, outcome TEXT NOT NULL, input TEXT);
        INSERT INTO audit_entries (at, invocation_id, transport, capability, tag, principal,
            decision, outcome, input)
        VALUES ('2026-01-01T00:00:00.000000+00:00', 'old', 'mcp', 'c', 'T', NULL,
            'dispatched', 'ok', NULL);
        PRAGMA user_version=1;
        """
    )
    conn.close()
    sink = SqliteAuditSink(path)
    audit = AuditLog(sink=sink)
    _approved(audit)
    audit.close()
    rows = sink.query()
    assert [(e.invocation_id, e.approval, e.approved_by, e.actor) for e in rows] == [
        ("old", None, None, None),
        ("i1", "approved", "alice", None),
    ]
    conn = sqlite3.connect(path)
    try:
        assert conn.execute("PRAGMA user_version").fetchone() == (6,)
    finally:
        conn.close()


def test_what_the_person_was_asked_and_how_often_goes_through_every_sink(tmp_path: Path) -> None:
    """F31: the audit says a call was re-asked (two asks) or stale."""
    sinks = (SqliteAuditSink(tmp_path / "a.db"), JsonlAuditSink(tmp_path / "a.jsonl"))
    for sink in sinks:
        audit = AuditLog(sink=sink)
        audit.record(
            invocation_id="i3",
            transport="mcp",
            capability="archive_done",
            tag="RequestedArchive",
            principal=None,
            decision="refused",
            outcome="AgentApprovalError",
            approval="stale",
            approval_text="Archive 3 done cards\u202e",
            approval_asks=2,
        )
        audit.close()
        (entry,) = sink.query() if isinstance(sink, SqliteAuditSink) else sink.read()
        assert (entry.approval, entry.approval_text, entry.approval_asks) == (
            "stale",
            "Archive 3 done cards\u202e",
            2,
        )
