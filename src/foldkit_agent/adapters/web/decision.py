"""A person's answer as a page posts it: ``{"approve": bool, "message"?: str, "input"?: {...}}``.

The console and the person's page take the same answer (DESIGN §15): approve, decline with a
message the agent receives, or approve with edited input (decoded again by the runtime, which
then asks once more with the new preview). This is the one reading of it.

Example:
    >>> approval_from({"approve": False, "message": "Not that one"}, by="alice")
    Approval(approved=False, by='alice', message='Not that one', input=None)
"""

from __future__ import annotations

from typing import Any, Final

from ...contract.approval import Approval

__all__ = ["MAX_MESSAGE", "approval_from"]

MAX_MESSAGE: Final = 2000
"""Longest message a person may send with a decline, in characters."""

_FIELDS = frozenset({"approve", "message", "input"})


def approval_from(fields: dict[str, Any], by: str) -> Approval | str:
    """The :class:`~foldkit_agent.contract.approval.Approval` the posted ``fields`` say, by
    ``by``; or, when they are malformed, the sentence saying what to send instead.

    A blank message is no message; a message goes with a decline only, edited input (a JSON
    object) with an approval only.
    """
    approve = fields.get("approve")
    if not isinstance(approve, bool) or not set(fields) <= _FIELDS:
        return 'Send {"approve": true} or {"approve": false, "message": "..."}.'
    extra: dict[str, Any] = {}
    message = fields.get("message")
    if message is not None:
        if approve or not isinstance(message, str) or len(message) > MAX_MESSAGE:
            return f"A message goes with a decline, as text of at most {MAX_MESSAGE} characters."
        if message.strip():
            extra["message"] = message.strip()
    if "input" in fields:
        if not approve or not isinstance(fields["input"], dict):
            return "Edited input goes with an approval, as a JSON object."
        extra["input"] = fields["input"]
    return Approval(approved=approve, by=by, **extra)
