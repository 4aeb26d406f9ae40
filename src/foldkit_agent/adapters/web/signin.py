"""A person signs in to the console and the page: a bearer token exchanged once for a session.

With tokens (``serve --token TOKEN=SUBJECT[;SCOPE,...]``), the console and the page surface
answer only a signed-in person. The person sends one of the tokens once, to ``POST
console/sign-in`` (``{"token": "..."}``); :class:`People` looks it up in the server's one
:class:`~foldkit_agent.edge.TokenTable` and, if it is known, opens a session: a random id
(256 bits) in the ``HttpOnly; SameSite=Strict`` cookie :data:`PERSON_COOKIE` (``Secure`` over
HTTPS), mapped server-side to the token's :class:`~foldkit_agent.edge.Grant`. The token
itself is never stored in the browser. Every state-changing request then carries the
session's CSRF token (:class:`~foldkit_agent.adapters.web.csrf.CsrfTokens`), as the page
surface's do.

Who may answer what (:class:`ApproverPolicy`): by default a person answers the requests of
their own agents only (a call whose caller is their subject: ``"principal:alice"`` over MCP
and A2A, ``"page-user:alice"`` on the page); a token with the approver scope
(:data:`APPROVER_SCOPE`, ``--token TOKEN=carol;approver``) answers everyone's.

Without tokens there is nobody to sign in: :func:`local_person` is the one person, who may
answer every request, and ``serve`` keeps such a console on loopback only.

Example:
    >>> people = People(TokenTable({"t" * 20: Grant("alice")}))
    >>> sid = people.sign_in("t" * 20)
    >>> people.person(sid)
    Grant(subject='alice', scopes=())
"""

from __future__ import annotations

import secrets
from collections import OrderedDict
from dataclasses import dataclass
from typing import TYPE_CHECKING, Final

from starlette.requests import Request
from starlette.responses import Response

from ...edge.tokens import Grant, TokenTable

if TYPE_CHECKING:
    from .issuer_signin import IssuerSignIn

__all__ = [
    "APPROVER_SCOPE",
    "DEFAULT_PEOPLE_SESSIONS",
    "DEFAULT_SESSIONS_PER_PERSON",
    "LOCAL_PERSON",
    "PERSON_COOKIE",
    "SIGN_IN_PAGE",
    "ApproverPolicy",
    "People",
    "local_person",
    "set_person_cookie",
    "subject_of_caller",
]

PERSON_COOKIE: Final = "foldkit_agent_person"
"""The cookie holding a signed-in person's session id (``HttpOnly``, ``SameSite=Strict``)."""

SIGN_IN_PAGE: Final = "/console/sign-in?next=/"
"""Where the page sends a person who has not signed in (the console's sign-in, back to ``/``)."""

APPROVER_SCOPE: Final = "approver"
"""The scope that makes a token's person an approver of every caller's requests."""

DEFAULT_PEOPLE_SESSIONS: Final = 1024
"""Signed-in sessions kept at once; the least recently used goes first."""
DEFAULT_SESSIONS_PER_PERSON: Final = 16
"""Signed-in sessions one person (one subject) keeps at once; their own least recently used
goes first, so signing in again and again never signs anybody else out."""

LOCAL_PERSON: Final = Grant("local person", (APPROVER_SCOPE,))
"""Who answers on a server without tokens: whoever can reach its loopback port."""


def local_person() -> Grant:
    """The person of a server without tokens (:data:`LOCAL_PERSON`)."""
    return LOCAL_PERSON


def subject_of_caller(caller: str) -> str | None:
    """The subject a call's caller key names (``"principal:alice"``, ``"page-user:alice"``
    -> ``"alice"``), or ``None`` for an anonymous caller or a service.

    Example:
        >>> subject_of_caller("principal:alice"), subject_of_caller("anonymous")
        ('alice', None)
    """
    for prefix in ("principal:", "page-user:"):
        if caller.startswith(prefix):
            return caller[len(prefix) :] or None
    return None


@dataclass(frozen=True, slots=True)
class ApproverPolicy:
    """Which requests a signed-in person may answer.

    Attributes:
        approver_scope: a person whose token has this scope answers every request; ``None``
            gives nobody that role.
        own_agents: a person answers the requests of their own agents (calls whose caller is
            their subject).

    Example:
        >>> ApproverPolicy().may_answer(Grant("alice"), "principal:alice")
        True
        >>> ApproverPolicy().may_answer(Grant("alice"), "principal:bob")
        False
    """

    approver_scope: str | None = APPROVER_SCOPE
    own_agents: bool = True

    def may_answer(self, person: Grant, caller: str) -> bool:
        """Whether ``person`` may answer a call of ``caller`` (a caller key)."""
        if self.approver_scope is not None and self.approver_scope in person.scopes:
            return True
        return self.own_agents and subject_of_caller(caller) == person.subject


class People:
    """The signed-in people of one server: session id -> :class:`Grant`, at most ``cap``, and
    at most ``per_person`` of one subject.

    Args:
        tokens: the server's token table (the same one MCP and A2A check).
        cap: sessions kept at once (least recently used dropped first).
        per_person: sessions one subject keeps at once (their own least recently used
            dropped first: one person signing in many times signs out only themselves).
        issuer: a person may also sign in through the server's OAuth issuer
            (:class:`~foldkit_agent.adapters.web.issuer_signin.IssuerSignIn`), or ``None``.

    Raises:
        ValueError: ``cap`` or ``per_person`` below 1.
    """

    def __init__(
        self,
        tokens: TokenTable[Grant],
        cap: int = DEFAULT_PEOPLE_SESSIONS,
        *,
        per_person: int = DEFAULT_SESSIONS_PER_PERSON,
        issuer: IssuerSignIn | None = None,
    ) -> None:
        if cap < 1 or per_person < 1:
            raise ValueError(
                f"the caps on signed-in sessions must be at least 1, got {cap} and {per_person}"
            )
        self.issuer = issuer
        self._tokens = tokens
        self._cap = cap
        self._per_person = per_person
        self._sessions: OrderedDict[str, Grant] = OrderedDict()
        self._of: dict[str, OrderedDict[str, None]] = {}  # subject -> their sessions, LRU first

    def __len__(self) -> int:
        return len(self._sessions)

    @property
    def takes_tokens(self) -> bool:
        """Whether a person may sign in with a token (the table holds any)."""
        return len(self._tokens) > 0

    def sign_in(self, token: str) -> str | None:
        """A new session for the person of ``token``, or ``None`` for an unknown token."""
        grant = self._tokens.lookup(token)
        return None if grant is None else self.open(grant)

    def open(self, grant: Grant) -> str:
        """A new session for ``grant`` (the local person of a server without tokens)."""
        sid = secrets.token_urlsafe(32)
        mine = self._of.setdefault(grant.subject, OrderedDict())
        while len(mine) >= self._per_person:
            self._drop(next(iter(mine)))
        mine[sid] = None
        self._sessions[sid] = grant
        while len(self._sessions) > self._cap:
            self._drop(next(iter(self._sessions)))
        return sid

    def _drop(self, sid: str) -> None:
        grant = self._sessions.pop(sid, None)
        if grant is None:
            return
        mine = self._of.get(grant.subject)
        if mine is not None:
            mine.pop(sid, None)
            if not mine:
                del self._of[grant.subject]

    def sign_out(self, sid: str | None) -> None:
        """End the session ``sid`` (nothing when it is unknown)."""
        if sid is not None:
            self._drop(sid)

    def person(self, sid: str | None) -> Grant | None:
        """Who session ``sid`` is signed in as, else ``None``."""
        if sid is None:
            return None
        grant = self._sessions.get(sid)
        if grant is not None:
            self._sessions.move_to_end(sid)
            self._of[grant.subject].move_to_end(sid)
        return grant

    def session_of(self, request: Request) -> str | None:
        """The request's signed-in session id (its :data:`PERSON_COOKIE`), else ``None``: the
        page surface's ``session_of``."""
        sid = request.cookies.get(PERSON_COOKIE)
        return sid if sid is not None and sid in self._sessions else None

    def credentials_of(self, request: Request) -> Grant | None:
        """The request's signed-in person, else ``None``: the page surface's
        ``credentials_of``, so a browser agent's calls carry the person's subject."""
        return self.person(self.session_of(request))


def set_person_cookie(response: Response, request: Request, sid: str) -> None:
    """Put the signed-in session ``sid`` in ``response``'s :data:`PERSON_COOKIE`
    (``HttpOnly``, ``SameSite=Strict``, ``Secure`` over HTTPS, for the whole site)."""
    response.set_cookie(
        PERSON_COOKIE,
        sid,
        httponly=True,
        samesite="strict",
        path="/",
        secure=request.url.scheme == "https",
    )
