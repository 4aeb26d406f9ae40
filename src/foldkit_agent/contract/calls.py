"""The values that travel with one invocation: its identity, the hook arguments, its result."""

from __future__ import annotations

import asyncio
import itertools
import os
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

from .approval import Approver

__all__ = [
    "AuthorizationRequest",
    "CallInfo",
    "Deny",
    "Invocation",
    "InvocationContext",
    "draft_class",
    "in_app_invocation",
    "new_invocation_id",
]

M = TypeVar("M")
P = TypeVar("P")
I = TypeVar("I")  # noqa: E741 - the input type


_PROCESS = os.urandom(8).hex()
_NEXT_ID = map(f"{_PROCESS}-%x".__mod__, itertools.count(1)).__next__
"""The next invocation id; built in C (no Python frame), as ``Invocation()``'s default."""


def new_invocation_id() -> str:
    """A fresh invocation id, unique across processes: ``"<16 hex digits>-<hex counter>"``.

    The first part is 64 random bits drawn once per process, the second a per-process
    counter, so ids are cheap on the dispatch path and never repeat. They identify calls;
    they are not secrets and grant nothing.

    Adapters that bring their own ids (a protocol request id, say) pass them on
    :class:`Invocation` instead.
    """
    return _NEXT_ID()


def draft_class(cls: type) -> Any:
    """A plain class with the slots of the ``slots=True`` dataclass ``cls`` and nothing else.

    For building a frozen dataclass on a hot path: fill a draft's fields with plain
    assignments, then make it a ``cls`` with ``draft.__class__ = cls`` (Python allows it
    because the two lay out their instances alike). The result is a ``cls`` in every way; the
    frozen dataclass's generated ``__init__`` goes through ``object.__setattr__`` once per
    field, which costs about three times as much. Every field must be set (an unset slot
    raises ``AttributeError`` when read).

    Raises:
        TypeError: ``cls`` lays out its instances otherwise (not a plain ``slots=True``
            dataclass); raised here, when the draft class is made.

    Example:
        >>> Draft = draft_class(Deny)
        >>> d = Draft(); d.reason = "no"; d.__class__ = Deny
        >>> d
        Deny(reason='no')
    """
    draft = type(f"{cls.__name__}Draft", (), {"__slots__": vars(cls)["__slots__"]})
    probe: Any = draft()
    probe.__class__ = cls  # the layouts must match: refuse at import, not on a call
    return draft


@dataclass(frozen=True, slots=True)
class Invocation:
    """One call of one capability, as the transport saw it.

    Attributes:
        id: unique per call; defaults to :func:`new_invocation_id`. Carry it onto a result
            Message through ``to_message`` to correlate overlapping calls.
        transport: who carried the call: ``"in-app"``, ``"mcp"``, ``"a2a"``, ``"webmcp"``,
            ``"agent-native"``, or any string an adapter chooses.
        signal: an :class:`asyncio.Event`; setting it aborts the invocation.
        credentials: what the transport authenticated (an access token, a session user). Only
            the principal provider reads it; it never comes from the call's arguments.
        approver: ``async (ApprovalRequest) -> Approval``, supplied by a transport that can
            ask a person to approve a ``confirm`` capability (MCP elicitation, an A2A
            ``INPUT_REQUIRED`` task, the web page). ``None`` means no person can be asked, so
            a call that needs approval is refused (``AgentApprovalError``, ``"unavailable"``).
        idempotency_key: the caller's name for one logical call (at most 255 characters),
            or ``None``. A retry with the same key and the same input gets the first call's
            outcome without running again (``docs/retries.md``); each transport reads it from
            its wire (MCP ``_meta["io.modelcontextprotocol/idempotencyKey"]``, A2A
            ``"idempotencyKey"`` in our extension's metadata entry, the page surface's and
            Agent Native's ``Idempotency-Key`` header, the toolsets' ``idempotency_key_of``).
        actor: who pressed the call, as the transport was told (MCP: ``"agent"`` for the
            model's call, ``"view"`` for a person's click in an MCP Apps view), recorded in
            the audit; ``None`` when the transport says nothing. It grants nothing.
    """

    id: str = field(default_factory=_NEXT_ID)
    transport: str = "in-app"
    signal: asyncio.Event | None = None
    credentials: Any = None
    approver: Approver | None = None
    idempotency_key: str | None = None
    actor: str | None = None


_InvocationDraft = draft_class(Invocation)


def in_app_invocation() -> Invocation:
    """``Invocation()``: a fresh id and every other field at its default.

    What the runtime makes for a call that brings no invocation. Equal to ``Invocation()`` in
    every way, built in a fraction of its time (:func:`draft_class`).

    Example:
        >>> in_app_invocation().transport
        'in-app'
    """
    inv = _InvocationDraft()
    inv.id = _NEXT_ID()
    inv.transport = "in-app"
    inv.signal = inv.credentials = inv.approver = inv.idempotency_key = inv.actor = None
    inv.__class__ = Invocation
    return inv


@dataclass(frozen=True, slots=True)
class Deny:
    """``authorize`` refusing with a reason the agent will read.

    >>> Deny("Only the list owner may delete todos")
    Deny(reason='Only the list owner may delete todos')
    """

    reason: str


@dataclass(frozen=True, slots=True)
class AuthorizationRequest(Generic[M, P, I]):
    """What an ``authorize`` hook receives.

    Attributes:
        principal: from the runtime's principal provider (``None`` when the transport
            authenticated nobody).
        input: the decoded input (the Message itself for a variant without ``input``).
        model: the invocation's one Model snapshot.
        transport: ``invocation.transport``.
        invocation: the :class:`Invocation`.
        capability: the capability's name.
    """

    principal: P | None
    input: I
    model: M
    transport: str
    invocation: Invocation
    capability: str


@dataclass(frozen=True, slots=True)
class InvocationContext(Generic[M, P]):
    """What ``to_message(input, ctx)`` receives: the snapshot ``available`` approved."""

    model: M
    principal: P | None
    invocation: Invocation


@dataclass(frozen=True, slots=True)
class CallInfo:
    """The third argument of ``correlate(request, result, call)``."""

    invocation: Invocation
