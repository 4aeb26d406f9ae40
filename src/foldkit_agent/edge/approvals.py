"""Calls waiting for a person's answer across requests: what MCP, A2A and the page share.

A transport that cannot hold one request open while a person decides (MCP 2026-07-28 returns
``InputRequiredResult``; A2A puts the task in ``INPUT_REQUIRED``; the web page answers on its
own endpoint) keeps the invocation itself running, parked here under a key, and hands it the
answer when the person's reply arrives on a later request. The invocation never restarts, so
the Message approved is the Message dispatched (DESIGN §11).

Every entry is bound to the caller that started it (only that caller can answer it) and
bounded in number, per caller and in all; :class:`~foldkit_agent.edge.calls.CallsInFlight`
parks its calls here and counts them within the caps on calls waiting for a person, the same
for every transport. An entry leaves when its call ends: answered, timed out by the runtime's
``approval_timeout``, or cancelled.

Whoever answers (the caller on its own transport, or a person at the console), the call's
next step is the entry's :attr:`ParkedApproval.next`: the call's outcome, or its next question
parked anew (asked again because the Model changed, or with the person's edited input), so the
transport's caller is told that answer on its next request.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from ..contract.approval import Approval, ApprovalRequest, ApprovalsFull
from .callers import DEFAULT_WAITING, DEFAULT_WAITING_PER_CALLER

__all__ = [
    "MESSAGE_MAX",
    "Asked",
    "Asking",
    "ParkedApproval",
    "ParkedApprovals",
    "ParkedWatcher",
    "declined",
]

MESSAGE_MAX = 2000
"""The longest message a person's decline carries to the agent, in characters."""

Asked = asyncio.Future[tuple[ApprovalRequest, asyncio.Future[Approval]]]
"""Set when the runtime asks the per-call approver: the request and where its answer goes."""

ParkedWatcher = Callable[["ParkedApproval", bool], None]
"""``(parked, still_waiting)``: told when a call is parked (``True``) and when it leaves
(``False``); called on the event loop, and it must not raise."""


def declined(message: Any, by: str | None) -> Approval:
    """A decline by ``by``, carrying ``message`` to the agent when it is text with something
    in it (stripped, cut to :data:`MESSAGE_MAX` characters); any other value carries none.

    Example:
        >>> declined("  only the done ones ", "alice")
        Approval(approved=False, by='alice', message='only the done ones', input=None)
    """
    said = message.strip()[:MESSAGE_MAX] if isinstance(message, str) else ""
    return Approval(approved=False, by=by, message=said or None)


class Asking:
    """A per-call approver that hands each question over as the runtime asks it.

    Each question, with the future its :class:`Approval` goes to, is set on :attr:`asked`,
    and a fresh :attr:`asked` is made ready at once for the next question (asked again after
    the Model changed, or about edited input). When the runtime withdraws a question (timeout,
    cancellation) its answer future is cancelled.

    Attributes:
        asked: set to ``(request, answer)`` when the runtime asks the next question.
    """

    __slots__ = ("_loop", "asked")

    def __init__(self) -> None:
        self._loop = asyncio.get_running_loop()
        self.asked: Asked = self._loop.create_future()

    async def __call__(self, request: ApprovalRequest) -> Approval:
        answer: asyncio.Future[Approval] = self._loop.create_future()
        asked, self.asked = self.asked, self._loop.create_future()
        if not asked.done():
            asked.set_result((request, answer))
        try:
            return await answer
        finally:
            if not answer.done():
                answer.cancel()


@dataclass
class ParkedApproval:
    """A call waiting for its approval between two requests.

    Attributes:
        key: what the transport calls it (a ``request_state`` token, a task id, an id the
            page was given).
        capability: the capability's name.
        owner: the caller it is bound to (``None`` for an unauthenticated caller).
        task: the running invocation.
        request: what the person is asked.
        answer: set it to the person's :class:`Approval` to resume the call.
        transport: ``Invocation.transport`` of the call (``"mcp"``, ``"a2a"``, ``"webmcp"``).
        caller: whose caps it counts against (:func:`~.callers.caller_key`'s
            ``"principal:<subject>"``, a page's ``"page-user:<id>"``, ``"anonymous"``).
        next: the call's next step once answered (set by
            :class:`~foldkit_agent.edge.calls.CallsInFlight` when it parks the call): its
            :class:`~foldkit_agent.runtime.Outcome`, or the :class:`ParkedApproval` of the
            next question it asked; ``None`` until set.
        told: what the call's transport does with that step before anyone is given it
            (``async (step) -> None``; A2A writes it to its task store), so whoever answered
            learns of it only once the transport's caller can read it too.
    """

    key: str
    capability: str
    owner: str | None
    task: asyncio.Future[Any]
    request: ApprovalRequest
    answer: asyncio.Future[Approval]
    transport: str = ""
    caller: str = ""
    next: asyncio.Future[Any] | None = None
    told: list[Callable[[Any], Awaitable[None]]] = field(
        default_factory=list[Callable[[Any], Awaitable[None]]]
    )

    def answerable_by(self, owner: str | None, capability: str | None = None) -> bool:
        """Whether ``owner`` may answer this call (it is theirs), and, if ``capability`` is
        given, it is a call of that capability."""
        return self.owner == owner and capability in (None, self.capability)

    def decide(self, approval: Approval) -> bool:
        """Hand the call its answer; ``False`` when it had already ended or been answered."""
        if self.answer.done():
            return False
        self.answer.set_result(approval)
        return True


class ParkedApprovals:
    """Parked calls by key, bounded per owner and in all (by default the caps on calls
    waiting for a person, :data:`~.callers.DEFAULT_WAITING_PER_CALLER` and
    :data:`~.callers.DEFAULT_WAITING`).

    :class:`~foldkit_agent.edge.calls.CallsInFlight` parks its calls here (and counts them
    within the caps on calls waiting for a person); adapters reach it through that.

    Example:
        >>> asking = Asking()
        >>> task = asyncio.ensure_future(rt.call(name, payload, Invocation(approver=asking)))
        >>> question = asking.asked
        >>> ...  # once `question` is done and the task still runs:
        >>> parked.park(key, name, owner, task, *question.result())
    """

    def __init__(
        self, *, per_caller: int = DEFAULT_WAITING_PER_CALLER, total: int = DEFAULT_WAITING
    ) -> None:
        self._parked: dict[str, ParkedApproval] = {}
        self._per_caller = per_caller
        self._total = total
        self._watchers: list[ParkedWatcher] = []

    def __len__(self) -> int:
        return len(self._parked)

    def __contains__(self, key: object) -> bool:
        return key in self._parked

    def tasks(self) -> list[asyncio.Future[Any]]:
        """The parked calls (each ends when answered, timed out or cancelled)."""
        return [p.task for p in self._parked.values()]

    def of(self, owner: str | None) -> list[ParkedApproval]:
        """This caller's parked calls, oldest first."""
        return [p for p in self._parked.values() if p.owner == owner]

    def watch(self, watcher: ParkedWatcher) -> Callable[[], None]:
        """Tell ``watcher`` of every call parked from now on and of each one leaving (what a
        console showing the waiting calls follows); returns the function that stops it."""
        self._watchers.append(watcher)
        return lambda: self._watchers.remove(watcher) if watcher in self._watchers else None

    def park(
        self,
        key: str,
        capability: str,
        owner: str | None,
        task: asyncio.Future[Any],
        request: ApprovalRequest,
        answer: asyncio.Future[Approval],
        transport: str = "",
        caller: str = "",
    ) -> ParkedApproval | None:
        """Park a call under ``key``; ``None`` (nothing parked) when a bound is reached or the
        key is taken. The entry leaves by itself when the call ends."""
        if key in self._parked or len(self._parked) >= self._total:
            return None
        if sum(1 for p in self._parked.values() if p.owner == owner) >= self._per_caller:
            return None
        parked = ParkedApproval(key, capability, owner, task, request, answer, transport, caller)
        self._parked[key] = parked
        task.add_done_callback(lambda t: self._ended(key, t))
        for watcher in self._watchers:
            watcher(parked, True)
        return parked

    def get(self, key: str) -> ParkedApproval | None:
        """The parked call under ``key``, whoever's it is (left in place), else ``None``."""
        return self._parked.get(key)

    def question(self, key: str, owner: str | None) -> ApprovalRequest | None:
        """What the call under ``key`` asks, when it is ``owner``'s; else ``None``."""
        parked = self._parked.get(key)
        return parked.request if parked is not None and parked.answerable_by(owner) else None

    def all(self) -> list[ParkedApproval]:
        """Every parked call, oldest first."""
        return list(self._parked.values())

    def full(self, owner: str | None) -> Exception:
        """Why :meth:`park` refused a call of ``owner``, for its approver to raise.

        :class:`~foldkit_agent.contract.approval.ApprovalsFull` naming the cap reached (the
        runtime then refuses the call as ``"unavailable"`` with a text naming it), or a
        plain ``RuntimeError`` when no cap was reached (a key taken).
        """
        if sum(1 for p in self._parked.values() if p.owner == owner) >= self._per_caller:
            return ApprovalsFull(self._per_caller, yours=True)
        if len(self._parked) >= self._total:
            return ApprovalsFull(self._total, yours=False)
        return RuntimeError("the call could not be parked")

    def take(
        self, key: str, owner: str | None, capability: str | None = None
    ) -> ParkedApproval | None:
        """The parked call under ``key``, taken out, when it is ``owner``'s (and, if given, a
        call of ``capability``); else ``None``, and the entry stays for its own caller."""
        parked = self._parked.get(key)
        if parked is None or not parked.answerable_by(owner, capability):
            return None
        del self._parked[key]
        for watcher in self._watchers:
            watcher(parked, False)
        return parked

    def _ended(self, key: str, task: asyncio.Future[Any]) -> None:
        parked = self._parked.pop(key, None)
        if parked is not None and not task.cancelled():
            task.exception()  # never resumed: its refusal is audited, and nobody waits for it
        if parked is not None:
            for watcher in self._watchers:
                watcher(parked, False)
