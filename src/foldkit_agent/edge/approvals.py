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
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Any

from ..contract.approval import Approval, ApprovalRequest, ApprovalsFull, Approver
from .callers import DEFAULT_WAITING, DEFAULT_WAITING_PER_CALLER

__all__ = ["Asked", "ParkedApproval", "ParkedApprovals"]

Asked = asyncio.Future[tuple[ApprovalRequest, asyncio.Future[Approval]]]
"""Set when the runtime asks the per-call approver: the request and where its answer goes."""


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
    """

    key: str
    capability: str
    owner: str | None
    task: asyncio.Future[Any]
    request: ApprovalRequest
    answer: asyncio.Future[Approval]

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
        >>> approver, asked = parked.asker()
        >>> task = asyncio.ensure_future(rt.call(name, payload, Invocation(approver=approver)))
        >>> ...  # once `asked` is done and the task still runs:
        >>> parked.park(key, name, owner, task, *asked.result())
    """

    def __init__(
        self, *, per_caller: int = DEFAULT_WAITING_PER_CALLER, total: int = DEFAULT_WAITING
    ) -> None:
        self._parked: dict[str, ParkedApproval] = {}
        self._per_caller = per_caller
        self._total = total

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

    @staticmethod
    def asker() -> tuple[Approver, Asked]:
        """A per-call approver, and the future it sets when the runtime asks it.

        The approver hands the request over (through ``asked``) and waits for the answer that
        :meth:`ParkedApproval.decide` later puts on the second future. When the runtime
        withdraws the question (timeout, cancellation) the answer future is cancelled.
        """
        loop = asyncio.get_running_loop()
        asked: Asked = loop.create_future()

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
        key: str,
        capability: str,
        owner: str | None,
        task: asyncio.Future[Any],
        request: ApprovalRequest,
        answer: asyncio.Future[Approval],
    ) -> ParkedApproval | None:
        """Park a call under ``key``; ``None`` (nothing parked) when a bound is reached or the
        key is taken. The entry leaves by itself when the call ends."""
        if key in self._parked or len(self._parked) >= self._total:
            return None
        if sum(1 for p in self._parked.values() if p.owner == owner) >= self._per_caller:
            return None
        parked = ParkedApproval(key, capability, owner, task, request, answer)
        self._parked[key] = parked
        task.add_done_callback(lambda t: self._ended(key, t))
        return parked

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
        if parked is None or parked.owner != owner:
            return None
        if capability is not None and parked.capability != capability:
            return None
        del self._parked[key]
        return parked

    def _ended(self, key: str, task: asyncio.Future[Any]) -> None:
        if self._parked.pop(key, None) is not None and not task.cancelled():
            task.exception()  # never resumed: its refusal is audited, and nobody waits for it
