"""The application substrate: Messages, the application capture, projections, the host
seam and a minimal Elm-architecture runtime (:class:`Program`).

It imports nothing of agents; :mod:`foldkit_agent.contract` builds on it."""

from __future__ import annotations

from .host import (
    Host,
    SupportsHost,
    Unsubscribe,
)
from .message import (
    Message,
    MessageUnion,
    message_union,
    tag_of,
)
from .program import (
    Command,
    Program,
    Running,
)
from .projection import (
    Projection,
    compose,
    pick,
)
from .surface import (
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
    "Command",
    "FieldRef",
    "Host",
    "Message",
    "MessageSet",
    "MessageUnion",
    "Program",
    "Projection",
    "Running",
    "SupportsHost",
    "Unsubscribe",
    "action",
    "application",
    "compose",
    "message_set",
    "message_set_union",
    "message_union",
    "pick",
    "tag_of",
]
