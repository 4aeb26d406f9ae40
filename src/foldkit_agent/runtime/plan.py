"""What one capability's invocation runs, decided once when the contract is bound.

Every invocation takes the same pipeline (:class:`~foldkit_agent.runtime.pipeline.Call`):
resolve, available, decode, authorize, construct, confirm, send, wait. Which of those steps a
capability *has* depends only on its declaration and on what the runtime was bound with (a
principal provider, an audit log that records principals), so it is decided here, once per
capability, and each call only reads the answer. A capability with nothing to authorize,
construct, confirm or wait for runs the same code with those steps absent.

===============  ===========================================================================
step             present when
===============  ===========================================================================
resolve          always (unknown name, drain, an aborted signal, a reused invocation id)
available        always (the one Model snapshot is read here); the predicate only if declared
decode           always (:attr:`Plan.decode`: the capability's strict decoder)
authorize        ``authorize`` declared, or a principal is needed (:attr:`Plan.principal`)
construct        ``to_message`` declared (otherwise the decoded input is the Message)
confirm          ``confirm`` declared (``True`` or a predicate)
send             always
wait             a completion contract declared (``Completion`` or ``agent.when``)
===============  ===========================================================================
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ..contract.completion import Completion, StateCompletion
from ..contract.declare import Capability

__all__ = ["Plan", "holds", "plan_for"]

_log = logging.getLogger("foldkit_agent.runtime")


@dataclass(frozen=True, slots=True)
class Plan:
    """One capability's steps, as :func:`plan_for` decided them.

    Attributes:
        cap: the capability.
        name: its protocol name.
        tag: the tag of the Message it sends.
        available: the ``available(model)`` predicate, or ``None`` (always available).
        decode: ``(name, payload) -> input``: the strict decoder (raises
            ``AgentInvalidInputError``).
        principal: the principal provider the authorize step runs, or ``None`` when nothing
            reads the principal (it is read by ``authorize``, ``to_message``, a ``confirm``
            predicate or the audit).
        authorize: the ``authorize`` hook, or ``None``.
        authorizes: the authorize step is present (``authorize`` or ``principal``).
        to_message: the construct step's ``to_message``, or ``None``.
        confirm: ``None`` (no approval), ``True`` (always ask a person) or a predicate.
        completion: the completion contract the wait step waits for, or ``None``.
        asks_person: whether a call may wait for a person's approval (``confirm`` is
            declared). A ``confirm`` predicate may decide per call not to ask; this answers
            whether any call ever can, which is what a transport counting calls that wait for
            a person needs.
        waits: whether a call waits for a completion after sending (a completion contract).
        may_wait: whether a call may wait once it runs, for either (``asks_person`` or
            ``waits``): a transport runs one that cannot as a plain await, with nothing to
            beat, ask or abort.

    Example:
        >>> plan = rt.plan("create_todo")
        >>> (plan.asks_person, plan.waits, plan.may_wait)
        (False, True, True)
    """

    cap: Capability
    name: str
    tag: str
    available: Callable[[Any], Any] | None
    decode: Callable[[str, Any], Any]
    principal: Callable[[Any], Any] | None
    authorize: Callable[[Any], Any] | None
    authorizes: bool
    to_message: Callable[[Any, Any], Any] | None
    confirm: Any
    completion: Completion | StateCompletion | None
    asks_person: bool
    waits: bool
    may_wait: bool


def plan_for(
    cap: Capability, *, provider: Callable[[Any], Any] | None, audit_principal: bool
) -> Plan:
    """The plan of ``cap`` for a runtime with the principal ``provider`` (or ``None``), whose
    audit log records principals (``audit_principal``) or not.

    The principal is resolved only where something reads it: the ``authorize`` hook, the
    ``to_message`` context (``ctx.principal``), a ``confirm`` predicate (its request carries
    it), or the audit entry.
    """
    confirm = cap.confirm
    reads_principal = (
        cap.authorize is not None
        or cap.to_message is not None
        or (confirm is not None and confirm is not True)
        or audit_principal
    )
    principal = provider if reads_principal else None
    return Plan(
        cap=cap,
        name=cap.name,
        tag=cap.tag,
        available=cap.available,
        decode=cap.decoder.decode,
        principal=principal,
        authorize=cap.authorize,
        authorizes=principal is not None or cap.authorize is not None,
        to_message=cap.to_message,
        confirm=confirm,
        completion=cap.completion,
        asks_person=confirm is not None,
        waits=cap.completion is not None,
        may_wait=confirm is not None or cap.completion is not None,
    )


def holds(predicate: Callable[[Any], Any], name: str, model: Any) -> bool:
    """``predicate(model)`` of the capability ``name``'s ``available``; one that raises counts
    as false (and is logged), so it refuses that call and never breaks a listing."""
    try:
        return bool(predicate(model))
    except Exception:
        _log.warning(
            "available predicate of %r raised; treating it as unavailable", name, exc_info=True
        )
        return False
