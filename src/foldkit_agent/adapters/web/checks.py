"""How the surface's routes pass the edge guard (:class:`~foldkit_agent.edge.EdgeGuard`).

* Rules: ``POST invoke/<name>`` is a page route (its ``Origin`` must be the page's own, or an
  allowed one), carries a JSON body (an empty body means ``{}``) and names the capability
  ``<name>``, so a refusal of it is audited; ``POST approvals/<id>`` (the person's answer) is a
  page route with a JSON body too; the reading routes are checked for Host only.
* Step 3 (:class:`SurfaceAuth`): a request with ``Authorization: Bearer <token>`` is a service
  caller, authenticated by ``service_auth(token)`` (401 otherwise); one without is a page, whose
  ``invoke`` and approval answers must carry the session's CSRF token (403 otherwise). With
  ``service_only`` (Agent Native) a request without a bearer token is 401.
* Refusals are answered in the surface's shape (:func:`rejected`).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Final

from starlette.datastructures import Headers
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.types import Scope

from ...edge.guard import Rules, route_path
from ...edge.resolve import awaited
from ...edge.tokens import bearer_token
from ...edge.wire import WireError
from .csrf import CSRF_HEADER, SESSION_COOKIE, CsrfTokens

__all__ = ["SERVICE_STATE", "SurfaceAuth", "classify", "rejected", "render", "session_id"]

_log = logging.getLogger("foldkit_agent.adapters.web.surface")

SERVICE_STATE: Final = "foldkit_agent_service"
"""``request.state`` attribute holding the identity ``service_auth`` returned."""

INVOKE: Final = "/invoke/"
APPROVALS: Final = "/approvals/"

_READING = Rules(origin="none", body=False)
_ANSWER = Rules(origin="page")
_CSRF_TEXT = (
    "The page's security token is missing or out of date; reload the page and retry. "
    "Nothing was applied."
)
_SERVICE_ONLY_TEXT = "This endpoint serves Agent Native servers only; send the service token."
_UNACCEPTED_TEXT = "The service token was not accepted."
_SIGN_IN_TEXT = "Sign in to the page first. Nothing was read or applied."

SessionOf = Callable[[Request], Any]
ServiceAuth = Callable[[str], Any]


def rejected(
    status: int,
    error: str,
    text: str,
    capability: str | None = None,
    headers: dict[str, str] | None = None,
) -> JSONResponse:
    """A transport refusal, shaped like a ``CallToolResult`` with ``status: "rejected"``."""
    body = {
        "content": [{"type": "text", "text": text}],
        "structuredContent": {
            "status": "rejected",
            "error": error,
            "capability": capability,
            "message": text,
        },
        "isError": True,
    }
    return JSONResponse(
        body, status_code=status, headers={"Cache-Control": "no-store", **(headers or {})}
    )


def render(_scope: Scope, rules: Rules, err: WireError) -> Response:
    """An edge refusal in the surface's shape, naming the capability of an ``invoke``."""
    return rejected(err.status, err.code, err.text, rules.capability, err.headers)


def classify(scope: Scope) -> Rules:
    """The guard's rules for one request to the surface."""
    path = route_path(scope)
    if path.startswith(INVOKE) and len(path) > len(INVOKE):
        return Rules(origin="page", empty_ok=True, capability=path[len(INVOKE) :][:200])
    if path.startswith(APPROVALS) and len(path) > len(APPROVALS):
        return _ANSWER
    return _READING


def session_id(request: Request, session_of: SessionOf | None) -> str | None:
    """The page's session id: ``session_of(request)``, else the surface's own cookie."""
    if session_of is not None:
        try:
            sid = session_of(request)
        except Exception:
            _log.warning(
                "session_of raised; treating the request as having no session", exc_info=True
            )
            return None
        return sid if isinstance(sid, str) and sid else None
    return request.cookies.get(SESSION_COOKIE) or None


@dataclass(frozen=True, slots=True, kw_only=True)
class SurfaceAuth:
    """Step 3 for the surface: a service token, or the page's session and CSRF token.

    Args:
        service_auth: ``(bearer token) -> service identity | None`` (sync or async); ``None``
            refuses every bearer token.
        csrf: the surface's :class:`CsrfTokens`.
        session_of: as :func:`session_id`.
        service_only: refuse a request without a bearer token (401), as Agent Native's
            endpoint does.
        signed_in: refuse a page request without a session (401), reads included: a page
            whose people sign in (``session_of`` then knows only signed-in sessions).
    """

    service_auth: ServiceAuth | None
    csrf: CsrfTokens
    session_of: SessionOf | None
    service_only: bool = False
    signed_in: bool = False

    async def __call__(self, scope: Scope, rules: Rules) -> WireError | None:
        headers = Headers(scope=scope)
        authorization = headers.get("authorization")
        if authorization is None:
            if self.service_only:
                return WireError(
                    401, "unauthenticated", _SERVICE_ONLY_TEXT, {"WWW-Authenticate": "Bearer"}
                )
            sid = session_id(Request(scope), self.session_of)
            if self.signed_in and sid is None:
                return WireError(401, "sign-in", _SIGN_IN_TEXT)
            if rules.origin != "page":
                return None  # a reading route: the page's session is enough
            if not self.csrf.verify(sid, headers.get(CSRF_HEADER)):
                return WireError(403, "csrf", _CSRF_TEXT)
            return None
        identity = await self._service(bearer_token(authorization))
        if identity is None:
            return WireError(401, "unauthenticated", _UNACCEPTED_TEXT)
        scope.setdefault("state", {})[SERVICE_STATE] = identity
        return None

    async def _service(self, token: str | None) -> Any:
        if token is None or self.service_auth is None:
            return None
        try:
            return await awaited(self.service_auth(token))
        except Exception:
            _log.warning("service_auth raised; refusing the token", exc_info=True)
            return None
