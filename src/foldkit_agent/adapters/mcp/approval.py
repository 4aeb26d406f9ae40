"""Asking a person over MCP: elicitation, in both protocol eras (DESIGN §11).

A capability declared with ``confirm`` needs a person's approval. An MCP client that declared
the ``elicitation`` capability can ask its user; the adapter then asks with a form-mode
elicitation (:func:`approve_schema`) whose message is the request's text (the Message and the
preview of what it changes): a boolean ``approve``, a text ``message`` the agent receives when
the person declines, and each input field that is a string, number or boolean, filled with the
agent's value, for the person to change before approving. A client that declared nothing gets
no approver, so the runtime refuses the call as ``"unavailable"``: never a silent approval.

How the question travels depends on the era (protocol notes §1.0):

* handshake era (``2024-11-05`` … ``2025-11-25``): the server sends ``elicitation/create``
  on the ``tools/call`` request's own stream and awaits the answer inside the handler;
* modern era (``2026-07-28``): there is no server-to-client request. The ``tools/call``
  returns an ``InputRequiredResult`` carrying the elicitation and an opaque
  ``request_state``; the client asks its user and calls again with the answer and the same
  ``request_state``. The invocation itself stays in flight in between, parked
  (:mod:`foldkit_agent.edge.approvals`) under an unguessable single-use token bound to the
  caller, so the Message approved is the one dispatched.
  A parked call that is never resumed is refused by the runtime's approval timeout. When the
  call asks again (the Model changed while the person decided, or they edited the input), the
  answer is another ``InputRequiredResult`` with a new ``request_state``.

Only ``accept`` with ``"approve": true`` (the JSON ``true``) approves; a changed input field
approves the call with that value (decoded strictly again, and the person asked once more with
its preview). ``decline``, ``cancel``, ``"approve": false`` (with its ``message``, if any), a
field the form does not have, a missing or malformed answer all decline.
"""

from __future__ import annotations

import logging
from typing import Any, cast

import mcp.types as types
from mcp.server import ServerRequestContext
from mcp.server.request_state import authenticated_principal

from ...contract.approval import Approval, ApprovalRequest, Approver
from ...contract.visible import visible
from ...edge.approvals import MESSAGE_MAX, declined

__all__ = [
    "APPROVE_FIELD",
    "INPUT_KEY",
    "MESSAGE_FIELD",
    "answer_of",
    "approve_schema",
    "approver_name",
    "can_elicit",
    "elicit_request",
    "handshake_approver",
    "owner_of",
]

_log = logging.getLogger("foldkit_agent.adapters.mcp")

APPROVE_FIELD = "approve"
MESSAGE_FIELD = "message"
INPUT_KEY = "foldkit/approval"
"""The key of the elicitation in a modern-era ``InputRequiredResult.input_requests``."""

_ANSWER_FIELDS: dict[str, Any] = {
    APPROVE_FIELD: {
        "type": "boolean",
        "title": "Approve",
        "description": "Send this request to the application",
        "default": False,
    },
    MESSAGE_FIELD: {
        "type": "string",
        "title": "Message to the agent",
        "description": "If you decline: what the agent should know or do instead (optional)",
        "maxLength": MESSAGE_MAX,
    },
}

_JSON_TYPES: tuple[tuple[type, str], ...] = ((bool, "boolean"), (int, "integer"), (float, "number"))


def _editable(request: ApprovalRequest) -> dict[str, tuple[str, Any]]:
    """The input fields a form can carry (a string, number or boolean value), by name:
    ``(its JSON Schema type, the agent's value)``. A field named like the form's own
    (``approve``, ``message``) is left out: it cannot be changed here."""
    data: Any = request.input
    if not isinstance(data, dict):
        return {}
    editable: dict[str, tuple[str, Any]] = {}
    for name, value in cast(dict[str, Any], data).items():
        if name in _ANSWER_FIELDS:
            continue
        if isinstance(value, str):
            editable[name] = ("string", value)
            continue
        kind = next((k for t, k in _JSON_TYPES if isinstance(value, t)), None)
        if kind is not None:
            editable[name] = (kind, value)
    return editable


def approve_schema(request: ApprovalRequest) -> dict[str, Any]:
    """The form a person answers about ``request``: ``approve`` (boolean, required),
    ``message`` (text for the agent, with a decline) and each editable input field, titled
    with its label and filled with the agent's value.

    Example:
        >>> sorted(approve_schema(request)["properties"])
        ['approve', 'message', 'title']
    """
    labels = dict(zip(_names(request), (label for label, _v in request.fields), strict=False))
    properties = dict(_ANSWER_FIELDS)
    for name, (kind, value) in _editable(request).items():
        properties[name] = {
            "type": kind,
            "title": visible(labels.get(name, name)),
            "description": "Change it to send the call with your value instead",
            "default": value,
        }
    return {"type": "object", "properties": properties, "required": [APPROVE_FIELD]}


def _names(request: ApprovalRequest) -> list[str]:
    data: Any = request.input
    return list(cast(dict[str, Any], data)) if isinstance(data, dict) else []


def can_elicit(ctx: ServerRequestContext[Any, Any]) -> bool:
    """Whether the client on this request declared the ``elicitation`` capability (any era)."""
    try:
        wanted = types.ClientCapabilities(elicitation=types.ElicitationCapability())
        return bool(ctx.session.check_client_capability(wanted))
    except Exception:
        _log.debug("could not read the client's capabilities", exc_info=True)
        return False


def answer_of(result: Any, by: str | None, request: ApprovalRequest | None) -> Approval:
    """The :class:`Approval` an elicitation answer about ``request`` means (module docs).

    ``accept`` with ``"approve": true`` approves; a field of :func:`approve_schema` whose
    value differs from the agent's (in value or JSON type) makes it an approval with edited
    input (the agent's input with those values). ``"approve": false`` declines with its
    ``message``. Any other action, a field the form lacks, or ``approve`` not a JSON boolean
    declines. ``request`` ``None`` (the call is no longer known): only the plain form is read.
    """
    action = getattr(result, "action", None)
    content = getattr(result, "content", None)
    fields = cast(dict[str, Any], content) if isinstance(content, dict) else {}
    editable = {} if request is None else _editable(request)
    approve = fields.get(APPROVE_FIELD)
    if action != "accept" or not set(fields) <= {*_ANSWER_FIELDS, *editable}:
        return Approval(approved=False, by=by)
    # `is True`, not `==`: 1 and 1.0 equal True in Python, and they are not an approval.
    if approve is not True:
        return declined(fields.get(MESSAGE_FIELD) if approve is False else None, by)
    edits = {
        name: fields[name]
        for name, (_kind, value) in editable.items()
        if name in fields and (type(fields[name]) is not type(value) or fields[name] != value)
    }
    if not edits or request is None:
        return Approval(approved=True, by=by)
    agent_sent = cast(dict[str, Any], request.input)
    return Approval(approved=True, by=by, input={**agent_sent, **edits})


def approver_name(ctx: ServerRequestContext[Any, Any], credentials: Any) -> str:
    """Who answered, for the audit's ``approved_by``: the authenticated subject (or client
    id), else the client's declared name; the person is whoever uses that client."""
    for attr in ("subject", "client_id"):
        value = getattr(credentials, attr, None)
        if isinstance(value, str) and value:
            return value
    try:
        params = ctx.session.client_params
        name = params.client_info.name if params is not None else None
    except Exception:
        name = None
    return f"mcp client {name}" if isinstance(name, str) and name else "mcp client"


def elicit_request(request: ApprovalRequest) -> types.ElicitRequest:
    """The ``elicitation/create`` request (form mode) that asks about ``request``."""
    return types.ElicitRequest(
        params=types.ElicitRequestFormParams(
            message=request.text(), requested_schema=approve_schema(request)
        )
    )


def handshake_approver(ctx: ServerRequestContext[Any, Any], by: str | None) -> Approver:
    """An approver that asks on the ``tools/call`` request's own stream (handshake era)."""

    async def approve(request: ApprovalRequest) -> Approval:
        result = await ctx.session.elicit_form(
            message=request.text(),
            requested_schema=approve_schema(request),
            related_request_id=ctx.request_id,
        )
        return answer_of(result, by, request)

    return approve


def owner_of(ctx: ServerRequestContext[Any, Any]) -> str | None:
    """The caller a parked call is bound to: the authenticated identity, if any."""
    try:
        return authenticated_principal(ctx)
    except Exception:
        return None
