"""The application substrate: Messages, the application capture, projections, the host
seam and a minimal Elm-architecture runtime (:class:`Program`).

It imports nothing of agents; :mod:`foldkit_agent.contract` builds on it. ``__all__`` is the
substrate's types (and ``message_union``), which the front door re-exports whole; its
functions are in the ``surface`` and ``projection`` namespaces."""

from __future__ import annotations

from .commands import Effect, Then
from .host import Host, SupportsHost, Unsubscribe
from .message import Message, MessageUnion, message_union
from .program import Command, Program, Running
from .projection import Projection
from .surface import Action, Application, Feature, FieldRef, MessageSet

__all__ = [
    "Action",
    "Application",
    "Command",
    "Effect",
    "Feature",
    "FieldRef",
    "Host",
    "Message",
    "MessageSet",
    "MessageUnion",
    "Program",
    "Projection",
    "Running",
    "SupportsHost",
    "Then",
    "Unsubscribe",
    "message_union",
]
