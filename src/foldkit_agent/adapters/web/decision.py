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
from ...edge.approvals import ParkedApproval
from ...runtime.outcome import Outcome

__all__ = ["MAX_MESSAGE", "answered", "approval_from"]

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


def answered(got: Outcome | ParkedApproval) -> dict[str, Any]:
    """What a page says of an answered call's next step: ``{"ok": true, "approved": bool,
    "outcome", "reason"?, "text"}``, where ``approved`` says whether the Message was sent
    (``false`` for a call refused as stale however the person answered), or ``{"ok": true,
    "approved": false, "outcome": "asked again"}`` when the call asks once more (the Model
    changed, or the input was edited)."""
    if isinstance(got, ParkedApproval):
        text = "The call asks again, with the new preview."
        return {"ok": True, "approved": False, "outcome": "asked again", "text": text}
    answer: dict[str, Any] = {"ok": True, "approved": got.kind != "refused", "outcome": got.kind}
    if isinstance(reason := got.data.get("reason"), str):
        answer["reason"] = reason
    return {**answer, "text": got.text}
