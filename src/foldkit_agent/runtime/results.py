"""What a successful invocation returns."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from ..app.message import Message
from ..contract.calls import Invocation, slot_setters

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


_set_name, _set_tag, _set_message, _set_invocation, _set_completion = slot_setters(
    DispatchResult, "name", "tag", "message", "invocation", "completion"
)
_new = object.__new__


def dispatch_result(
    name: str,
    tag: str,
    message: Message,
    invocation: Invocation,
    completion: CompletionOutcome | None = None,
) -> DispatchResult:
    """``DispatchResult(name, tag, message, invocation, completion)``, built on the dispatch
    path in about half the frozen dataclass's ``__init__`` time (the slots are set directly)."""
    result = _new(DispatchResult)
    _set_name(result, name)
    _set_tag(result, tag)
    _set_message(result, message)
    _set_invocation(result, invocation)
    _set_completion(result, completion)
    return result
