"""What a successful invocation returns."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from ..app.message import Message
from ..contract.calls import Invocation, draft_class

__all__ = ["CompletionOutcome", "DispatchResult", "dispatch_result"]


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


_Draft = draft_class(DispatchResult)


def dispatch_result(
    name: str,
    tag: str,
    message: Message,
    invocation: Invocation,
    completion: CompletionOutcome | None = None,
) -> DispatchResult:
    """``DispatchResult(name, tag, message, invocation, completion)``, built on the dispatch
    path in a fraction of the frozen dataclass's ``__init__`` time (see ``draft_class``)."""
    result = _Draft()
    result.name = name
    result.tag = tag
    result.message = message
    result.invocation = invocation
    result.completion = completion
    result.__class__ = DispatchResult
    return result
