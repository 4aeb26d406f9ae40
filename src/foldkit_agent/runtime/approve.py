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
from dataclasses import replace
from typing import TYPE_CHECKING, Any, cast

from pydantic import BaseModel

from ..app.message import Message
from ..contract.approval import Approval, ApprovalRequest, ApprovalsFull, short_json
from ..contract.calls import AuthorizationRequest
from ..errors import AgentApprovalError, AgentError
from .plan import Plan, holds
from .preview import preview_of, value_at
from .race import Abort, Deadline, race

if TYPE_CHECKING:
    from .pipeline import Call

__all__ = [
    "MAX_ASKS",
    "ONE_QUESTION",
    "SENTENCE_MAX",
    "WITHDRAW_GRACE",
    "approve",
    "fields_of",
    "request_for",
]

_log = logging.getLogger("foldkit_agent.runtime")

WITHDRAW_GRACE = 1.0
"""Seconds a withdrawn approval question gets to finish its cleanup before the call answers."""


ONE_QUESTION = "foldkit_one_question"
"""The attribute a transport sets (to ``True``) on an approver that can put one question
only (a call parked between requests whose answer ends the exchange, as the page's does).
When the Model changes under such a question, the call is refused as stale instead of
re-asked; a transport that can carry a second question (2026-era MCP, A2A) leaves it unset."""

MAX_ASKS = 3
"""How many times one call asks its person at most (a re-ask after a change, edits)."""


async def approve(call: Call, plan: Plan, decoded: Any, message: Message) -> Message:
    """The Message to send, once a person approved it; otherwise refuse, sending nothing.

    A predicate ``confirm`` decides first whether to ask at all (one that raises asks: the
    cautious answer). No approver on the invocation means the transport cannot ask a person:
    refused, ``"unavailable"``. An approver that raises, or answers anything but an
    :class:`Approval`, counts as unavailable too, never as approval. The question is withdrawn
    (its approver cancelled) on timeout and cancellation.

    An approval is for the snapshot it was shown on. When the person approves, the Model is
    read again: if it changed so that the capability is no longer available, the call is
    refused as ``"stale"``; if the preview (or the Message ``to_message`` builds) differs, the
    person is asked again with the new preview, once (``asks=2``), and a second change refuses
    it as ``"stale"``. An approver that can put one question only (:data:`ONE_QUESTION`) is
    refused as stale at the first change. An approval with edited ``input`` is decoded
    strictly (and authorized) again, its Message rebuilt, and the person asked again with its
    preview; only that answer sends. What was decided is kept on ``call.approval`` /
    ``call.approved_by`` / ``call.declined_by`` / ``call.approval_text`` /
    ``call.approval_asks`` for the audit entry.

    Raises:
        AgentApprovalError: ``"declined"`` (quoting the person's message), ``"timeout"``
            (after the runtime's ``approval_timeout``), ``"unavailable"`` or ``"stale"``.
        AgentInvalidInputError: the edited input does not decode.
        AgentCancelledError: the signal was set while waiting (``dispatched=False``).
    """
    if plan.confirm is not True and not await _needs_approval(call, plan, decoded):
        return message
    name = plan.name
    approver = call.invocation.approver
    if approver is None:
        call.approval = "unavailable"
        raise AgentApprovalError(capability=name, reason="unavailable")
    one_question = getattr(approver, ONE_QUESTION, False) is True
    request = request_for(call, plan, decoded, message, 1)
    changed = False
    while True:
        call.approval_text = request.shown()
        call.approval_asks = request.asks
        answer = await _ask(call, name, approver, request)
        if answer.approved is not True:
            call.approval = "declined"
            call.declined_by = answer.by if isinstance(answer.by, str) else None  # pyright: ignore[reportUnnecessaryIsInstance]
            said = answer.message if isinstance(answer.message, str) else None
            raise AgentApprovalError(capability=name, reason="declined", said=said)
        if call.signal.is_set():  # aborted while the person answered: nothing is sent
            raise call.cancelled(False)
        last = request.asks >= MAX_ASKS
        if answer.input is not None:
            if last or one_question:
                call.approval = "stale"
                raise AgentApprovalError(capability=name, reason="stale")
            decoded = plan.decode(name, answer.input)
            if plan.authorizes:
                await call.authorize(plan, decoded)
            message = decoded if plan.to_message is None else call.construct(plan, decoded)
            request = request_for(call, plan, decoded, message, request.asks + 1)
            continue
        current = call.rt.host.model()
        if current is not call.model:
            if plan.available is not None and not holds(plan.available, name, current):
                call.approval = "stale"
                raise AgentApprovalError(capability=name, reason="stale")
            shown_on = call.model
            call.model = current
            again = decoded if plan.to_message is None else _rebuilt(call, plan, decoded)
            fresh = None if again is None else request_for(call, plan, decoded, again, 2)
            if fresh is None or _differs(request, fresh):
                if fresh is None or changed or one_question or last:
                    call.approval = "stale"
                    raise AgentApprovalError(capability=name, reason="stale")
                changed = True
                message = again if again is not None else message
                request = replace(fresh, asks=request.asks + 1)
                continue
            call.model = shown_on if again is None else current
        call.approval = "approved"
        call.approved_by = answer.by if isinstance(answer.by, str) else None  # pyright: ignore[reportUnnecessaryIsInstance]
        return message


async def _ask(call: Call, name: str, approver: Any, request: ApprovalRequest) -> Approval:
    """Put ``request`` to ``approver`` within the approval timeout; its :class:`Approval`."""
    rt = call.rt
    deadline = asyncio.get_running_loop().time() + rt.approval_timeout
    asking: asyncio.Future[Any] | None = None
    try:
        asking = question = asyncio.ensure_future(approver(request))
        answer = await race(question, call.signal, deadline)
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
    return answer


def _rebuilt(call: Call, plan: Plan, decoded: Any) -> Message | None:
    """The Message ``to_message`` builds on the current Model, or ``None`` when it cannot."""
    try:
        return call.construct(plan, decoded)
    except AgentError:
        return None


def _differs(shown: ApprovalRequest, fresh: ApprovalRequest) -> bool:
    """Whether the person would now be shown something else than what they approved."""
    return (
        fresh.message != shown.message
        or _unplaced(fresh) != _unplaced(shown)
        or fresh.effects != shown.effects
        or fresh.sentence != shown.sentence
    )


def _unplaced(request: ApprovalRequest) -> Any:
    """The preview's operations with list positions left out of their paths, each beside the
    value it removes, replaces or moves: another call removing an earlier item shifts where
    this one's change lands, not what it changes, but a change to another item is another
    change (a Message may name no item at all: "delete the selected note")."""
    patch = request.preview
    if patch is None:
        return None
    return [
        {
            **{k: _no_positions(v) if k in ("path", "from") else v for k, v in op.items()},
            "was": None
            if op.get("op") == "add"  # what is at an insertion point is not what it changes
            else value_at(request.before, str(op.get("from", op.get("path", "")))),
        }
        for op in patch
    ]


def _no_positions(pointer: Any) -> Any:
    if not isinstance(pointer, str):
        return pointer
    return "/".join("#" if part.isdigit() else part for part in pointer.split("/"))


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


def request_for(
    call: Call, plan: Plan, decoded: Any, message: Message, asks: int
) -> ApprovalRequest:
    """The :class:`ApprovalRequest` for ``message`` on the call's snapshot: the preview, the
    ``describe=`` sentence (if declared) and the input as labelled fields."""
    rt = call.rt
    cap = plan.cap
    name = plan.name
    outcome = _declared_outcome(call, plan, decoded)
    shown = preview_of(rt.host, rt.definition.context, call.model, message, name, outcome)
    return ApprovalRequest(
        capability=name,
        title=cap.title or name,
        description=cap.description,
        input=_input_json(decoded),
        message=message,
        preview=shown.patch,
        summary=shown.summary,
        effects=shown.effects,
        sentence=_sentence(call, plan, decoded),
        fields=fields_of(decoded),
        asks=asks,
        before=shown.before,
    )


_FAILED: Any = object()


def _presented(call: Call, plan: Plan, decoded: Any, hook: Any, name: str, instead: str) -> Any:
    """``hook(request)`` of a presentation hook (``preview=``, ``describe=``) for the call, or
    :data:`_FAILED` when it raised (logged, saying what is shown ``instead``)."""
    inv = call.invocation
    request = AuthorizationRequest(
        call.principal, decoded, call.model, inv.transport, inv, plan.name
    )
    try:
        return hook(request)
    except Exception:
        _log.warning("%s of %r raised; %s", name, plan.name, instead, exc_info=True)
        return _FAILED


def _declared_outcome(call: Call, plan: Plan, decoded: Any) -> tuple[Message, ...]:
    """What ``preview=`` says the call's external effect brings back (``()`` without it, or
    when it raises or gives anything but Messages: logged, and the preview goes without)."""
    hook = plan.cap.presentation.preview
    if hook is None:
        return ()
    got = _presented(call, plan, decoded, hook, "preview=", "previewing without it")
    if got is _FAILED:
        return ()
    messages: tuple[Any, ...] = (got,) if isinstance(got, Message) else tuple(got or ())
    if not all(isinstance(m, Message) for m in messages):
        _log.warning("preview= of %r gave something other than Messages", plan.name)
        return ()
    return messages


SENTENCE_MAX = 300
"""The longest ``describe=`` sentence shown, in characters (cut with ``…``)."""


def _sentence(call: Call, plan: Plan, decoded: Any) -> str | None:
    describe = plan.cap.presentation.describe
    if describe is None:
        return None
    sentence = _presented(call, plan, decoded, describe, "describe=", "showing its fields")
    if sentence is _FAILED:
        return None
    if not isinstance(sentence, str) or not sentence.strip():
        _log.warning("describe= of %r gave no sentence; showing its fields", plan.name)
        return None
    text = " ".join(sentence.split())
    return text if len(text) <= SENTENCE_MAX else text[: SENTENCE_MAX - 1] + "…"


_VALUE_MAX = 200


def fields_of(decoded: Any) -> tuple[tuple[str, str], ...]:
    """The decoded input as ``((label, value), ...)``: each field's ``title`` (else its name
    in words, ``due_date`` -> ``Due date``) and its value as text (a string as it is, anything
    else as compact JSON, cut to 200 characters).

    Example:
        >>> fields_of(RequestedCreateTodo(title="Milk"))
        (('Title', 'Milk'),)
    """
    if not isinstance(decoded, BaseModel):
        return ()
    try:
        data: dict[str, Any] = decoded.model_dump(mode="json")
    except Exception:
        return ()
    shown: list[tuple[str, str]] = []
    for key, info in type(decoded).model_fields.items():
        if key not in data:
            continue
        label = info.title or key.replace("_", " ").strip().capitalize() or key
        value = data[key]
        text = value if isinstance(value, str) else short_json(value, _VALUE_MAX)
        if len(text) > _VALUE_MAX:
            text = text[: _VALUE_MAX - 1] + "…"
        shown.append((label, text))
    return tuple(shown)


def _input_json(decoded: Any) -> Any:
    try:
        return decoded.model_dump(mode="json")
    except Exception:
        return None
