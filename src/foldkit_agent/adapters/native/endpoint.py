"""The Python side of the generated actions: the shared HTTP surface for service callers only.

:func:`native_app` mounts :func:`foldkit_agent.adapters.web.agent_surface` behind a service
token; :func:`native_caller` reads what the calling Agent Native server asserts about its user,
only after that token was checked.
"""

from __future__ import annotations

import urllib.parse
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.routing import Mount

from ...edge.calls import CallsInFlight
from ...edge.options import DEFAULT_HTTP_OPTIONS, HttpOptions
from ...edge.resolve import awaited
from ...edge.tokens import TokenTable
from ..web.surface import PRINCIPAL_HEADER, SurfaceTarget, agent_surface, service_caller
from .codegen import CALLER_HEADER, ORG_HEADER

__all__ = [
    "MIN_TOKEN_LENGTH",
    "CredentialsOf",
    "NativeCaller",
    "native_app",
    "native_caller",
]

MIN_TOKEN_LENGTH = 16
"""Shortest service token :func:`native_app` accepts, in characters."""


@dataclass(frozen=True, slots=True)
class NativeCaller:
    """What an authenticated Agent Native server says about the caller it acts for.

    Only ever built after the server's service token was verified, so ``service`` is who
    vouches for the rest; the other fields are *assertions* by that server, not proofs.

    Attributes:
        service: the identity ``native_app`` mapped the service token to.
        user_email: Agent Native's ``ctx.userEmail`` (``None`` when unknown).
        org_id: ``ctx.orgId``.
        caller: ``ctx.caller`` (``"tool"``, ``"http"``, ``"mcp"``, ...).
    """

    service: Any
    user_email: str | None = None
    org_id: str | None = None
    caller: str | None = None


def _header(request: Request, name: str) -> str | None:
    raw = request.headers.get(name)
    if raw is None or raw == "":
        return None
    value = urllib.parse.unquote(raw, errors="strict")
    return value[:320] or None


def native_caller(request: Request) -> NativeCaller | None:
    """The :class:`NativeCaller` of a request, or ``None`` when no service token was verified.

    Reads the caller headers the generated actions send only *after* the surface
    authenticated the calling server; without that, an asserted e-mail address is ignored.

    Raises:
        UnicodeDecodeError: a caller header is not percent-encoded UTF-8 (the surface then
            refuses the call with 403).

    Example:
        >>> def credentials_of(request):
        ...     caller = native_caller(request)
        ...     return None if caller is None else users.get(caller.user_email)
    """
    service = service_caller(request)
    if service is None:
        return None
    return NativeCaller(
        service=service,
        user_email=_header(request, PRINCIPAL_HEADER),
        org_id=_header(request, ORG_HEADER),
        caller=_header(request, CALLER_HEADER),
    )


def _token_table(service_tokens: Mapping[str, Any] | Iterable[str]) -> TokenTable[Any]:
    """The service tokens as the edge's one constant-time :class:`TokenTable`."""
    if isinstance(service_tokens, str):
        raise TypeError("service_tokens takes a collection of tokens, not one string")
    if isinstance(service_tokens, Mapping):
        tokens: dict[str, Any] = dict(service_tokens)  # pyright: ignore[reportUnknownArgumentType]
    else:
        tokens = dict.fromkeys(service_tokens, "agent-native")
    if not tokens:
        raise ValueError("native_app needs at least one service token")
    try:
        return TokenTable(tokens, min_length=MIN_TOKEN_LENGTH)
    except ValueError:
        raise ValueError(
            f"service tokens must be strings of at least {MIN_TOKEN_LENGTH} characters, "
            "each mapped to an identity (not None)"
        ) from None


CredentialsOf = Callable[[Request], Any]


def native_app(
    target: SurfaceTarget,
    *,
    service_tokens: Mapping[str, Any] | Iterable[str],
    options: HttpOptions = DEFAULT_HTTP_OPTIONS,
    credentials_of: CredentialsOf | None = None,
    path: str = "/agent",
    transport: str = "agent-native",
    trust_service_approvals: bool = False,
    calls: CallsInFlight | None = None,
) -> Starlette:
    """The HTTP surface the generated actions call, for service callers only.

    Mounts :func:`foldkit_agent.adapters.web.agent_surface` at ``path`` with bearer authentication
    of the calling *server* at step 3 of the edge guard: after the Host and Origin checks, a
    request without ``Authorization: Bearer <token>`` is refused with 401, a token that is not
    one of ``service_tokens`` with 401 (looked up in the edge's constant-time
    :class:`~foldkit_agent.edge.TokenTable`), before any byte of the body is read; only then is
    the caller context read.

    Args:
        target: one bound runtime, or ``resolve(request) -> AgentRuntime`` (sync or async),
            called per request, so each user or tenant can have its own Model; inside it,
            :func:`native_caller` tells who is asking.
        service_tokens: accepted tokens, either ``{token: service identity}`` or a collection
            of tokens (identity ``"agent-native"``); each at least 16 characters.
        credentials_of: ``(request) -> credentials`` (sync or async) placed on
            ``Invocation.credentials`` for the runtime's principal provider. Default:
            :func:`native_caller` (a :class:`NativeCaller`). A custom hook should call
            :func:`native_caller` and map the asserted user to the application's own
            principal, deciding per service whether to trust it. Raising refuses with 403.
        path: where the surface is mounted; the generated actions' ``--url`` is
            ``<origin><path>``.
        options: what every HTTP adapter of the server shares
            (:class:`~foldkit_agent.edge.HttpOptions`), read as
            :func:`~foldkit_agent.adapters.web.agent_surface` reads it (host names, body caps,
            the ``events`` stream caps); its ``tokens`` are not read: ``service_tokens`` are
            these callers' credentials.
        transport: ``Invocation.transport`` of these calls (audited).
        trust_service_approvals: count a call's ``X-Foldkit-Approved`` header (sent by a
            generated action after Agent Native's ``needsApproval`` step asked its user) as a
            person's approval of a ``confirm`` capability, recorded as ``approved_by="<user>
            (approved in agent-native)"``. Off by default: such a call is then refused as
            ``"unavailable"``, since this server cannot ask anyone itself (DESIGN §11). Turn
            it on only for services you trust to ask their user.
        calls: the server's calls in flight, whose per-caller caps (each service token's
            identity is one caller) count these calls with every other transport's
            (:class:`~foldkit_agent.edge.calls.CallsInFlight`); default one of its own within
            ``options.caps``.

    Returns:
        A Starlette app; serve it with uvicorn or mount it in the application's server.

    Raises:
        ValueError: no tokens, a short token, a token mapped to ``None``, or a malformed
            ``options.allowed_hosts`` entry.
        TypeError: ``service_tokens`` is a single string.

    Example:
        >>> app = native_app(rt, service_tokens={os.environ["FOLDKIT_AGENT_TOKEN"]: "mail"})
        >>> uvicorn.run(app, host="127.0.0.1", port=8000)
    """
    table = _token_table(service_tokens)

    async def default_credentials(request: Request) -> Any:
        return native_caller(request)

    hook: CredentialsOf = credentials_of if credentials_of is not None else default_credentials

    async def credentials(request: Request) -> Any:
        if service_caller(request) is None:  # unreachable behind the guard; fail closed
            return None
        return await awaited(hook(request))

    surface = agent_surface(
        target,
        credentials_of=credentials,
        service_auth=table.lookup,
        options=options,
        transport=transport,
        service_transport=transport,
        service_only=True,
        trust_service_approvals=trust_service_approvals,
        calls=calls,
    )
    mount = "/" + path.strip("/")
    return Starlette(routes=[Mount(mount, app=surface)])
