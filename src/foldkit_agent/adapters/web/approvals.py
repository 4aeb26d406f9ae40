"""A person approves in the page: the calls of ``confirm`` capabilities a page session waits on.

A page caller's ``invoke`` of a ``confirm`` capability does not hold its HTTP request while the
person decides (DESIGN §11). Once the call asks, it is parked
(:class:`~foldkit_agent.edge.calls.CallsInFlight`, counted among the caller's calls waiting
for a person like every transport's) and ``invoke`` answers at once, 202, with
:func:`waiting_result`. The person answers through ``POST approvals/<id>``; the call then runs
to its end, its page session's ``events`` streams get an ``ended`` event ``{"id"}``, and the page
reads the answer once from ``GET calls/<id>`` (the bridge script does all this inside the
tool's ``execute``, so the agent sees one answer). Only the same page session can see, answer
or read it; the runtime's ``approval_timeout`` bounds the wait. A page without a session has no
person to ask, so the call is refused as ``"unavailable"``. A service caller is taken at its
word that a person approved only with ``trust_service_approvals`` and :data:`APPROVED_HEADER`.
"""

from __future__ import annotations

import asyncio
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Any, Final, Literal

from starlette.requests import Request

from ...contract.approval import Approval, Approver
from ...edge.approvals import ParkedApproval
from ...edge.calls import PARK, CallsInFlight
from .feed import PageFeeds
from .results import call_tool_result
from .sessions import identity_of, service_caller

__all__ = ["APPROVED_HEADER", "MAX_ENDED", "PageApprovals", "waiting_result", "who"]

APPROVED_HEADER = "X-Foldkit-Approved"
"""A *service* caller's statement that a person already approved this call (any value, such
as Agent Native's approval key). Read only with ``agent_surface(trust_service_approvals=True)``.
"""

MAX_ENDED: Final = 1024
"""Answers of parked page calls kept until their page reads them (the oldest go first)."""


@dataclass(eq=False, slots=True)
class PageApprovals:
    """The page calls waiting for the person's answer, and the answers not yet read.

    Attributes:
        calls: the server's calls in flight (where the calls are parked and capped).
        feeds: the surface's event streams, told whenever a session's list changes.
        trust_service_approvals: take a service caller's :data:`APPROVED_HEADER` as a person's
            approval.
        service_transport: named in ``approved_by`` of such an approval.
    """

    calls: CallsInFlight
    feeds: PageFeeds
    trust_service_approvals: bool
    service_transport: str
    _open: dict[str, str] = field(default_factory=dict[str, str], init=False)
    """Parked call -> its page session, until it ends."""
    _ended: OrderedDict[str, tuple[str, dict[str, Any]]] = field(
        default_factory=OrderedDict[str, tuple[str, dict[str, Any]]], init=False
    )
    """Ended call -> (its page session, its answer), until the page reads it."""

    def __post_init__(self) -> None:
        self.calls.parked.watch(self._asked_again)

    def ask(
        self, request: Request, owner: str | None, credentials: Any
    ) -> Approver | Literal["park"] | None:
        """How this call can ask a person (``CallRequest.ask``): the page's own person (the
        call is parked), a trusted service's statement, or nobody (``None``: the runtime then
        refuses a ``confirm`` capability as ``"unavailable"``)."""
        if service_caller(request) is None:
            return None if owner is None else PARK
        said = request.headers.get(APPROVED_HEADER)
        if not self.trust_service_approvals or not said:
            return None
        by = f"{who(credentials)} (approved in {self.service_transport})"

        async def approved(_request: Any) -> Approval:
            return Approval(approved=True, by=by)

        return approved

    def parked(self, parked: ParkedApproval) -> None:
        """A page call now waits for its person: show it, and keep its answer once it ends."""
        owner = parked.owner or ""
        self._open[parked.key] = owner
        self.feeds.announce(owner)
        parked.task.add_done_callback(lambda call: self._end(parked.key, owner, call))

    def _end(self, key: str, owner: str, call: asyncio.Future[Any]) -> None:
        """The call ended: its question leaves the session's list whichever way it ended
        (answered, declined, timed out, aborted), and its answer is kept for the page."""
        self._open.pop(key, None)
        ended: str | None = None
        # the runtime answers every call; one that did not (its task cancelled at shutdown)
        # has no answer to keep, but its question is withdrawn all the same
        if not call.cancelled() and call.exception() is None:
            self._ended[key] = (owner, call_tool_result(call.result()))
            while len(self._ended) > MAX_ENDED:
                self._ended.popitem(last=False)
            ended = key
        self.feeds.announce(owner, ended=ended)

    def waiting(self, owner: str | None) -> list[dict[str, Any]]:
        """``owner``'s calls waiting for the person, as ``GET approvals`` lists them."""
        if owner is None:
            return []
        return [_shown(p) for p in self.calls.parked.of(owner)]

    def decide(self, key: str, owner: str | None, approval: Approval) -> ParkedApproval | None:
        """Hand the call under ``key`` the person's answer; the call, or ``None`` when no
        call of ``owner`` waits under that key."""
        parked = None if owner is None else self.calls.answer(key, owner, None, approval)
        if parked is not None:
            self.feeds.announce(owner)
        return parked

    def _asked_again(self, parked: ParkedApproval, waiting: bool) -> None:
        """A page call asked once more (the input edited, the Model changed) waits under its
        id again: its page shows the new question."""
        owner = self._open.get(parked.key)
        if waiting and owner is not None:
            self.feeds.announce(owner)

    def answer_of(self, key: str, owner: str | None) -> dict[str, Any] | Literal["waiting"] | None:
        """The answer of ``owner``'s call ``key`` (given once, then forgotten), ``"waiting"``
        while it waits for the person, else ``None``."""
        ended = self._ended.get(key)
        if owner is not None and ended is not None and ended[0] == owner:
            del self._ended[key]
            return ended[1]
        if owner is not None and self._open.get(key) == owner:
            return "waiting"  # asking the person, or answered and still running
        return None


def waiting_result(parked: ParkedApproval) -> dict[str, Any]:
    """``invoke``'s answer for a call now waiting for the person, shaped like a
    ``CallToolResult``: ``structuredContent`` is ``{"status": "waiting", "capability", "call":
    <id>, "approval": <the request>}``; the page reads the call's own answer from ``GET
    calls/<id>`` once its ``events`` stream says ``ended``."""
    text = f"{parked.request.text()}\nWaiting for the person's approval in the page."
    return {
        "content": [{"type": "text", "text": text}],
        "structuredContent": {
            "status": "waiting",
            "capability": parked.capability,
            "call": parked.key,
            "approval": parked.request.to_json(),
        },
        "isError": False,
    }


def who(credentials: Any) -> str:
    """Who answered, for the audit's ``approved_by``: the page's signed-in user, if known."""
    return identity_of(credentials) or "page session"


def _shown(parked: ParkedApproval) -> dict[str, Any]:
    return {"id": parked.key, "text": parked.request.text(), **parked.request.to_json()}
