"""Step 3 of the guard built from a Starlette authentication backend, and the backend of the
server's own bearer tokens.

:func:`backend_step` runs an ``AuthenticationBackend`` (A2A's
:class:`~foldkit_agent.adapters.a2a.BearerTokenBackend`, the MCP SDK's ``BearerAuthBackend``,
any backend an application brings) *inside* the guard, before any byte of the body is read,
and leaves ``scope["auth"]`` and ``scope["user"]`` exactly as Starlette's
``AuthenticationMiddleware`` would, so what runs behind the guard reads the caller the usual
way (``request.user``, ``request.auth``).

:class:`BearerBackend` verifies a bearer token the way every adapter of one server does
(:meth:`HttpOptions.verify <foldkit_agent.edge.HttpOptions.verify>`: the ``--token`` table,
then the OAuth issuer), and :func:`bearer_step` makes it the guard's step 3 with the 401
answers of RFC 6750.

Example:
    >>> step = backend_step(BearerTokenBackend(tokens), on_error=lambda exc: WireError(
    ...     401, "unauthenticated", "The credentials sent could not be verified."))
    >>> step = bearer_step(HttpOptions(tokens=TokenTable({"t": Grant("alice")})))
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from starlette.authentication import (
    AuthCredentials,
    AuthenticationBackend,
    AuthenticationError,
    SimpleUser,
    UnauthenticatedUser,
)
from starlette.requests import HTTPConnection
from starlette.types import Scope

from .guard import Authenticate, Rules
from .options import HttpOptions
from .scopes import challenge
from .tokens import Grant, bearer_token
from .wire import WireError

__all__ = [
    "REQUIRED_TEXT",
    "UNVERIFIED_TEXT",
    "BearerBackend",
    "CredentialsMissing",
    "GrantUser",
    "backend_step",
    "bearer_step",
    "granted",
]

_log = logging.getLogger("foldkit_agent.edge")

UNVERIFIED_TEXT = "The credentials sent could not be verified."
REQUIRED_TEXT = "This server requires credentials: send Authorization: Bearer <token>."

Check = Callable[[Scope, Rules], WireError | None]


def backend_step(
    backend: AuthenticationBackend,
    *,
    on_error: Callable[[AuthenticationError], WireError],
    then: Check | None = None,
) -> Authenticate:
    """An :data:`~.guard.Authenticate` step running ``backend``.

    Args:
        backend: ``authenticate(conn) -> (AuthCredentials, BaseUser) | None``; ``None`` makes
            the request anonymous (``UnauthenticatedUser``).
        on_error: the refusal for an ``AuthenticationError`` the backend raised (its text is
            never shown). Any other exception is logged and refused as unverified (401).
        then: a further check once ``scope["user"]`` is set (an anonymous request refused on a
            route that needs a caller, a missing scope), or ``None``.
    """

    async def step(scope: Scope, rules: Rules) -> WireError | None:
        try:
            result = await backend.authenticate(HTTPConnection(scope))
        except AuthenticationError as exc:
            return on_error(exc)
        except Exception:
            _log.warning("the authentication backend raised", exc_info=True)
            return WireError(401, "unauthenticated", UNVERIFIED_TEXT)
        if result is None:
            scope["auth"], scope["user"] = AuthCredentials(), UnauthenticatedUser()
        else:
            scope["auth"], scope["user"] = result
        return None if then is None else then(scope, rules)

    return step


class GrantUser(SimpleUser):
    """The Starlette user of a verified bearer token: its subject, and the :class:`Grant`
    itself (what the call carries as ``Invocation.credentials``)."""

    def __init__(self, grant: Grant) -> None:
        super().__init__(grant.subject)
        self.grant = grant


class CredentialsMissing(AuthenticationError):
    """No ``Authorization`` header where one is required."""


class BearerBackend(AuthenticationBackend):
    """Bearer tokens verified by ``options.verify`` (the server's token table, then its
    OAuth issuer): a known token authenticates a :class:`GrantUser` with the grant's scopes;
    an unknown one (or another scheme) raises ``AuthenticationError``; no header is anonymous,
    unless ``required`` (then :class:`CredentialsMissing`), except on a ``public`` request
    (A2A's public card).

    Attributes:
        required: as given; an adapter reads it (A2A's card then requires the scheme).

    Example:
        >>> backend = BearerBackend(HttpOptions(tokens=table), required=True)
    """

    def __init__(
        self,
        options: HttpOptions,
        *,
        required: bool = True,
        public: Callable[[Scope], bool] | None = None,
    ) -> None:
        self.options = options
        self.required = required
        self.public = public

    async def authenticate(self, conn: HTTPConnection) -> tuple[AuthCredentials, GrantUser] | None:
        header = conn.headers.get("authorization")
        if header is None:
            if self.required and (self.public is None or not self.public(conn.scope)):
                raise CredentialsMissing("a bearer token is required")
            return None
        grant = await self.options.verify(bearer_token(header))
        if grant is None:
            raise AuthenticationError("unknown bearer token")
        return AuthCredentials(list(grant.scopes)), GrantUser(grant)


def bearer_step(
    options: HttpOptions,
    *,
    metadata: str | None = None,
    public: Callable[[Scope], bool] | None = None,
) -> Authenticate:
    """Step 3 requiring a bearer token :class:`BearerBackend` verifies: without one, 401 with
    ``WWW-Authenticate: Bearer`` (and ``resource_metadata`` when given) and no error code
    (RFC 6750 §3.1); with one it cannot verify, 401 ``invalid_token``. The texts are ours.
    A ``public`` request (A2A's card) needs none.
    """
    missing = challenge(None, None, metadata)
    invalid = challenge("invalid_token", "The token is not valid", metadata)

    def refuse(exc: AuthenticationError) -> WireError:
        if isinstance(exc, CredentialsMissing):
            return WireError(401, "unauthenticated", REQUIRED_TEXT, {"WWW-Authenticate": missing})
        return WireError(401, "unauthenticated", UNVERIFIED_TEXT, {"WWW-Authenticate": invalid})

    return backend_step(BearerBackend(options, public=public), on_error=refuse)


def granted(scope: Scope) -> Grant | None:
    """The :class:`Grant` of the request's verified bearer token, else ``None``."""
    user: Any = scope.get("user")
    return user.grant if isinstance(user, GrantUser) else None
