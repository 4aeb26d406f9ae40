"""What every field-check agent run shares: the plan its scripted model follows (delete too
early, which is refused, then select the todo ``t1`` and delete it) and the one JSON line it
prints for the test to read.

The scripts beside this file run in ``.venv-field`` (``make field``), where the frameworks'
mcp 1.x clients live, and import nothing of foldkit-agent: each is a framework's own agent
loop against ``foldkit-agent serve ... --mcp http`` at the URL given as its argument.
"""

from __future__ import annotations

import json
import sys
from typing import Any

PLAN: list[tuple[str, dict[str, Any]]] = [
    ("delete_todo", {}),  # before a todo is selected: refused, and the model must read so
    ("select_todo", {"id": "t1"}),
    ("delete_todo", {}),
]
PROMPT = "Select the todo t1, then delete it."
DONE = "done"


def url() -> str:
    """The MCP URL the test passes as the script's one argument."""
    (given,) = sys.argv[1:]
    return given


def report(offered: list[list[str]], results: list[dict[str, Any]], text: str) -> None:
    """Print what the run saw as the last line of stdout: the tool names offered to the model
    at each turn, each tool result (``tool``, ``error`` as the framework marked it, ``text``)
    and the model's final text."""
    print(json.dumps({"offered": offered, "results": results, "text": text}))
