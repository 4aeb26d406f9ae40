"""A person approves in the page: the calls of ``confirm`` capabilities a page session waits on.

A page caller's ``invoke`` of a ``confirm`` capability waits while the person in the page
answers through ``approvals`` (DESIGN §11): only the same page session can see or answer it, and
the runtime's ``approval_timeout`` bounds the wait. A page without a session has no person to
ask, so the call is refused as ``"unavailable"``. A service caller is taken at its word that a
person approved only with ``trust_service_approvals`` and :data:`APPROVED_HEADER`.
"""

from __future__ import annotations

import asyncio
import secrets
from typing import Any

from starlette.requests import Request

from ...contract.approval import Approval, Approver
from ...edge.approvals import Asked, ParkedApproval, ParkedApprovals
from .feed import PageFeeds
from .sessions import service_caller

__all__ = ["APPROVED_HEADER", "PageApprovals", "who"]

APPROVED_HEADER = "X-Foldkit-Approved"
"""A *service* caller's statement that a person already approved this call (any value, such
as Agent Native's approval key). Read only with ``agent_surface(trust_service_approvals=True)``.
"""


class PageApprovals:
    """The page calls waiting for the person's answer, each bound to its page session.

    Args:
        feeds: the surface's event streams, told whenever a session's list changes.
        trust_service_approvals: take a service caller's :data:`APPROVED_HEADER` as a person's
            approval.
        service_transport: named in ``approved_by`` of such an approval.
    """

    def __init__(
        self, feeds: PageFeeds, *, trust_service_approvals: bool, service_transport: str
    ) -> None:
        self.parked = ParkedApprovals()
        self._feeds = feeds
        self._trust_service = trust_service_approvals
        self._service_transport = service_transport

    def approver(
        self, request: Request, owner: str | None, credentials: Any
    ) -> tuple[Approver | None, Asked | None]:
        """How this call can ask a person: the page's own person, or a trusted service.

        ``(None, None)`` when no person can be asked (a page without a session, a service
        caller the surface does not trust to have asked one): the runtime then refuses a
        ``confirm`` capability as ``"unavailable"``.
        """
        if service_caller(request) is None:
            if owner is None:
                return None, None
            return ParkedApprovals.asker()
        said = request.headers.get(APPROVED_HEADER)
        if not self._trust_service or not said:
            return None, None
        by = f"{who(credentials)} (approved in {self._service_transport})"

        async def approved(_request: Any) -> Approval:
            return Approval(approved=True, by=by)

        return approved, None

    def park(
        self,
        name: str,
        owner: str | None,
        call: asyncio.Future[Any],
        request: Any,
        answer: asyncio.Future[Approval],
    ) -> None:
        """Park a call that asked the person; past a cap, tell it nobody can be asked."""
        key = secrets.token_urlsafe(16)
        if self.parked.park(key, name, owner, call, request, answer) is None:
            answer.set_exception(self.parked.full(owner))
            return
        self._feeds.announce(owner)
        call.add_done_callback(lambda _c: self._feeds.announce(owner))

    def waiting(self, owner: str | None) -> list[dict[str, Any]]:
        """``owner``'s calls waiting for the person, as ``GET approvals`` lists them."""
        if owner is None:
            return []
        return [_shown(p) for p in self.parked.of(owner)]

    def decide(self, key: str, owner: str | None, approval: Approval) -> bool:
        """Hand the call under ``key`` the person's answer; ``False`` when no call of
        ``owner`` waits under that key."""
        waiting = None if owner is None else self.parked.take(key, owner)
        if waiting is None:
            return False
        waiting.decide(approval)
        self._feeds.announce(owner)
        return True


def who(credentials: Any) -> str:
    """Who answered, for the audit's ``approved_by``: the page's signed-in user, if known."""
    for attr in ("id", "subject", "user_id", "name"):
        value = getattr(credentials, attr, None)
        if isinstance(value, str) and value:
            return value
    return "page session"


def _shown(parked: ParkedApproval) -> dict[str, Any]:
    return {"id": parked.key, "text": parked.request.text(), **parked.request.to_json()}
