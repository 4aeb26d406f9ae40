"""Asking a person over MCP: elicitation, in both protocol eras (DESIGN §11).

A capability declared with ``confirm`` needs a person's approval. An MCP client that declared
the ``elicitation`` capability can ask its user; the adapter then asks with a form-mode
elicitation of one boolean field, ``approve``, whose message is the request's text (the
Message and the preview of what it changes). A client that declared nothing gets no approver,
so the runtime refuses the call as ``"unavailable"``: never a silent approval.

How the question travels depends on the era (protocol notes §1.0):

* handshake era (``2024-11-05`` … ``2025-11-25``): the server sends ``elicitation/create``
  on the ``tools/call`` request's own stream and awaits the answer inside the handler;
* modern era (``2026-07-28``): there is no server-to-client request. The ``tools/call``
  returns an ``InputRequiredResult`` carrying the elicitation and an opaque
  ``request_state``; the client asks its user and calls again with the answer and the same
  ``request_state``. The invocation itself stays in flight in between, parked
  (:mod:`foldkit_agent.edge.approvals`) under an unguessable single-use token bound to the
  caller, so the Message approved is the one dispatched.
  A parked call that is never resumed is refused by the runtime's approval timeout.

Only ``accept`` with ``{"approve": true}`` approves; ``decline``, ``cancel``, a missing or
malformed answer all decline.
"""

from __future__ import annotations

import logging
from typing import Any, cast

import mcp.types as types
from mcp.server import ServerRequestContext
from mcp.server.request_state import authenticated_principal

from ...contract.approval import Approval, ApprovalRequest, Approver

__all__ = [
    "APPROVE_FIELD",
    "APPROVE_SCHEMA",
    "INPUT_KEY",
    "answer_of",
    "approver_name",
    "can_elicit",
    "elicit_request",
    "handshake_approver",
    "owner_of",
]

_log = logging.getLogger("foldkit_agent.adapters.mcp")

APPROVE_FIELD = "approve"
INPUT_KEY = "foldkit/approval"
"""The key of the elicitation in a modern-era ``InputRequiredResult.input_requests``."""

APPROVE_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        APPROVE_FIELD: {
            "type": "boolean",
            "title": "Approve",
            "description": "Send this request to the application",
            "default": False,
        }
    },
    "required": [APPROVE_FIELD],
}
"""The form a person answers: one boolean, ``approve``."""


def can_elicit(ctx: ServerRequestContext[Any, Any]) -> bool:
    """Whether the client on this request declared the ``elicitation`` capability (any era)."""
    try:
        wanted = types.ClientCapabilities(elicitation=types.ElicitationCapability())
        return bool(ctx.session.check_client_capability(wanted))
    except Exception:
        _log.debug("could not read the client's capabilities", exc_info=True)
        return False


def answer_of(result: Any, by: str | None) -> Approval:
    """The :class:`Approval` an elicitation answer means: only ``accept`` with content that is
    exactly ``{"approve": true}`` (the form has that one field; any other field declines)."""
    action = getattr(result, "action", None)
    content = getattr(result, "content", None)
    fields = cast(dict[str, Any], content) if isinstance(content, dict) else {}
    # `is True`, not `==`: 1 and 1.0 equal True in Python, and they are not an approval.
    approved = action == "accept" and len(fields) == 1 and fields.get(APPROVE_FIELD) is True
    return Approval(approved=approved, by=by)


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
            message=request.text(), requested_schema=APPROVE_SCHEMA
        )
    )


def handshake_approver(ctx: ServerRequestContext[Any, Any], by: str | None) -> Approver:
    """An approver that asks on the ``tools/call`` request's own stream (handshake era)."""

    async def approve(request: ApprovalRequest) -> Approval:
        result = await ctx.session.elicit_form(
            message=request.text(),
            requested_schema=APPROVE_SCHEMA,
            related_request_id=ctx.request_id,
        )
        return answer_of(result, by)

    return approve


def owner_of(ctx: ServerRequestContext[Any, Any]) -> str | None:
    """The caller a parked call is bound to: the authenticated identity, if any."""
    try:
        return authenticated_principal(ctx)
    except Exception:
        return None
