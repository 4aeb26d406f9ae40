"""Asking a person over A2A: the task waits in ``INPUT_REQUIRED`` (DESIGN §11).

A capability declared with ``confirm`` needs a person's approval. The call's task goes to
``TASK_STATE_INPUT_REQUIRED`` with the request as its status message: a text part (the
request's text: the Message and the preview of what it changes) and a data part
``{"approval": <ApprovalRequest.to_json()>, "reply": {...}}`` (the answers it takes). The
invocation stays in flight, parked under the task id (:mod:`foldkit_agent.edge.approvals`),
until a follow-up message **on the same task, from the same caller** carries one data part:

* ``{"approve": true}`` approves;
* ``{"approve": true, "input": {...}}`` approves with the person's edited input (the whole
  input): it is decoded strictly again and the task asks once more, with the new preview;
* ``{"approve": false}`` declines, and ``{"approve": false, "message": "..."}`` declines
  telling the agent why (quoted in the refusal).

Anything else in the follow-up declines. The task then runs to its usual end, or, asked again
(the Model changed while the person decided, or the input was edited), is back in
``INPUT_REQUIRED`` with the new request. A person may answer at the console instead; the task
then reaches the same states, read with ``tasks/get``. Other callers cannot answer it: the
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
from ...edge.approvals import declined

__all__ = ["APPROVE_FIELD", "answer_in", "approval_message", "approver_name", "owner_of"]

APPROVE_FIELD = "approve"
MESSAGE_FIELD = "message"
INPUT_FIELD = "input"

_HOW_TO_ANSWER = (
    'To answer, send a message on this task with one data part: {"approve": true} to send '
    'it, {"approve": true, "input": {...}} to send it with edited input, or {"approve": false, '
    '"message": "..."} to decline (the message optional).'
)
_REPLY = {
    APPROVE_FIELD: "true | false",
    INPUT_FIELD: "the whole edited input, with approve true (optional)",
    MESSAGE_FIELD: "what the agent should know, with approve false (optional)",
}


def approval_message(updater: TaskUpdater, request: ApprovalRequest) -> Message:
    """The ``INPUT_REQUIRED`` status message that asks about ``request``."""
    parts: list[Part] = [
        new_text_part(f"{request.text()}\n{_HOW_TO_ANSWER}"),
        new_data_part({"approval": request.to_json(), "reply": _REPLY}),
    ]
    return updater.new_agent_message(parts)


def answer_in(message: Message | None, by: str | None) -> Approval:
    """What a follow-up message answers (module docs): approval only when it is exactly one
    part, a data part ``{"approve": true}``, with at most an ``input`` object beside it.

    Anything else declines: ``{"approve": false}`` (with its ``message``, if text), another
    value or field, text, or several parts (a client that shows only one of them must never
    show "declined" while the server approves).
    """
    if message is None or len(message.parts) != 1:
        return Approval(approved=False, by=by)
    (part,) = message.parts
    value: Any = MessageToDict(part.data) if part.HasField("data") else None
    fields: Mapping[str, Any] = cast(Mapping[str, Any], value) if isinstance(value, Mapping) else {}
    approve = fields.get(APPROVE_FIELD)
    # `is True`, not `==`: 1 and 1.0 equal True in Python, and they are not an approval.
    if approve is True and set(fields) <= {APPROVE_FIELD, INPUT_FIELD}:
        edited = fields.get(INPUT_FIELD)
        if edited is None:
            return Approval(approved=True, by=by)
        if isinstance(edited, Mapping):
            return Approval(approved=True, by=by, input=dict(cast(Mapping[str, Any], edited)))
    if approve is False and set(fields) <= {APPROVE_FIELD, MESSAGE_FIELD}:
        return declined(fields.get(MESSAGE_FIELD), by)
    return Approval(approved=False, by=by)


def approver_name(subject: str | None) -> str:
    """Who answered, for the audit's ``approved_by``: the authenticated caller, if any."""
    return subject if subject else "a2a caller"


def owner_of(context: ServerCallContext, credentials_key: str) -> str | None:
    """The caller a parked task is bound to: the authenticated subject, if any."""
    creds = context.state.get(credentials_key)
    subject = getattr(creds, "subject", None)
    return subject if isinstance(subject, str) and subject else None
