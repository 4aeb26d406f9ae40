"""The route handlers of one :func:`~foldkit_agent.adapters.web.surface.agent_surface`.

Each route passed the edge guard first (Host, Origin, credentials, body); a handler resolves
the caller's runtime, runs what was asked and answers in the surface's shapes
(:mod:`.results`, :func:`.checks.rejected`).
"""

from __future__ import annotations

import asyncio
import logging
import secrets
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, cast

from starlette.datastructures import Headers
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.types import Scope

from ...contract.calls import Invocation
from ...edge.activity import ActivityFeed
from ...edge.approvals import ParkedApproval
from ...edge.calls import PARK, CallRequest, CallsInFlight
from ...edge.guard import BODY_KEY, Rules
from ...edge.resolve import (
    RuntimeUnavailableError,
    audit_refused_call,
    awaited,
    resolve_runtime,
    static_runtime,
)
from ...edge.wire import WireError
from ...runtime.bound import AgentRuntime
from ...runtime.idempotency import IDEMPOTENCY_HEADER
from .approvals import PageApprovals, waiting_result, who
from .checks import rejected
from .csrf import CsrfTokens
from .decision import answered, approval_from
from .feed import PageFeeds
from .results import call_tool_result, page_tool
from .sessions import PageSessions, call_caller, page_owner, service_caller, session_answer

__all__ = ["Surface", "SurfaceConfig"]

_log = logging.getLogger("foldkit_agent.adapters.web.surface")

_NO_STORE = {"Cache-Control": "no-store"}


@dataclass(frozen=True, slots=True)
class SurfaceConfig:
    """What :func:`~foldkit_agent.adapters.web.surface.agent_surface` was given that its
    routes read (see its arguments)."""

    target: Any
    credentials_of: Callable[[Request], Any] | None
    session_of: Callable[[Request], Any] | None
    csrf: CsrfTokens
    transport: str
    service_transport: str
    ping: float
    trust_service_approvals: bool
    calls: CallsInFlight
    activity: ActivityFeed | None = None


class Surface:
    """The route handlers of one surface, and what they share: its page sessions, event
    streams and calls waiting for a person."""

    def __init__(self, config: SurfaceConfig, sessions: PageSessions) -> None:
        self.c = config
        self.sessions = sessions
        self.feeds = PageFeeds(config.ping)
        self.approvals = PageApprovals(
            config.calls, self.feeds, config.trust_service_approvals, config.service_transport
        )

    # -- shared steps -------------------------------------------------------------------------

    async def _runtime(self, request: Request) -> AgentRuntime[Any, Any] | Response:
        """The runtime for this request, or a 503 answer when ``resolve`` failed."""
        try:
            return await resolve_runtime(self.c.target, request)
        except RuntimeUnavailableError:
            return rejected(503, "unavailable", "The application is not available right now.")

    def _transport(self, scope: Scope) -> str:
        service = Headers(scope=scope).get("authorization") is not None
        return self.c.service_transport if service else self.c.transport

    def _owner(self, request: Request) -> str | None:
        return page_owner(request, self.c.session_of)

    async def audit_refusal(
        self, scope: Scope, rules: Rules, err: WireError, authenticated: bool
    ) -> None:
        """Audit an edge refusal of ``invoke/<name>`` in the runtime that would have served it.

        Before the caller is known (steps 1 to 3) only a fixed runtime is audited:
        ``resolve(request)`` is application code, never run for an unknown caller.
        """
        if rules.capability is None:
            return
        if not authenticated and static_runtime(self.c.target) is None:
            return
        request = Request(scope)
        rt = await self._runtime(request)
        if not isinstance(rt, AgentRuntime):
            return
        credentials = None
        if authenticated:  # past the caller's check (a rate limit, a body cap): theirs
            try:
                credentials = await self._credentials(request)
            except Exception:
                _log.warning("credentials_of raised; auditing the refusal without them")
        invocation = Invocation(transport=self._transport(scope), credentials=credentials)
        await audit_refused_call(rt, invocation, rules.capability, err)

    async def _credentials(self, request: Request) -> Any:
        if self.c.credentials_of is None:
            return None
        return await awaited(self.c.credentials_of(request))

    # -- routes -------------------------------------------------------------------------------

    async def capabilities(self, request: Request) -> Response:
        rt = await self._runtime(request)
        if isinstance(rt, Response):
            return rt
        caps = [page_tool(c) for c in rt.messages.available()]
        return JSONResponse({"capabilities": caps}, headers=_NO_STORE)

    async def context(self, request: Request) -> Response:
        rt = await self._runtime(request)
        if isinstance(rt, Response):
            return rt
        try:
            ctx = rt.context()
        except Exception:
            _log.warning("reading the context failed", exc_info=True)
            return rejected(500, "context", "The context could not be read right now.")
        return JSONResponse({"context": ctx}, headers=_NO_STORE)

    async def session(self, request: Request) -> Response:
        return session_answer(request, self.sessions, self.c.csrf, self.c.session_of)

    async def events(self, request: Request) -> Response:
        rt = await self._runtime(request)
        if isinstance(rt, Response):
            return rt
        owner = self._owner(request)
        return self.feeds.stream(rt, owner, lambda: self.approvals.waiting(owner), self.c.activity)

    async def invoke(self, request: Request) -> Response:
        """One invocation; the edge guard has checked the caller and parsed the body. A call
        that asks the person in the page is parked and answered at once, 202."""
        name = request.path_params["name"]
        try:
            credentials = await self._credentials(request)
        except Exception:
            _log.warning("credentials_of raised; refusing the call", exc_info=True)
            return rejected(
                403, "principal", "The caller could not be identified. Nothing was applied.", name
            )
        rt = await self._runtime(request)
        if isinstance(rt, Response):
            return rt
        owner = self._owner(request)
        ask = self.approvals.ask(request, owner, credentials)
        parks = ask == PARK
        call = CallRequest(
            self._transport(request.scope),
            call_caller(request, credentials),
            credentials,
            ask=ask,
            owner=owner,
            scope=request.scope,
            # the page can be asked again (an edit, a changed Model): under the one id it has
            key=secrets.token_urlsafe(32) if parks else None,
            reask=parks,
            idempotency_key=request.headers.get(IDEMPOTENCY_HEADER),
        )
        got = await self.c.calls.run(rt, name, request.scope.get(BODY_KEY, {}), call)
        if isinstance(got, ParkedApproval):
            self.approvals.parked(got)
            return JSONResponse(waiting_result(got), status_code=202, headers=_NO_STORE)
        return JSONResponse(call_tool_result(got), headers=_NO_STORE)

    async def called(self, request: Request) -> Response:
        """``GET calls/<id>``: the answer of this page session's parked call, once (200); 202
        while it waits for the person; 404 for any other id."""
        if service_caller(request) is not None:
            return rejected(400, "service", "Only the page that made a call reads its answer.")
        got = self.approvals.answer_of(request.path_params["key"], self._owner(request))
        if got is None:
            text = "No call of this page has that id (its answer was read already, or is gone)."
            return rejected(404, "not-found", text)
        if got == "waiting":
            return JSONResponse({"status": "waiting"}, status_code=202, headers=_NO_STORE)
        return JSONResponse(got, headers=_NO_STORE)

    async def waiting(self, request: Request) -> Response:
        """``GET approvals``: this page session's calls waiting for the person."""
        if service_caller(request) is not None:
            return rejected(400, "service", "Only the page's own person answers approvals.")
        waiting = self.approvals.waiting(self._owner(request))
        return JSONResponse({"approvals": waiting}, headers=_NO_STORE)

    async def answer(self, request: Request) -> Response:
        """``POST approvals/<id>``: the person's answer (the guard checked Origin and CSRF)."""
        if service_caller(request) is not None:
            return rejected(400, "service", "Only the page's own person answers approvals.")
        body: Any = request.scope.get(BODY_KEY)
        fields = cast(dict[str, Any], body) if isinstance(body, dict) else {}
        try:
            credentials = await self._credentials(request)
        except Exception:
            _log.warning("credentials_of raised; refusing the answer", exc_info=True)
            return rejected(403, "principal", "The person could not be identified.")
        approval = approval_from(fields, who(credentials))
        if isinstance(approval, str):
            return rejected(400, "malformed", approval)
        parked = self.approvals.decide(request.path_params["key"], self._owner(request), approval)
        if parked is None:
            return rejected(404, "not-waiting", "No call of this page waits for that answer.")
        # shielded: a person leaving the page never aborts the agent's call
        got = await asyncio.shield(parked.task if parked.next is None else parked.next)
        return JSONResponse(answered(got), headers=_NO_STORE)
