"""The ``surface`` namespace: capture an application and name its parts (from :mod:`.app`).

App = surface.application(model=Model, message=TodoMessage, initial=..., update=update)
App.model.todos          # a FieldRef
"""

from __future__ import annotations

from .app.surface import (
    Action,
    Application,
    FieldRef,
    MessageSet,
    action,
    application,
    message_set,
    message_set_union,
)

__all__ = [
    "Action",
    "Application",
    "FieldRef",
    "MessageSet",
    "action",
    "application",
    "message_set",
    "message_set_union",
]
