"""Approval: a person confirms a capability's Message before it is sent (DESIGN §11).

A capability declared with ``confirm=True`` (or ``confirm=predicate``) adds one step to its
calls, after the Message is constructed and before it is dispatched: the runtime hands an
:class:`ApprovalRequest` to ``invocation.approver`` (supplied by the transport that can ask
a person) and dispatches the very Message it described only on ``Approval(approved=True)``.
This module holds the declaration and the two values that cross the seam; the waiting is in
:mod:`foldkit_agent.runtime`.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, Literal

from ..app.message import Message
from ..errors import AgentContractError

__all__ = [
    "DEFAULT_APPROVAL_TIMEOUT",
    "Approval",
    "ApprovalDecision",
    "ApprovalRequest",
    "ApprovalsFull",
    "Approver",
    "Confirm",
    "check_confirm",
    "short_json",
]

DEFAULT_APPROVAL_TIMEOUT = 300.0
"""Seconds a call waits for a person's answer before it is refused with ``"timeout"``."""


class ApprovalsFull(Exception):
    """What an approver raises when it cannot keep one more call waiting for a person.

    The runtime refuses the call as :class:`~foldkit_agent.errors.AgentApprovalError`
    ``"unavailable"`` (fail closed, nothing sent), with a text naming the limit.

    Attributes:
        limit: the cap reached (calls waiting at once).
        yours: ``True`` for the caller's own cap, ``False`` for the server's cap.

    Example:
        >>> raise ApprovalsFull(16, yours=True)
    """

    def __init__(self, limit: int, *, yours: bool) -> None:
        super().__init__(f"{limit} calls wait for approval")
        self.limit = limit
        self.yours = yours


ApprovalDecision = Literal["approved", "declined", "timeout", "unavailable"]
"""What the audit entry's ``approval`` field records (``None`` when nobody was asked)."""

Confirm = bool | Callable[[Any], Any]
"""``confirm=``: ``True``, ``False``, or ``(AuthorizationRequest) -> bool`` (or an awaitable)."""


@dataclass(frozen=True, slots=True)
class ApprovalRequest:
    """What a person is asked to approve: one constructed Message, before it is sent.

    Attributes:
        capability: the capability's name (``"delete_todo"``).
        title: a human-readable name for it (the capability's title, else its name).
        description: the capability's description.
        input: the call's input as JSON data (what the agent sent, as decoded).
        message: the Message that will be dispatched if, and only if, this is approved.
        preview: the change this Message makes to the context projection, as a JSON Patch
            (RFC 6902: ``[{"op": "remove", "path": "/todos/0"}, ...]``), computed with
            ``host.simulate``; ``None`` when the host cannot simulate or the contract has no
            context. ``[]`` means the agent would see no change.
        summary: the preview in a few words for a person (``"removes todos.0 (was {...})"``),
            or ``None`` without a preview.

    Example:
        >>> request.text()
        'Approve "Delete todo" (delete_todo)? ...'
    """

    capability: str
    title: str
    description: str
    input: Any
    message: Message
    preview: list[dict[str, Any]] | None
    summary: str | None = None

    def to_json(self) -> dict[str, Any]:
        """The request as JSON data, for a transport to show or send.

        Keys: ``capability``, ``title``, ``description``, ``input``, ``message`` (the
        Message's ``{"_tag", ...}`` form), ``preview``, ``summary``.
        """
        return {
            "capability": self.capability,
            "title": self.title,
            "description": self.description,
            "input": self.input,
            "message": self.message.encode(),
            "preview": self.preview,
            "summary": self.summary,
        }

    def text(self) -> str:
        """The request as a few lines of text for a person: what, with what, and the change.

        Every transport that shows text (an MCP elicitation, an A2A message) uses this one
        rendering.
        """
        head = (
            f'Approve "{self.title}" ({self.capability})?'
            if self.title != self.capability
            else f"Approve {self.capability}?"
        )
        lines = [head, self.description, f"Message: {short_json(self.message.encode(), 400)}"]
        if self.preview is None:
            lines.append("Preview: not available (the application cannot simulate this change).")
        else:
            lines.append(f"Change: {self.summary or 'none'}")
        lines.append("Nothing is sent unless you approve.")
        return "\n".join(lines)


@dataclass(frozen=True, slots=True)
class Approval:
    """A person's answer to an :class:`ApprovalRequest`.

    Attributes:
        approved: ``True`` sends the Message; ``False`` refuses the call (``"declined"``).
        by: who answered, as the transport knows them (a user id, ``"mcp:client-name"``);
            recorded as the audit entry's ``approved_by``. ``None`` when unknown.

    Example:
        >>> Approval(approved=True, by="alice")
    """

    approved: bool
    by: str | None = None


Approver = Callable[[ApprovalRequest], Awaitable[Approval]]
"""``invocation.approver``: ``async (ApprovalRequest) -> Approval``, supplied by a transport
that can ask a person. Cancelled when the call is cancelled or the approval times out."""


def check_confirm(tag: str, confirm: Any) -> Confirm | None:
    """``confirm`` as declared, checked: ``None`` for no approval, else ``True`` or a callable.

    Raises:
        AgentContractError: ``confirm`` is neither a bool nor a callable (naming the variant).
    """
    if confirm is None or confirm is False:
        return None
    if confirm is True or callable(confirm):
        return confirm  # pyright: ignore[reportUnknownVariableType]
    raise AgentContractError(
        f"{tag!r}: confirm= takes True, False or a predicate (AuthorizationRequest) -> bool, "
        f"not {type(confirm).__name__}",
        capability=tag,
    )


def short_json(value: Any, limit: int, *, sort_keys: bool = True) -> str:
    """``value`` as compact JSON text, cut to ``limit`` characters (ending in ``…``).

    ``sort_keys=False`` keeps an object's own key order (a Model's field order, where the
    fields a person recognises, such as an id and a title, usually come first).
    """
    text = json.dumps(value, ensure_ascii=False, sort_keys=sort_keys, default=str)
    return text if len(text) <= limit else text[: limit - 1] + "…"
