"""``foldkit_agent.message``: the Message base class and the closed union (from :mod:`.app`).

from foldkit_agent.message import Message, message_union
"""

from __future__ import annotations

from .app.message import Message, MessageUnion, message_union, tag_of

__all__ = ["Message", "MessageUnion", "message_union", "tag_of"]
