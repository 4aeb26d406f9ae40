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
  ``request_state``. The invocation itself stays in flight in between, parked here under an
  unguessable token bound to the caller, so the Message approved is the one dispatched.
  A parked call that is never resumed is refused by the runtime's approval timeout.

Only ``accept`` with ``{"approve": true}`` approves; ``decline``, ``cancel``, a missing or
malformed answer all decline.
"""

from __future__ import annotations

import asyncio
import logging
import secrets
from dataclasses import dataclass
from typing import Any, cast

import mcp.types as types
from mcp.server import ServerRequestContext
from mcp.server.request_state import authenticated_principal

from ...contract.approval import Approval, ApprovalRequest, Approver

__all__ = [
    "APPROVE_FIELD",
    "APPROVE_SCHEMA",
    "INPUT_KEY",
    "Parked",
    "ParkedApprovals",
    "answer_of",
    "approver_name",
    "can_elicit",
    "elicit_request",
    "handshake_approver",
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

MAX_PARKED_PER_CALLER = 16
MAX_PARKED = 1024


def can_elicit(ctx: ServerRequestContext[Any, Any]) -> bool:
    """Whether the client on this request declared the ``elicitation`` capability (any era)."""
    try:
        wanted = types.ClientCapabilities(elicitation=types.ElicitationCapability())
        return bool(ctx.session.check_client_capability(wanted))
    except Exception:
        _log.debug("could not read the client's capabilities", exc_info=True)
        return False


def answer_of(result: Any, by: str | None) -> Approval:
    """The :class:`Approval` an elicitation answer means: only ``accept`` + ``approve: true``."""
    action = getattr(result, "action", None)
    content = getattr(result, "content", None)
    fields = cast(dict[str, Any], content) if isinstance(content, dict) else {}
    approved = action == "accept" and fields.get(APPROVE_FIELD) is True
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


@dataclass
class Parked:
    """A modern-era call waiting for its approval, between two ``tools/call`` requests."""

    capability: str
    owner: str | None
    task: asyncio.Future[Any]
    answer: asyncio.Future[Approval]
    request: ApprovalRequest


class ParkedApprovals:
    """Calls parked while their client asks its user (modern era), by ``request_state`` token.

    Bounded: at most :data:`MAX_PARKED_PER_CALLER` per caller and :data:`MAX_PARKED` in all;
    past that the call is refused as ``"unavailable"``. An entry leaves when its call ends
    (answered, timed out, cancelled), so the approval timeout bounds how long it stays.
    """

    def __init__(self) -> None:
        self._parked: dict[str, Parked] = {}

    def __len__(self) -> int:
        return len(self._parked)

    def tasks(self) -> list[asyncio.Future[Any]]:
        """The parked calls (each ends when answered, timed out or cancelled)."""
        return [p.task for p in self._parked.values()]

    def owner(self, ctx: ServerRequestContext[Any, Any]) -> str | None:
        """The caller a parked call is bound to: the authenticated identity, if any."""
        try:
            return authenticated_principal(ctx)
        except Exception:
            return None

    def asker(
        self,
    ) -> tuple[Approver, asyncio.Future[tuple[ApprovalRequest, asyncio.Future[Approval]]]]:
        """A per-call approver, and a future set when the runtime asks it.

        The approver hands the request to the handler (through the future) and waits for the
        answer the handler later puts on the second future.
        """
        loop = asyncio.get_running_loop()
        asked: asyncio.Future[tuple[ApprovalRequest, asyncio.Future[Approval]]] = (
            loop.create_future()
        )

        async def approve(request: ApprovalRequest) -> Approval:
            answer: asyncio.Future[Approval] = loop.create_future()
            if not asked.done():
                asked.set_result((request, answer))
            try:
                return await answer
            finally:
                if not answer.done():
                    answer.cancel()

        return approve, asked

    def park(
        self,
        capability: str,
        owner: str | None,
        task: asyncio.Future[Any],
        request: ApprovalRequest,
        answer: asyncio.Future[Approval],
    ) -> str | None:
        """Park a call; returns its token, or ``None`` when the caller has too many parked."""
        mine = sum(1 for p in self._parked.values() if p.owner == owner)
        if mine >= MAX_PARKED_PER_CALLER or len(self._parked) >= MAX_PARKED:
            return None
        token = secrets.token_urlsafe(32)
        self._parked[token] = Parked(capability, owner, task, answer, request)
        task.add_done_callback(lambda t: self._ended(token, t))
        return token

    def _ended(self, token: str, task: asyncio.Future[Any]) -> None:
        if self._parked.pop(token, None) is not None and not task.cancelled():
            task.exception()  # never resumed: its refusal is audited, and nobody waits for it

    def resume(self, token: str, capability: str, owner: str | None) -> Parked | None:
        """The parked call for ``token``, taken out, if it is this caller's call of this tool."""
        parked = self._parked.get(token)
        if parked is None or parked.owner != owner or parked.capability != capability:
            return None
        del self._parked[token]
        return parked
