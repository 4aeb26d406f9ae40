"""Who is calling: the bearer-token backend, the caller on ``Invocation.credentials``, the 401
answer, and the call context that carries the caller to the executor.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, cast

from a2a.server.context import ServerCallContext
from a2a.server.routes.common import DefaultServerCallContextBuilder
from starlette.authentication import (
    AuthenticationBackend,
    AuthenticationError,
    BaseUser,
)
from starlette.requests import HTTPConnection, Request
from starlette.responses import Response
from starlette.types import Scope

from ...edge.auth import (
    REQUIRED_TEXT,
    UNVERIFIED_TEXT,
    BearerBackend,
    CredentialsMissing,
    backend_step,
)
from ...edge.disconnect import WATCH
from ...edge.guard import Authenticate, Rules, jsonrpc_or_plain
from ...edge.options import HttpOptions
from ...edge.tenants import GRANT_TENANT_KEY, PATH_TENANT_KEY
from ...edge.tokens import Grant, TokenTable
from ...edge.wire import WireError
from .card import is_public_card
from .errors import OWN_TEXTS_KEY

__all__ = [
    "A2ACaller",
    "BearerTokenBackend",
    "CredentialsRequiredError",
    "VerifiedBearerBackend",
]

CREDENTIALS_KEY = "foldkit_agent.credentials"
_SECRET_HEADERS = ("authorization", "cookie", "proxy-authorization")


@dataclass(frozen=True, slots=True)
class A2ACaller:
    """What Starlette authentication established for one A2A request.

    Put on :attr:`Invocation.credentials <foldkit_agent.contract.calls.Invocation.credentials>`
    (transport ``"a2a"``) for the runtime's principal provider. Unauthenticated requests carry
    ``credentials=None`` instead.

    Attributes:
        subject: the user's identity (``user.identity``, else ``user.display_name``).
        scopes: the scopes of ``request.auth`` (``AuthCredentials.scopes``).
        user: the Starlette user object the backend returned.
    """

    subject: str
    scopes: tuple[str, ...]
    user: BaseUser


class CredentialsRequiredError(CredentialsMissing):
    """Raised by an authentication backend for a request that must carry credentials but
    carries none; :func:`a2a_app` answers it (and the edge's
    :class:`~foldkit_agent.edge.auth.CredentialsMissing`) 401 saying a bearer token is
    required."""


class VerifiedBearerBackend(BearerBackend):
    """The edge's :class:`~foldkit_agent.edge.auth.BearerBackend` for A2A: tokens checked by
    :meth:`HttpOptions.verify <foldkit_agent.edge.HttpOptions.verify>` (the static table,
    then the OAuth issuer), so A2A checks them with the one verifier MCP uses.

    A header with a token it vouches for is the grant's subject and scopes (a
    :class:`~foldkit_agent.edge.auth.GrantUser`); one it does not (or another scheme) is
    answered 401 by :func:`a2a_app`. A request without an ``Authorization`` header is
    anonymous (protected capabilities then refuse it), unless ``required``.

    Args:
        options: the server's :class:`~foldkit_agent.edge.HttpOptions` (its ``tokens`` and
            ``oauth``).
        required: every request except the public Agent Card (``GET`` or ``HEAD``
            :data:`CARD_PATH`) must carry a token it vouches for; without one it is answered
            401. :func:`a2a_app` then also declares the scheme in the card's top-level
            ``securityRequirements``. Default ``False``.

    Example:
        >>> a2a_app(rt, name="todo", version="1", base_url=url,
        ...         authentication=VerifiedBearerBackend(shared, required=True))
    """

    def __init__(self, options: HttpOptions, *, required: bool = False) -> None:
        super().__init__(options, required=required, public=is_public_card)


class BearerTokenBackend(VerifiedBearerBackend):
    """A :class:`VerifiedBearerBackend` over a fixed bearer-token table.

    For demos, tests and local tools (the counterpart of the MCP adapter's
    ``StaticTokenVerifier``); production deployments verify real tokens (``HttpOptions(
    oauth=...)``, which :func:`a2a_app` checks with :class:`VerifiedBearerBackend`).

    Args:
        tokens: ``{token: (subject, scopes)}``, or a :class:`~foldkit_agent.edge.TokenTable`
            of :class:`~foldkit_agent.edge.Grant` (the one table ``foldkit-agent serve``
            shares with MCP). Looked up by digest, in constant time.
        required: as :class:`VerifiedBearerBackend`.

    Example:
        >>> a2a_app(rt, name="todo", version="1", base_url=url,
        ...         authentication=BearerTokenBackend({"alice-token": ("alice", ["todos:delete"])},
        ...                                           required=True))
    """

    def __init__(
        self,
        tokens: Mapping[str, tuple[str, Sequence[str]]] | TokenTable[Grant],
        *,
        required: bool = False,
    ) -> None:
        table: TokenTable[Grant] = (
            tokens
            if isinstance(tokens, TokenTable)
            else TokenTable({t: Grant(who, tuple(scopes)) for t, (who, scopes) in tokens.items()})
        )
        super().__init__(HttpOptions(tokens=table), required=required)


# ---------------------------------------------------------------------------------------------
# caller identity and the app
# ---------------------------------------------------------------------------------------------


class ContextBuilder(DefaultServerCallContextBuilder):
    """Adds the Starlette-authenticated caller (or ``None``) to the call context's state, and
    the tenant of the path the request came through
    (:data:`~foldkit_agent.edge.tenants.PATH_TENANT_KEY`, ``None`` outside a tenant's path)
    and the one its verified token's claim names
    (:data:`~foldkit_agent.edge.tenants.GRANT_TENANT_KEY`, ``None`` without one).

    The raw ``Authorization`` and ``Cookie`` headers are dropped from ``state["headers"]``:
    authentication already consumed them, and the SDK logs the call context at DEBUG level.
    """

    def build(self, request: Request) -> ServerCallContext:
        ctx = super().build(request)
        headers = ctx.state.get("headers")
        if isinstance(headers, dict):
            for secret in _SECRET_HEADERS:
                cast(dict[str, Any], headers).pop(secret, None)
        caller = ctx.state[CREDENTIALS_KEY] = _caller(request)
        grant = getattr(caller.user, "grant", None) if caller is not None else None
        ctx.state[GRANT_TENANT_KEY] = grant.tenant if isinstance(grant, Grant) else None
        watching = request.scope.get(WATCH)
        if watching is not None:  # the executor's call is aborted if its client goes away
            ctx.state[WATCH] = watching
        # the tenant of the mount the request came through, never A2A's own ``tenant``
        ctx.state[PATH_TENANT_KEY] = request.scope.get(PATH_TENANT_KEY)
        own = request.scope.get(OWN_TEXTS_KEY)
        if isinstance(own, set):
            ctx.state[OWN_TEXTS_KEY] = own
        return ctx


def _caller(conn: HTTPConnection) -> A2ACaller | None:
    if "user" not in conn.scope:
        return None
    user: Any = conn.scope["user"]
    if not isinstance(user, BaseUser) or not user.is_authenticated:
        return None
    try:
        subject = str(user.identity)
    except NotImplementedError:
        subject = user.display_name
    auth = conn.scope.get("auth")
    scopes = tuple(str(s) for s in cast(list[Any], getattr(auth, "scopes", None) or []))
    return A2ACaller(subject=subject, scopes=scopes, user=user)


def authenticate_step(backend: AuthenticationBackend, challenge: str | None) -> Authenticate:
    """Step 3 of the edge guard for A2A: ``backend``, before any byte of the body is read.

    A failed authentication is 401 with ``WWW-Authenticate: <challenge>`` and one of two
    sentences of ours (never the backend's exception text).
    """
    headers = {"WWW-Authenticate": challenge} if challenge else None

    def refuse(exc: AuthenticationError) -> WireError:
        text = REQUIRED_TEXT if isinstance(exc, CredentialsMissing) else UNVERIFIED_TEXT
        return WireError(401, "unauthenticated", text, headers)

    return backend_step(backend, on_error=refuse)


def render_refusal(scope: Scope, rules: Rules, err: WireError) -> Response:
    """An edge refusal (a 401 included) in the route's shape: a JSON-RPC error object on the
    JSON-RPC route, ``{"error": {"code", "status", "message"}}`` on the HTTP+JSON routes."""
    return jsonrpc_or_plain(scope, rules, err)
