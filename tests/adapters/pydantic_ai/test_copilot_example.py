"""``python -m examples.todo.copilot`` runs as docs/in-process.md says, offline."""

from __future__ import annotations

import subprocess
import sys

from tests.support.paths import ROOT


def test_the_copilot_example_runs_and_its_audit_shows_each_decision() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "examples.todo.copilot"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    out = done.stdout
    assert (
        "model reads (retried): Refused: "
        "Invalid input for 'create_todo': title: missing required field; "
        "name: unexpected field. Accepted fields: title." in out
    )
    assert (
        "model reads (failed): Refused: "
        "Not authorized to use 'delete_todo': bob may not delete todos" in out
    )
    # the application asked its user before the delete was sent, showing what goes
    asked = [line for line in out.splitlines() if line.startswith("  the app asks the user: ")]
    assert len(asked) == 1
    assert 'removes todos.0 (was {"id": "todo-1", "title": "Buy milk"' in asked[0]
    todos = out.split("== the todos\n", 1)[1].split("\n\n", 1)[0]
    assert todos.splitlines() == ["  todo-2: Call mom (saved: True)"]
    audit = out.split("== the audit trail\n", 1)[1]
    assert audit.splitlines() == [
        "  pydantic-ai alice create_todo refused AgentInvalidInputError",
        "  pydantic-ai alice create_todo dispatched completed",
        "  pydantic-ai alice create_todo dispatched completed",
        "  pydantic-ai alice select_todo dispatched ok",
        "  pydantic-ai alice delete_todo dispatched ok (approved by alice)",
        "  pydantic-ai bob select_todo dispatched ok",
        "  pydantic-ai bob delete_todo refused AgentAuthorizationError",
    ]
