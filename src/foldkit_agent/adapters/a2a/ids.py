"""The ids a caller names that the A2A task store keeps, checked before anything runs.

The SDK's task table (``DatabaseTaskStore``) keys a task on ``id`` and ``context_id``, both
``VARCHAR(36)``, and PostgreSQL holds no NUL in text: an id past that, once the call ran,
could not be saved, so the caller saw a generic failure for a call that had run (and a retry
ran it again). So every store (in memory, SQLite, PostgreSQL) is held to one rule, checked on
the request before any task is created or any capability runs:

=====================================  ==========================================================
id                                     rule
=====================================  ==========================================================
task id, context id, reference task    at most :data:`MAX_ID` (36) characters, no control
ids (``SendMessage``, ``GetTask``,     character (``U+0000``-``U+001F``, ``U+007F``-``U+009F``)
``CancelTask``, ``SubscribeToTask``,
``ListTasks``' ``contextId``)
message id                             at most :data:`MAX_MESSAGE_ID` (128) characters, no
                                       control character
=====================================  ==========================================================

A request past the rule is answered invalid params (``-32602``) naming the field; nothing is
created, dispatched or audited. The SDK's client (and the JS one) makes UUIDs, 36 characters.
"""

from __future__ import annotations

import re
from typing import Final

from a2a.utils.errors import InvalidParamsError

__all__ = ["MAX_ID", "MAX_MESSAGE_ID", "check_id"]

MAX_ID: Final = 36
"""The longest task or context id: the SDK's task table holds ``VARCHAR(36)``."""

MAX_MESSAGE_ID: Final = 128
"""The longest message id (kept in a task's history)."""

_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")


def check_id(field: str, value: str, limit: int = MAX_ID) -> None:
    """Refuse ``value`` (the id in ``field``) unless the task store can hold it.

    Raises:
        InvalidParamsError: longer than ``limit`` characters, or a control character in it.

    Example:
        >>> check_id("message.contextId", "ctx-1")
    """
    if len(value) > limit:
        raise InvalidParamsError(
            message=f"{field} is {len(value)} characters long; send an id of at most {limit} "
            "characters (a UUID is 36)."
        )
    if _CONTROL.search(value):
        raise InvalidParamsError(
            message=f"{field} holds a control character; send an id of printable characters "
            "(a UUID)."
        )
