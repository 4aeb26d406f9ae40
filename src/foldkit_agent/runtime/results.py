"""What a successful invocation returns."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from ..app.message import Message
from ..contract.calls import Invocation

__all__ = ["CompletionOutcome", "DispatchResult"]


@dataclass(frozen=True, slots=True)
class CompletionOutcome:
    """How a completion contract resolved.

    Attributes:
        status: ``"completed"`` (a success Message or the state condition) or ``"failed"``
            (a failure Message).
        message: the result Message that resolved it, or ``None`` for a state condition.
    """

    status: Literal["completed", "failed"]
    message: Message | None = None


@dataclass(frozen=True, slots=True)
class DispatchResult:
    """A successful invocation.

    Attributes:
        name: the capability name.
        tag: the tag of the Message dispatched.
        message: the Message handed to the host.
        invocation: the :class:`Invocation` it ran under.
        completion: ``None`` without a completion contract (success means the host accepted
            the Message), else a :class:`CompletionOutcome`.
    """

    name: str
    tag: str
    message: Message
    invocation: Invocation
    completion: CompletionOutcome | None = None
