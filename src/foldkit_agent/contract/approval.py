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
from .visible import visible

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
            Machine data: no view shows it (its ``_tag`` form and any id ``to_message``
            added mean nothing to a person); views show ``sentence`` or ``fields``.
        preview: the change this Message makes to the context projection, as a JSON Patch
            (RFC 6902: ``[{"op": "remove", "path": "/todos/0"}, ...]``), computed by running
            ``update`` on the snapshot (:mod:`foldkit_agent.runtime.preview`); ``None`` when
            the host cannot simulate or the contract has no context. ``[]`` means the agent
            would see no change.
        summary: the preview in a few words for a person (``"removes todos.0 (was {...})"``),
            or ``None`` without a preview.
        sentence: what the call does in one sentence, from the variant's ``describe=``
            (``"Archive 3 done cards"``), or ``None`` when it declares none.
        fields: the input as labelled fields ``((label, value), ...)`` (``("Title", "Milk")``),
            shown when there is no ``sentence``.
        effects: what the Message's commands do beyond the Model, as their declared
            descriptions (``("saves to the server",)``); shown as "then: ...".
        asks: 1 the first time; 2 when the person is asked again because the Model changed
            while they decided (the preview they saw no longer holds).
        before: the context projection of the snapshot the preview starts from (JSON data),
            so a view can show ``preview`` as a diff of what the agent sees; ``None`` without
            a preview. Not in :meth:`to_json` (a transport sends the patch, not the context).

    Every string a view shows (:meth:`text`, and ``title``, ``sentence``, ``fields``,
    ``summary``, ``effects`` of :meth:`to_json`) went through
    :func:`~foldkit_agent.contract.visible.visible`: control, bidi and line-separator
    characters are written as ``⟨U+202E⟩``-style escapes.

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
    sentence: str | None = None
    fields: tuple[tuple[str, str], ...] = ()
    effects: tuple[str, ...] = ()
    asks: int = 1
    before: Any = None

    def to_json(self) -> dict[str, Any]:
        """The request as JSON data, for a transport to show or send.

        Keys: ``capability``, ``title``, ``description``, ``sentence``, ``fields``
        (``[{"label", "value"}, ...]``), ``input``, ``message`` (the Message's
        ``{"_tag", ...}`` form, for machines), ``preview``, ``summary``, ``effects``,
        ``asks``, ``text`` (:meth:`text`). The strings meant to be shown are already
        :func:`~foldkit_agent.contract.visible.visible`; ``input``, ``message`` and
        ``preview`` are data as they are.
        """
        return {
            "capability": self.capability,
            "title": visible(self.title),
            "description": visible(self.description),
            "sentence": None if self.sentence is None else visible(self.sentence),
            "fields": [{"label": visible(k), "value": visible(v)} for k, v in self.fields],
            "input": self.input,
            "message": self.message.encode(),
            "preview": self.preview,
            "summary": None if self.summary is None else visible(self.summary),
            "effects": [visible(e) for e in self.effects],
            "asks": self.asks,
            "text": self.text(),
        }

    def shown(self) -> str:
        """What the person is asked, in one line: the ``sentence``, else the title and the
        fields (``'Create todo (Title: Milk)'``); the audit entry's ``approval_text``."""
        if self.sentence is not None:
            return visible(self.sentence)
        if not self.fields:
            return visible(self.title)
        listed = "; ".join(f"{k}: {v}" for k, v in self.fields)
        return visible(f"{self.title} ({listed})")

    def text(self) -> str:
        """The request as a few lines of text for a person: what, with what, and the change.

        Every transport that shows text (an MCP elicitation, an A2A message, the page) uses
        this one rendering; no line of it shows the Message's ``_tag`` form or an id the
        agent did not send.
        """
        head = (
            f'Approve "{self.title}" ({self.capability})?'
            if self.title != self.capability
            else f"Approve {self.capability}?"
        )
        lines = [head]
        if self.asks > 1:
            lines.append("The application changed while you decided; this is the new preview.")
        if self.sentence is not None:
            lines.append(self.sentence)
        else:
            if self.description:
                lines.append(self.description)
            lines.extend(f"  {label}: {value}" for label, value in self.fields)
        if self.preview is None:
            lines.append("Preview: not available (the application cannot simulate this change).")
        else:
            lines.append(f"Change: {self.summary or 'none'}")
        lines.extend(f"Then: {effect}" for effect in self.effects)
        lines.append("Nothing is sent unless you approve.")
        # one line per entry: an agent's newline or separator is escaped, never a new line
        return "\n".join(visible(line) for line in lines)


@dataclass(frozen=True, slots=True)
class Approval:
    """A person's answer to an :class:`ApprovalRequest`: approve, decline (with a message the
    agent receives), or approve with edited input.

    Attributes:
        approved: ``True`` sends the Message; ``False`` refuses the call (``"declined"``).
        by: who answered, as the transport knows them (a user id, ``"mcp:client-name"``);
            recorded as the audit entry's ``approved_by``. ``None`` when unknown.
        message: with ``approved=False``, what the person tells the agent; it is quoted in
            the refusal's text (as visible text), so the agent can act on it. Ignored on an
            approval.
        input: with ``approved=True``, the input the person edited, as JSON data (the whole
            input, not a patch). It is decoded strictly like the agent's, the Message is built
            from it again, and the person is asked once more with the new preview; only that
            second approval sends, once. Invalid edited input refuses the call, nothing sent.
            ``None`` approves the input as the agent sent it.

    Example:
        >>> Approval(approved=True, by="alice")
        >>> Approval(approved=False, message="Archive only the cards older than a week")
        >>> Approval(approved=True, input={"title": "Buy oat milk"})
    """

    approved: bool
    by: str | None = None
    message: str | None = None
    input: Any = None


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
