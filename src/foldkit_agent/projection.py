"""The ``projection`` namespace: what part of the Model an agent may see (from :mod:`.app`).

context = projection.pick(App.model.todos, App.model.selected_todo_id)
"""

from __future__ import annotations

from .app.projection import Projection, compose, pick

__all__ = ["Projection", "compose", "pick"]
