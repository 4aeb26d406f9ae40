"""Who calls the surface: a service caller, a page session the surface counts apart, or the one
anonymous caller.

A page session is noted when the page asks ``GET session`` for its CSRF token; from then on it
holds its own share of the per-caller caps. A session id the surface never handed out (a cookie
the page made up) counts as :data:`~foldkit_agent.edge.callers.ANONYMOUS`, so minting cookies
buys nothing.
"""

from __future__ import annotations

import secrets
from collections import OrderedDict
from collections.abc import Callable
from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.types import Scope

from ...edge.callers import ANONYMOUS, DEFAULT_PAGE_SESSIONS, caller_key
from .checks import SERVICE_STATE, rejected, session_id
from .csrf import CSRF_HEADER, SESSION_COOKIE, CsrfTokens

__all__ = [
    "PageSessions",
    "call_caller",
    "identity_of",
    "page_caller",
    "page_owner",
    "service_caller",
    "session_answer",
]

SessionOf = Callable[[Request], Any]


def service_caller(request: Request) -> Any | None:
    """The service identity ``service_auth`` returned for this request, or ``None``.

    Call it from ``credentials_of``: ``None`` means the caller is a browser page with a session;
    otherwise it is a server authenticated by a service token, and any end user it asserts
    (say in :data:`~foldkit_agent.adapters.web.surface.PRINCIPAL_HEADER`) is trusted only as far
    as you decide.
    """
    return getattr(request.state, SERVICE_STATE, None)


class PageSessions:
    """The page sessions a surface counts apart, most recently seen last, at most ``cap``.

    A page session is noted when the page asks ``GET session`` for its CSRF token (the id is
    the surface's own cookie, or what ``session_of`` returns). Each noted session holds its own
    share of ``events`` streams; a request whose session was never noted here (a cookie the page
    made up) or was pushed out by newer ones counts as the one anonymous caller. So one browser
    cannot take every page's streams, and minting sessions buys at most ``cap`` buckets, all
    within the one small total cap on streams (``max_streams``, default 64).
    """

    def __init__(self, cap: int = DEFAULT_PAGE_SESSIONS) -> None:
        if cap < 1:
            raise ValueError(f"the cap on page sessions must be at least 1, got {cap}")
        self.cap = cap
        self._seen: OrderedDict[str, None] = OrderedDict()

    def __len__(self) -> int:
        return len(self._seen)

    def __contains__(self, sid: object) -> bool:
        return sid in self._seen

    def note(self, sid: str) -> None:
        self._seen[sid] = None
        self._seen.move_to_end(sid)
        while len(self._seen) > self.cap:
            self._seen.popitem(last=False)


def page_caller(sessions: PageSessions, session_of: SessionOf | None) -> Callable[[Scope], str]:
    """The edge guard's ``caller`` for the surface: an authenticated caller as everywhere,
    else the page session (``"page-session:<id>"``) when it is one of ``sessions``."""

    def caller(scope: Scope) -> str:
        key = caller_key(scope)
        if key != ANONYMOUS:
            return key
        request = Request(scope)
        if service_caller(request) is not None:
            return key
        sid = session_id(request, session_of)
        return f"page-session:{sid}" if sid is not None and sid in sessions else ANONYMOUS

    return caller


def page_owner(request: Request, session_of: SessionOf | None) -> str | None:
    """The page session a request belongs to (``"page-session:<id>"``, never an identity
    another transport's caller could have); ``None`` for a service caller or no session."""
    if service_caller(request) is not None:
        return None
    sid = session_id(request, session_of)
    return None if sid is None else f"page-session:{sid}"


def call_caller(request: Request, credentials: Any) -> str:
    """Whose caps a call counts against: the caller the edge authenticated as on every
    transport, a service caller by its identity, a page's signed-in user by the identity its
    ``credentials`` carry (:func:`identity_of`), else
    :data:`~foldkit_agent.edge.callers.ANONYMOUS`.

    Never the page session: sessions are free to mint, so every anonymous page together is
    one caller, however many sessions it holds.
    """
    key = caller_key(request.scope)
    if key != ANONYMOUS:
        return key
    service = service_caller(request)
    if service is not None:
        return f"service:{str(service)[:200]}"
    user = identity_of(credentials)
    return ANONYMOUS if user is None else f"page-user:{user[:200]}"


def identity_of(credentials: Any) -> str | None:
    """The identity ``credentials_of`` vouched for: the first non-empty string among the
    credentials' ``id``, ``subject``, ``user_id`` and ``name``, else ``None``."""
    for attr in ("id", "subject", "user_id", "name"):
        value = getattr(credentials, attr, None)
        if isinstance(value, str) and value:
            return value
    return None


def session_answer(
    request: Request, sessions: PageSessions, csrf: CsrfTokens, session_of: SessionOf | None
) -> Response:
    """``GET session``: the page's CSRF token, with a fresh ``HttpOnly`` session cookie when
    the page has none and the application keeps no session of its own."""
    if service_caller(request) is not None:
        return rejected(400, "service", "Service callers need no CSRF token.")
    sid = session_id(request, session_of)
    new_cookie: str | None = None
    if sid is None and session_of is None:
        sid = new_cookie = secrets.token_urlsafe(32)
    if sid is None:
        return rejected(403, "no-session", "Sign in to the page first.")
    sessions.note(sid)  # from now on this page holds its own share of streams
    response = JSONResponse(
        {"csrfToken": csrf.token_for(sid), "csrfHeader": CSRF_HEADER},
        headers={"Cache-Control": "no-store"},
    )
    if new_cookie is not None:
        path = request.scope.get("root_path") or "/"
        response.set_cookie(
            SESSION_COOKIE,
            new_cookie,
            httponly=True,
            samesite="strict",
            path=path,
            secure=request.url.scheme == "https",
        )
    return response
