"""``foldkit-agent demo``: readable at 80 columns, honest about what keeps running (issue 19)."""

from __future__ import annotations

import os
import re
import socket
import subprocess
import sys
from pathlib import Path

from tests.support.paths import ROOT

CLI = str(Path(sys.executable).parent / "foldkit-agent")


def demo_output(columns: int) -> str:
    done = subprocess.run(
        [CLI, "demo"],
        cwd=ROOT,
        env={**os.environ, "COLUMNS": str(columns), "NO_COLOR": "1"},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def shape(text: str) -> list[str]:
    """The lines with what varies between runs (timings, ports, ids) blanked out."""
    return [re.sub(r"\d+", "N", line).rstrip() for line in text.splitlines()]


def test_the_demo_fits_80_columns_and_no_line_is_wrapped_by_the_terminal() -> None:
    narrow, wide = demo_output(80), demo_output(200)
    assert max(len(line) for line in narrow.splitlines()) <= 80
    assert shape(narrow) == shape(wide)  # the demo wraps its own lines, at words
    assert "protocol 2026" not in narrow


def test_the_demo_says_its_server_is_gone_and_offers_demo_serve() -> None:
    out = demo_output(80)
    assert "only while the demo runs" in out.splitlines()[2]
    assert "The demo's server has stopped." in out
    assert out.rstrip().endswith(".venv/bin/foldkit-agent demo --serve")


def test_demo_serve_on_a_port_in_use_is_one_line_without_a_traceback() -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        done = subprocess.run(
            [CLI, "demo", "--serve", "--port", str(port)],
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=120,
        )
    assert done.returncode == 2
    assert done.stdout == ""
    assert done.stderr == (
        f"error: cannot listen on 127.0.0.1:{port}: Address already in use; choose another "
        "--port (0 picks a free one)\n"
    )


def test_the_demo_shows_one_delete_declined_and_one_approved_each_with_its_preview() -> None:
    out = demo_output(80)
    lines = [line.strip() for line in out.splitlines()]
    asked = [
        i for i, line in enumerate(lines) if line == "alice's client asks her (MCP elicitation):"
    ]
    assert len(asked) == 2
    for start in asked:  # the request as the person reads it, preview included
        shown = " ".join(lines[start + 1 : start + 8])
        assert 'Approve "Delete selected todo" (delete_todo)?' in shown
        assert 'Delete the todo "Read the guide"' in shown  # describe=, never the _tag form
        assert "_tag" not in shown
        assert 'Change: removes todos.0 (was {"id": "todo-1", "title": "Read the guide",' in shown
        assert 'changes selected_todo_id from "todo-1" to null' in shown
    answers = [line for line in lines if line.startswith("she answers: ")]
    assert answers == ["she answers: decline", "she answers: approve"]
    assert any(
        line.startswith("✗ alice: delete_todo (declined): refused, AgentApprovalError")
        for line in lines
    )
    assert any(line.startswith("✓ alice: delete_todo (approved): dispatched") for line in lines)
    todos = [line for line in lines if line.startswith("todos now: ")]
    assert todos == ["todos now: Read the guide, Write the tests", "todos now: Write the tests"]
    audit = [line.split() for line in lines if " delete_todo " in f" {line} "]
    assert ["5", "alice", "delete_todo", "refused", "declined", "AgentApprovalError"] in audit
    assert ["6", "alice", "delete_todo", "dispatched", "approved", "ok"] in audit


def test_what_demo_serve_prints_fits_80_columns_and_names_the_local_user() -> None:
    from foldkit_agent.cli.demo import _configs  # pyright: ignore[reportPrivateUsage]

    lines = _configs("http://127.0.0.1:65535/mcp", "http://127.0.0.1:65535")
    assert max(len(line) for line in lines) <= 80, max(lines, key=len)
    assert '"alice;todos:delete"' in "\n".join(lines)  # as docs/mcp.md shows it
