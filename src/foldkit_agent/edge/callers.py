"""Per-caller limits: what one caller may hold of a resource, and what all callers may hold.

A :class:`Slots` counts one kind of resource that outlives a single answer (an open event
stream, an MCP session), keyed by the caller the edge authenticated (:func:`caller_key`). A
caller at its share is refused with **429**; when the server as a whole is at its cap, **503**
(with ``Retry-After``); both answers name the cap in the route's own error shape. So no caller
can take what the others need: with a per-caller share below the total, one caller (however
many connections it opens) holds at most its share.

Who the caller is comes only from what step 3 of :class:`~.guard.EdgeGuard` verified:

* an authenticated user (``scope["user"]``): its subject — MCP's verified ``AccessToken``
  ``subject`` (else its ``client_id``), a Starlette user's ``identity`` (else
  ``display_name``). Two tokens of one subject share one share.
* nobody (no authentication on the route, or an anonymous request): the one bucket
  :data:`ANONYMOUS`. Every anonymous caller together holds at most one caller's share, so
  anonymous callers can never exhaust what authenticated ones need. (Client addresses are not
  used: on loopback or behind a proxy they are all the same, and they are easy to vary.)

Idle eviction (streams). A :class:`Slots` made with ``evict_idle=True`` does not refuse a
caller below its share when the server is at its total: it ends a stream of a caller holding
more than the newcomer will (the largest holder first; among its streams, the one idle
longest: no event sent, keep-alive comments aside) to make room, and counts it in
:attr:`Slots.evicted`. The evicted stream gets a clean end: :func:`serve_held` cancels the
application serving it and closes the response body properly, and the client (an SSE client
reconnects by itself) sees its stream end. So a server at its cap still serves a new caller,
while each caller stays within its share. A caller holding no more than the newcomer would is
never ended for it (the newcomer's own idle stream may be), so minting callers (fresh page
sessions) cannot make a page's only stream end over and over; once every other caller holds as
few, a newcomer with no stream to give up gets the 503, as it does when no stream has started
its response.

Example:
    >>> streams = Slots("open event streams", per_caller=16, total=1000)
    >>> slot = streams.take("principal:alice")   # raises CapReached at a cap
    >>> slot.release()
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import KW_ONLY, dataclass, field
from typing import Any, Final

import anyio
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from .wire import WireError

__all__ = [
    "ANONYMOUS",
    "DEFAULT_CALLER_LIMITS",
    "DEFAULT_CALLS",
    "DEFAULT_CALLS_PER_CALLER",
    "DEFAULT_PAGE_SESSIONS",
    "DEFAULT_PAGE_STREAMS",
    "DEFAULT_SESSIONS",
    "DEFAULT_SESSIONS_PER_CALLER",
    "DEFAULT_SESSION_IDLE_TIMEOUT",
    "DEFAULT_STREAMS",
    "DEFAULT_STREAMS_PER_CALLER",
    "DEFAULT_TASKS",
    "DEFAULT_TASKS_PER_CALLER",
    "DEFAULT_TASK_MAX_AGE",
    "DEFAULT_WAITING",
    "DEFAULT_WAITING_PER_CALLER",
    "CallerLimits",
    "CapReached",
    "Slot",
    "Slots",
    "caller_key",
    "check_count",
    "check_seconds",
    "serve_held",
]

ANONYMOUS: Final = "anonymous"
"""The one caller every unauthenticated request counts as."""

DEFAULT_STREAMS_PER_CALLER: Final = 16
"""Most open streams (MCP ``GET`` / ``subscriptions/listen``, the page's ``events``) one caller
may hold, per adapter."""
DEFAULT_STREAMS: Final = 256
"""Most open MCP streams all callers may hold (each holds a connection: with the page's pools
below, every stream pool of ``serve`` together stays under half of ``max_connections``)."""
DEFAULT_PAGE_STREAMS: Final = 64
"""Most open ``events`` streams all callers of one page surface may hold together: page
sessions are free to mint, so a cap per session holds no one back; one small pool for all of
them keeps the page's streams from taking the connections the other routes need."""
DEFAULT_SESSIONS_PER_CALLER: Final = 100
"""Most handshake-era MCP sessions one caller may hold open."""
DEFAULT_SESSIONS: Final = 1000
"""Most handshake-era MCP sessions all callers may hold open (about 40 KB each; the SDK's
own default is 10,000)."""
DEFAULT_SESSION_IDLE_TIMEOUT: Final = 1800.0
"""Seconds after which an MCP session with no request in flight is closed (the SDK's)."""
DEFAULT_PAGE_SESSIONS: Final = 1000
"""Most page sessions a page surface counts apart, each with its own share of streams."""
DEFAULT_TASKS_PER_CALLER: Final = 1000
"""Most A2A tasks kept for one caller."""
DEFAULT_TASKS: Final = 10_000
"""Most A2A tasks kept for all callers."""
DEFAULT_TASK_MAX_AGE: Final = 3600.0
"""Seconds after its last update when an A2A task is dropped."""
DEFAULT_CALLS_PER_CALLER: Final = 256
"""Most calls one caller may have in flight at once, on every transport together (a call
waiting for a person counts among :data:`DEFAULT_WAITING_PER_CALLER` instead)."""
DEFAULT_CALLS: Final = 1024
"""Most calls all callers may have in flight at once."""
DEFAULT_WAITING_PER_CALLER: Final = 16
"""Most calls one caller may have waiting for a person at once, on every transport together."""
DEFAULT_WAITING: Final = 1024
"""Most calls all callers may have waiting for a person at once."""


@dataclass(frozen=True, slots=True)
class CallerLimits:
    """Every per-caller cap of one server, with its default (what ``serve``'s flags set).

    Attributes:
        streams_per_caller: open streams one caller may hold per adapter (MCP ``GET`` and
            ``subscriptions/listen``; the page's ``events``).
        streams: open MCP streams all callers may hold.
        page_streams: open ``events`` streams all page sessions (and anonymous pages) of the
            page surface may hold together.
        sessions_per_caller, sessions, session_idle_timeout: handshake-era MCP sessions.
        page_sessions: page sessions counted apart (each its own share of ``events``
            streams; past it the oldest counts as anonymous again).
        tasks_per_caller, tasks, task_max_age: A2A tasks kept
            (:class:`~foldkit_agent.adapters.a2a.BoundedTaskStore`).
        calls_per_caller, calls: calls in flight at once, every transport together
            (:class:`~foldkit_agent.edge.calls.CallsInFlight`).
        waiting_per_caller, waiting: calls waiting for a person at once, every transport
            and era together (an MCP elicitation, a parked 2026-era call, an A2A
            ``INPUT_REQUIRED`` task, a page approval, an in-process deferred call).

    Raises:
        TypeError: a cap that is not an ``int`` (a ``bool`` is not one) or a timeout that is
            not a number (:func:`check_count`, :func:`check_seconds`).
        ValueError: a cap below 1, a timeout that is not a positive number of seconds, or a
            per-caller share above its total (``calls_per_caller`` above ``calls``,
            ``waiting_per_caller`` above ``waiting``).

    Example:
        >>> CallerLimits(calls_per_caller=8).calls_per_caller
        8
    """

    streams_per_caller: int = DEFAULT_STREAMS_PER_CALLER
    streams: int = DEFAULT_STREAMS
    page_streams: int = DEFAULT_PAGE_STREAMS
    sessions_per_caller: int = DEFAULT_SESSIONS_PER_CALLER
    sessions: int = DEFAULT_SESSIONS
    session_idle_timeout: float = DEFAULT_SESSION_IDLE_TIMEOUT
    page_sessions: int = DEFAULT_PAGE_SESSIONS
    tasks_per_caller: int = DEFAULT_TASKS_PER_CALLER
    tasks: int = DEFAULT_TASKS
    task_max_age: float = DEFAULT_TASK_MAX_AGE
    calls_per_caller: int = DEFAULT_CALLS_PER_CALLER
    calls: int = DEFAULT_CALLS
    waiting_per_caller: int = DEFAULT_WAITING_PER_CALLER
    waiting: int = DEFAULT_WAITING

    def __post_init__(self) -> None:
        for name in ("session_idle_timeout", "task_max_age"):
            check_seconds(name, getattr(self, name))
        for name in (
            "streams_per_caller",
            "streams",
            "page_streams",
            "sessions_per_caller",
            "sessions",
            "page_sessions",
            "tasks_per_caller",
            "tasks",
            "calls_per_caller",
            "calls",
            "waiting_per_caller",
            "waiting",
        ):
            check_count(name, getattr(self, name), 1)
        # a share above the total could never be held: the total refuses first
        for share, total in (("calls_per_caller", "calls"), ("waiting_per_caller", "waiting")):
            if getattr(self, share) > getattr(self, total):
                raise ValueError(
                    f"{share} must be at most {total} ({getattr(self, total)}), got "
                    f"{getattr(self, share)}: lower it or raise {total}"
                )


def check_count(name: str, value: object, floor: int, unit: str = "") -> None:
    """The one rule for a count option: an ``int`` (not a ``bool``) of at least ``floor``.

    ``unit`` (``"bytes"``) follows the floor in the refusal.

    Raises:
        TypeError: ``value`` is not an ``int`` (a ``bool``, a string, ``None``).
        ValueError: ``value`` is below ``floor``.

    Example:
        >>> check_count("calls", 8, 1)
        >>> check_count("calls", "8", 1)
        Traceback (most recent call last):
        TypeError: calls must be a whole number of at least 1, got '8'
    """
    least = f"at least {floor} {unit}".rstrip()
    if not isinstance(value, int) or isinstance(value, bool):
        raise TypeError(f"{name} must be a whole number of {least}, got {value!r}")
    if value < floor:
        raise ValueError(f"{name} must be {least}, got {value}")


def check_seconds(name: str, value: object) -> None:
    """The one rule for a duration option: a positive, finite number of seconds.

    Raises:
        TypeError: ``value`` is not an ``int`` or ``float`` (a ``bool``, a string, ``None``).
        ValueError: ``value`` is zero, negative, infinite or NaN.
    """
    if not isinstance(value, int | float) or isinstance(value, bool):
        raise TypeError(f"{name} must be a positive number of seconds, got {value!r}")
    if not 0 < value < float("inf"):
        raise ValueError(f"{name} must be a positive number of seconds, got {value}")


DEFAULT_CALLER_LIMITS: Final = CallerLimits()

RETRY_AFTER: Final = "5"
"""Seconds a caller refused at the server's cap is told to wait (``Retry-After``)."""


def caller_key(scope: Scope) -> str:
    """Who holds what a request takes: ``"principal:<subject>"`` or :data:`ANONYMOUS`."""
    user: Any = scope.get("user")
    if user is None or not getattr(user, "is_authenticated", False):
        return ANONYMOUS
    token: Any = getattr(user, "access_token", None)
    if token is not None:
        subject = getattr(token, "subject", None) or getattr(token, "client_id", None)
    else:
        try:
            subject = user.identity
        except (AttributeError, NotImplementedError):
            subject = getattr(user, "display_name", None)
    return f"principal:{subject}" if subject else ANONYMOUS


class CapReached(Exception):
    """A caller, or the server, is at a cap; ``err`` is the refusal (429 or 503)."""

    def __init__(self, err: WireError) -> None:
        super().__init__(err.text)
        self.err = err


@dataclass(slots=True, eq=False)
class Slot:
    """One resource held by ``caller``; :meth:`release` gives it back (once).

    Attributes:
        last_active: ``time.monotonic()`` when it was taken or last carried an event.
        evict: ends what holds it (set by :func:`serve_held` once its response started);
            ``None`` while it cannot be evicted.
    """

    slots: Slots
    caller: str
    released: bool = False
    last_active: float = field(default_factory=time.monotonic)
    evict: Callable[[], None] | None = None

    def release(self) -> None:
        """Give the slot back to its :class:`Slots` (a second release does nothing)."""
        if self.released:
            return
        self.released = True
        slots = self.slots
        slots._slots.discard(self)  # pyright: ignore[reportPrivateUsage]
        held = slots._held.get(self.caller, 0)  # pyright: ignore[reportPrivateUsage]
        if held <= 0:
            return
        if held == 1:
            del slots._held[self.caller]  # pyright: ignore[reportPrivateUsage]
        else:
            slots._held[self.caller] = held - 1  # pyright: ignore[reportPrivateUsage]
        slots._count -= 1  # pyright: ignore[reportPrivateUsage]


@dataclass(eq=False)
class Slots:
    """Counts of one resource held per caller, within a per-caller share and a total.

    Args:
        what: the resource in the plural, for refusals (``"open event streams"``).
        per_caller: most one caller may hold.
        total: most all callers may hold together.
        evict_idle: at ``total``, end the newcomer's own idle slot or one of a caller
            holding more than it would, instead of refusing a caller below its share
            (module docs).
        advice: what a caller at its share should do, ending its refusal.

    Attributes:
        evicted: how many slots were ended to make room.

    Raises:
        ValueError: a cap below 1.
    """

    what: str
    _: KW_ONLY
    per_caller: int
    total: int
    evict_idle: bool = False
    advice: str = "Close one before opening another."
    evicted: int = field(default=0, init=False)
    _held: dict[str, int] = field(default_factory=dict[str, int], init=False, repr=False)
    _count: int = field(default=0, init=False, repr=False)
    _slots: set[Slot] = field(default_factory=set[Slot], init=False, repr=False)

    def __post_init__(self) -> None:
        if self.per_caller < 1 or self.total < 1:
            raise ValueError(f"the caps on {self.what} must be at least 1")

    def __len__(self) -> int:
        return self._count

    def held_by(self, caller: str) -> int:
        """How many ``caller`` holds now."""
        return self._held.get(caller, 0)

    def refusal(self, caller: str) -> WireError | None:
        """The refusal a :meth:`take` by ``caller`` would meet now, or ``None``."""
        held = self._held.get(caller, 0)
        if held >= self.per_caller:
            who = "Anonymous callers" if caller == ANONYMOUS else "This caller"
            return WireError(
                429,
                "caller-limit",
                f"{who} already hold{'' if caller == ANONYMOUS else 's'} {held} {self.what}, "
                f"the most one caller may hold (per-caller cap {self.per_caller}). {self.advice}",
                {"Retry-After": RETRY_AFTER},
            )
        if self._count >= self.total:
            return WireError(
                503,
                "server-limit",
                f"The server already holds {self._count} {self.what}, the most it holds at "
                f"once (cap {self.total}). Retry later.",
                {"Retry-After": RETRY_AFTER},
            )
        return None

    def take(self, caller: str) -> Slot:
        """Hold one more for ``caller``.

        Raises:
            CapReached: ``caller`` holds its share (429), or all callers hold the total (503)
                and none can be evicted.
        """
        held = self._held.get(caller, 0)
        if held >= self.per_caller or self._count >= self.total:  # checked inline: every call
            refused = self.refusal(caller)
            if refused is not None and refused.status == 503 and self._evict_for(caller):
                refused = self.refusal(caller)
            if refused is not None:
                raise CapReached(refused)
            held = self._held.get(caller, 0)
        self._held[caller] = held + 1
        self._count += 1
        slot = Slot(self, caller)
        if self.evict_idle:  # only an evictable pool needs to find its slots again
            self._slots.add(slot)
        return slot

    def _evict_for(self, newcomer: str) -> bool:
        """End one evictable slot to make room for ``newcomer``: its own, or one of a caller
        holding more than the newcomer will (the largest holder's longest idle, module docs);
        whether one was ended."""
        if not self.evict_idle:
            return False
        will_hold = self._held.get(newcomer, 0) + 1
        victim: Slot | None = None
        most = 0
        for slot in self._slots:
            if slot.evict is None:
                continue
            holds = self._held.get(slot.caller, 0)
            if slot.caller != newcomer and holds <= will_hold:
                continue
            if (
                victim is None
                or holds > most
                or (holds == most and slot.last_active < victim.last_active)
            ):
                victim, most = slot, holds
        if victim is None:
            return False
        evict, victim.evict = victim.evict, None
        assert evict is not None
        victim.release()
        self.evicted += 1
        evict()
        return True


def _is_event(message: Message) -> bool:
    """A body chunk that carries an event (an SSE comment line, a keep-alive ping, does not)."""
    chunk: bytes = message.get("body", b"")
    return bool(chunk) and not chunk.lstrip().startswith(b":")


async def serve_held(app: ASGIApp, scope: Scope, receive: Receive, send: Send, slot: Slot) -> None:
    """Run ``app`` for a request holding ``slot``, so that the slot can be evicted.

    Each event sent marks the slot active; once the response has started the slot is
    evictable: eviction cancels ``app`` and ends the response body (an empty last chunk), so
    the client sees its stream end cleanly. A response that completed is not evictable.
    """
    started = complete = False
    with anyio.CancelScope() as cancel:

        async def tracked(message: Message) -> None:
            nonlocal started, complete
            if message["type"] == "http.response.start":
                started = True
                slot.evict = cancel.cancel
            elif message["type"] == "http.response.body":
                if _is_event(message):
                    slot.last_active = time.monotonic()
                if not message.get("more_body", False):
                    complete = True
                    slot.evict = None
            await send(message)

        await app(scope, receive, tracked)
    if cancel.cancelled_caught and started and not complete:
        await send({"type": "http.response.body", "body": b"", "more_body": False})
