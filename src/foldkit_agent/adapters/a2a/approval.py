"""Asking a person over A2A: the task waits in ``INPUT_REQUIRED`` (DESIGN §11).

A capability declared with ``confirm`` needs a person's approval. The call's task goes to
``TASK_STATE_INPUT_REQUIRED`` with the request as its status message: a text part (the
request's text: the Message and the preview of what it changes) and a data part
``{"approval": <ApprovalRequest.to_json()>, "reply": {"approve": "true | false"}}``. The
invocation stays in flight, parked under the task id (:mod:`foldkit_agent.edge.approvals`),
until a follow-up message **on the same task, from the same caller** carries a data part
``{"approve": true}`` (approve) or ``{"approve": false}`` (decline); anything else in the
follow-up declines. The task then runs to its usual end. Other callers cannot answer it: the
SDK's task store is scoped to its owner, and the parked call is bound to it too.

A task whose approval times out (the runtime's ``approval_timeout``) or is cancelled while it
waits ends ``REJECTED`` / ``CANCELED`` with nothing sent.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, cast

from a2a.helpers import new_data_part, new_text_part
from a2a.server.context import ServerCallContext
from a2a.server.tasks import TaskUpdater
from a2a.types import Message, Part
from google.protobuf.json_format import MessageToDict

from ...contract.approval import Approval, ApprovalRequest

__all__ = ["APPROVE_FIELD", "answer_in", "approval_message", "approver_name", "owner_of"]

APPROVE_FIELD = "approve"

_HOW_TO_ANSWER = (
    'To answer, send a message on this task with one data part: {"approve": true} to send '
    'it, or {"approve": false} to decline.'
)


def approval_message(updater: TaskUpdater, request: ApprovalRequest) -> Message:
    """The ``INPUT_REQUIRED`` status message that asks about ``request``."""
    parts: list[Part] = [
        new_text_part(f"{request.text()}\n{_HOW_TO_ANSWER}"),
        new_data_part({"approval": request.to_json(), "reply": {APPROVE_FIELD: "true | false"}}),
    ]
    return updater.new_agent_message(parts)


def answer_in(message: Message | None, by: str | None) -> Approval:
    """What a follow-up message answers: approval only when it is exactly one part, a data part
    that is exactly ``{"approve": true}``.

    Anything else declines: ``{"approve": false}``, another value or field, text, or several
    parts (a client that shows only one of them must never show "declined" while the server
    approves).
    """
    if message is None or len(message.parts) != 1:
        return Approval(approved=False, by=by)
    (part,) = message.parts
    value: Any = MessageToDict(part.data) if part.HasField("data") else None
    fields: Mapping[str, Any] = cast(Mapping[str, Any], value) if isinstance(value, Mapping) else {}
    # `is True`, not `==`: 1 and 1.0 equal True in Python, and they are not an approval.
    approved = len(fields) == 1 and fields.get(APPROVE_FIELD) is True
    return Approval(approved=approved, by=by)


def approver_name(subject: str | None) -> str:
    """Who answered, for the audit's ``approved_by``: the authenticated caller, if any."""
    return subject if subject else "a2a caller"


def owner_of(context: ServerCallContext, credentials_key: str) -> str | None:
    """The caller a parked task is bound to: the authenticated subject, if any."""
    creds = context.state.get(credentials_key)
    subject = getattr(creds, "subject", None)
    return subject if isinstance(subject, str) and subject else None
