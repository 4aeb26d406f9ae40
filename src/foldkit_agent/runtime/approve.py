"""The confirm step's body: ask a person about the constructed Message (DESIGN §11).

The Message approved is the Message sent: the question carries the Message the construct
step built and a preview of what it changes, and the pipeline sends that very object once
this returns.
"""

from __future__ import annotations

import asyncio
import inspect
import logging
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, cast

from ..app.message import Message
from ..contract.approval import Approval, ApprovalRequest, ApprovalsFull
from ..contract.calls import AuthorizationRequest
from ..errors import AgentApprovalError
from .plan import Plan
from .preview import preview_of
from .race import Abort, Deadline, race

if TYPE_CHECKING:
    from .pipeline import Call

__all__ = ["WITHDRAW_GRACE", "approve"]

_log = logging.getLogger("foldkit_agent.runtime")

WITHDRAW_GRACE = 1.0
"""Seconds a withdrawn approval question gets to finish its cleanup before the call answers."""


async def approve(call: Call, plan: Plan, decoded: Any, message: Message) -> None:
    """Return only when a person approved ``message``; otherwise refuse, sending nothing.

    A predicate ``confirm`` decides first whether to ask at all (one that raises asks: the
    cautious answer). No approver on the invocation means the transport cannot ask a person:
    refused, ``"unavailable"``. An approver that raises, or answers anything but an
    :class:`Approval`, counts as unavailable too, never as approval. The question is withdrawn
    (its approver cancelled) on timeout and cancellation. What was decided is kept on
    ``call.approval`` / ``call.approved_by`` for the audit entry.

    Raises:
        AgentApprovalError: ``"declined"``, ``"timeout"`` (after the runtime's
            ``approval_timeout``) or ``"unavailable"``.
        AgentCancelledError: the signal was set while waiting (``dispatched=False``).
    """
    if plan.confirm is not True and not await _needs_approval(call, plan, decoded):
        return
    name = plan.name
    approver = call.invocation.approver
    if approver is None:
        call.approval = "unavailable"
        raise AgentApprovalError(capability=name, reason="unavailable")
    rt = call.rt
    cap = plan.cap
    preview, summary = preview_of(rt.host, rt.definition.context, call.model, message, name)
    request = ApprovalRequest(
        capability=name,
        title=cap.title or name,
        description=cap.description,
        input=_input_json(decoded),
        message=message,
        preview=preview,
        summary=summary,
    )
    deadline = asyncio.get_running_loop().time() + rt.approval_timeout
    asking: asyncio.Future[Any] | None = None
    try:
        asking = asyncio.ensure_future(approver(request))
        answer = await race(asking, call.signal, deadline)
    except Abort:
        raise call.cancelled(False) from None
    except Deadline:
        call.approval = "timeout"
        raise AgentApprovalError(
            capability=name, reason="timeout", timeout=rt.approval_timeout
        ) from None
    except asyncio.CancelledError:
        raise
    except ApprovalsFull as full:
        call.approval = "unavailable"
        raise AgentApprovalError(
            capability=name, reason="unavailable", waiting=full.limit, yours=full.yours
        ) from None
    except Exception as exc:
        _log.warning("the approver of %r raised; refusing the call", name, exc_info=True)
        call.approval = "unavailable"
        raise AgentApprovalError(capability=name, reason="unavailable") from exc
    finally:
        if asking is not None and not asking.done():
            # Withdraw the question and let the transport tidy up (end an elicitation,
            # leave INPUT_REQUIRED) before the call answers; a bounded grace.
            asking.cancel()
            await asyncio.wait({asking}, timeout=WITHDRAW_GRACE)
    if not isinstance(answer, Approval):
        _log.warning("the approver of %r answered %r, not an Approval", name, answer)
        call.approval = "unavailable"
        raise AgentApprovalError(capability=name, reason="unavailable")
    if answer.approved is not True:
        call.approval = "declined"
        raise AgentApprovalError(capability=name, reason="declined")
    call.approval = "approved"
    call.approved_by = answer.by if isinstance(answer.by, str) else None  # pyright: ignore[reportUnnecessaryIsInstance]
    if call.signal.is_set():  # aborted while the person answered: nothing is sent
        raise call.cancelled(False)


async def _needs_approval(call: Call, plan: Plan, decoded: Any) -> bool:
    predicate = cast(Callable[[Any], Any], plan.confirm)
    inv = call.invocation
    request = AuthorizationRequest(
        call.principal, decoded, call.model, inv.transport, inv, plan.name
    )
    try:
        verdict = predicate(request)
        if inspect.isawaitable(verdict):
            verdict = await race(verdict, call.signal, None)
    except Abort:
        raise call.cancelled(False) from None
    except Exception:
        _log.warning("confirm predicate of %r raised; asking a person", plan.name, exc_info=True)
        return True
    return verdict is not False


def _input_json(decoded: Any) -> Any:
    try:
        return decoded.model_dump(mode="json")
    except Exception:
        return None
