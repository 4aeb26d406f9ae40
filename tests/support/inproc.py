"""What the in-process framework tests share: the todo app's users and one scripted errand.

Each framework's tests drive the todo example (``examples.todo``) through the same errand —
create a todo, select it, clear the selection — and check that the model was offered, at each
step, exactly what the application made available.
"""

from __future__ import annotations

from typing import Any

from examples.todo import User

ALICE = User(id="alice", can_delete=True)
"""May delete todos."""

BOB = User(id="bob")
"""May not delete todos."""

EVERY = (
    "create_todo",
    "rename_todo",
    "toggle_todo",
    "select_todo",
    "clear_selection",
    "delete_todo",
)
"""The todo contract's capabilities, in declaration order."""

ERRAND: tuple[tuple[str, dict[str, Any]], ...] = (
    ("create_todo", {"title": "Milk"}),
    ("select_todo", {"id": "todo-1"}),
    ("clear_selection", {}),
)
"""One call per model step."""

OFFERED_DURING_ERRAND = [list(EVERY[:1]), list(EVERY[:4]), list(EVERY), list(EVERY[:4])]
"""What is available before each step of :data:`ERRAND`, and after its last."""
