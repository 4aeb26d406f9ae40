"""Step 3 of the guard built from a Starlette authentication backend.

:func:`backend_step` runs an ``AuthenticationBackend`` (A2A's
:class:`~foldkit_agent.adapters.a2a.BearerTokenBackend`, the MCP SDK's ``BearerAuthBackend``,
any backend an application brings) *inside* the guard, before any byte of the body is read,
and leaves ``scope["auth"]`` and ``scope["user"]`` exactly as Starlette's
``AuthenticationMiddleware`` would, so what runs behind the guard reads the caller the usual
way (``request.user``, ``request.auth``).

Example:
    >>> step = backend_step(BearerTokenBackend(tokens), on_error=lambda exc: WireError(
    ...     401, "unauthenticated", "The credentials sent could not be verified."))
"""

from __future__ import annotations

import logging
from collections.abc import Callable

from starlette.authentication import (
    AuthCredentials,
    AuthenticationBackend,
    AuthenticationError,
    UnauthenticatedUser,
)
from starlette.requests import HTTPConnection
from starlette.types import Scope

from .guard import Authenticate, Rules
from .wire import WireError

__all__ = ["UNVERIFIED_TEXT", "backend_step"]

_log = logging.getLogger("foldkit_agent.edge")

UNVERIFIED_TEXT = "The credentials sent could not be verified."

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
