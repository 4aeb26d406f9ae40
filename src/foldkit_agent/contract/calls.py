"""The values that travel with one invocation: its identity, the hook arguments, its result."""

from __future__ import annotations

import asyncio
import itertools
import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

from .approval import Approver

__all__ = [
    "AuthorizationRequest",
    "CallInfo",
    "Deny",
    "Invocation",
    "InvocationContext",
    "in_app_invocation",
    "new_invocation_id",
    "slot_setters",
]

M = TypeVar("M")
P = TypeVar("P")
I = TypeVar("I")  # noqa: E741 - the input type


_PROCESS = os.urandom(8).hex()
_PREFIX = f"{_PROCESS}-"
_SEQUENCE = itertools.count(1)


def new_invocation_id() -> str:
    """A fresh invocation id, unique across processes: ``"<16 hex digits>-<hex counter>"``.

    The first part is 64 random bits drawn once per process, the second a per-process
    counter, so ids are cheap on the dispatch path and never repeat. They identify calls;
    they are not secrets and grant nothing.

    Adapters that bring their own ids (a protocol request id, say) pass them on
    :class:`Invocation` instead.
    """
    return f"{_PREFIX}{next(_SEQUENCE):x}"


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
    """

    id: str = field(default_factory=new_invocation_id)
    transport: str = "in-app"
    signal: asyncio.Event | None = None
    credentials: Any = None
    approver: Approver | None = None


def slot_setters(cls: type, *names: str) -> tuple[Callable[[Any, Any], None], ...]:
    """The ``__set__`` of each named slot of a ``slots=True`` dataclass, in order.

    For building a frozen dataclass on a hot path: a slot's own setter bypasses the frozen
    ``__setattr__`` that the generated ``__init__`` goes through once per field. Every field
    must be set (an unset slot raises ``AttributeError`` when read).
    """
    slots: Mapping[str, Any] = vars(cls)
    return tuple(slots[name].__set__ for name in names)


_set_id, _set_transport, _set_signal, _set_credentials, _set_approver = slot_setters(
    Invocation, "id", "transport", "signal", "credentials", "approver"
)
_new = object.__new__


def in_app_invocation() -> Invocation:
    """``Invocation()``: a fresh id and every other field at its default.

    What the runtime makes for a call that brings no invocation. Equal to ``Invocation()`` in
    every way, built in about half its time: the frozen dataclass's ``__init__`` goes through
    ``object.__setattr__`` once per field, this sets the five slots directly.

    Example:
        >>> in_app_invocation().transport
        'in-app'
    """
    inv = _new(Invocation)
    _set_id(inv, f"{_PREFIX}{next(_SEQUENCE):x}")
    _set_transport(inv, "in-app")
    _set_signal(inv, None)
    _set_credentials(inv, None)
    _set_approver(inv, None)
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
