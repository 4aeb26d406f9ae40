"""The audit entry records who pressed a call, as its transport was told (``actor``): an MCP
Apps view's click (``"view"``) and the model's call (``"agent"``) stay told apart in every
sink; a transport that says nothing records ``None``."""

from __future__ import annotations

from pathlib import Path

from foldkit_agent import AuditEntry, AuditLog, JsonlAuditSink
from tests.support.audit_stores import Database


def _pressed(audit: AuditLog, invocation_id: str, actor: str | None) -> AuditEntry:
    return audit.record(
        invocation_id=invocation_id,
        transport="mcp",
        capability="create_todo",
        tag="RequestedCreateTodo",
        principal=None,
        decision="dispatched",
        outcome="completed",
        actor=actor,
    )


def test_each_database_keeps_the_actor_of_each_call(database: Database) -> None:
    sink = database.make()
    audit = AuditLog(sink=sink)
    for n, actor in enumerate(("view", "agent", None)):
        _pressed(audit, f"i{n}", actor)
    assert audit.close(10.0)
    assert [(e.invocation_id, e.actor) for e in sink.query()] == [
        ("i0", "view"),
        ("i1", "agent"),
        ("i2", None),
    ]


def test_json_lines_keep_the_actor_and_old_lines_read_none(tmp_path: Path) -> None:
    sink = JsonlAuditSink(tmp_path / "audit.jsonl")
    audit = AuditLog(sink=sink)
    entry = _pressed(audit, "i0", "view")
    audit.close()
    assert [e.actor for e in sink.read()] == ["view"]
    written_before = {k: v for k, v in entry.to_json().items() if k != "actor"}
    assert AuditEntry.from_json(written_before).actor is None


def test_an_actor_is_recorded_as_text_of_at_most_40_characters() -> None:
    audit = AuditLog()
    entry = _pressed(audit, "i0", "view" + "x" * 100)
    assert entry.actor == "view" + "x" * 36
    assert _pressed(audit, "i1", 7).actor == "7"  # type: ignore[arg-type]
