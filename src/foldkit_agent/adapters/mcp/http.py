"""MCP over streamable HTTP (both protocol eras) behind the edge guard, and a fixed token table.

Every request to the app passes :class:`~foldkit_agent.edge.EdgeGuard` first (DESIGN §9): Host,
Origin, the bearer token, content type and length, strict JSON. The guard runs outside the
SDK's app, so nothing of a request that fails a step (not its body, not its JSON) reaches the
SDK; the SDK's own DNS-rebinding check is turned off, since the guard's one Host policy
replaces it.

Authentication uses the SDK's own pieces through their public extension points: the guard runs
the SDK's ``BearerAuthBackend`` (token verification, expiry and, when configured, the token's
resource) and checks the required scopes, then leaves the verified user in ``scope["user"]``;
the SDK's ``AuthContextMiddleware`` then makes it what ``get_access_token()`` returns, and its
session manager binds each session to it. The token is verified once per request.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, Awaitable, Callable, Mapping
from contextlib import asynccontextmanager
from functools import partial
from typing import Any, Final, cast
from urllib.parse import urlsplit

import anyio
from mcp.server.auth.handlers.metadata import ProtectedResourceMetadataHandler
from mcp.server.auth.middleware.auth_context import AuthContextMiddleware
from mcp.server.auth.middleware.bearer_auth import BearerAuthBackend
from mcp.server.auth.provider import AccessToken, TokenVerifier
from mcp.server.auth.routes import build_resource_metadata_url, cors_middleware
from mcp.server.auth.settings import AuthSettings
from mcp.server.transport_security import TransportSecuritySettings
from mcp.shared.auth import ProtectedResourceMetadata
from starlette.applications import Starlette
from starlette.authentication import (
    AuthCredentials,
    AuthenticationBackend,
    AuthenticationError,
    BaseUser,
)
from starlette.datastructures import Headers
from starlette.requests import HTTPConnection, Request
from starlette.responses import Response
from starlette.routing import Route
from starlette.types import Scope

from ...contract.calls import Invocation
from ...edge.auth import backend_step
from ...edge.callers import Slots
from ...edge.calls import CallsInFlight
from ...edge.guard import Authenticate, EdgeGuard, Routes, Rules, jsonrpc_or_plain
from ...edge.hosts import HostPolicy
from ...edge.oauth import OAuthOptions, OAuthVerifier, tenant_resource
from ...edge.options import DEFAULT_HTTP_OPTIONS, HttpOptions
from ...edge.resolve import audit_refused_call, resolve_runtime, static_runtime
from ...edge.scopes import challenge, scope_table, scopes_supported
from ...edge.tenants import Tenants
from ...edge.tokens import Grant, TokenTable, bearer_token
from ...edge.wire import WireError
from ...runtime.bound import AgentRuntime
from ._sdk import lifespan_state_of
from .inline import InlineCalls, InlineStats, is_inline, lists_alone
from .limits import SessionCaps, stream_hold
from .listing import Listing
from .scopes import ScopeCheck
from .server import CredentialsOf, Resolve, mcp_server

__all__ = [
    "DEFAULT_MAX_BODY",
    "GrantVerifier",
    "StaticTokenVerifier",
    "http_app",
    "resource_metadata",
    "tenant_resource_metadata",
]

DEFAULT_MAX_BODY: Final = 4 * 1024 * 1024
"""Largest request body :func:`http_app` accepts, in bytes (4 MiB, as the SDK); larger is 413."""

TRANSPORT: Final = "mcp"


_SHUTDOWN_GRACE = 5.0  # seconds calls in flight get to answer when the HTTP app shuts down
_WILDCARD_BINDS = frozenset({"0.0.0.0", "::", ""})


class StaticTokenVerifier(TokenVerifier):
    """A :class:`~mcp.server.auth.provider.TokenVerifier` over a fixed token table.

    Tokens are looked up in :class:`foldkit_agent.edge.TokenTable` (by digest, in constant
    time). For demos, tests and local tools; production deployments verify real tokens (JWT,
    token introspection) instead.

    Args:
        tokens: ``{bearer_token: AccessToken}``, or a ``TokenTable`` of
            :class:`~foldkit_agent.edge.Grant` (the one table ``foldkit-agent serve`` shares
            with A2A); a grant becomes ``AccessToken(token, client_id="foldkit-agent",
            scopes, subject)``.

    Example:
        >>> StaticTokenVerifier({"alice-token": AccessToken(token="alice-token",
        ...     client_id="demo", scopes=["todos:delete"], subject="alice")})
    """

    def __init__(self, tokens: Mapping[str, AccessToken] | TokenTable[Grant]) -> None:
        self._tokens: TokenTable[AccessToken] | TokenTable[Grant] = (
            tokens if isinstance(tokens, TokenTable) else TokenTable(tokens)
        )

    async def verify_token(self, token: str) -> AccessToken | None:
        """The token's :class:`AccessToken`, or ``None`` (answered HTTP 401)."""
        found = self._tokens.lookup(token)
        if isinstance(found, Grant):
            return AccessToken(
                token=token,
                client_id="foldkit-agent",
                scopes=list(found.scopes),
                subject=found.subject,
            )
        return found


class GrantVerifier(TokenVerifier):
    """A :class:`~mcp.server.auth.provider.TokenVerifier` over any ``verify(token) -> Grant |
    None``: :meth:`HttpOptions.verify <foldkit_agent.edge.HttpOptions.verify>` (the static
    table, then the OAuth issuer), so MCP checks tokens with the one verifier every adapter of
    the server shares.

    A grant becomes ``AccessToken(token, client_id="foldkit-agent", scopes, subject)``, its
    tenant (if any) in ``claims["tenant"]``.
    """

    def __init__(self, verify: Callable[[str], Awaitable[Grant | None]]) -> None:
        self._verify = verify

    async def verify_token(self, token: str) -> AccessToken | None:
        """The token's :class:`AccessToken`, or ``None`` (answered HTTP 401)."""
        found = await self._verify(token)
        if found is None:
            return None
        return AccessToken(
            token=token,
            client_id="foldkit-agent",
            scopes=list(found.scopes),
            subject=found.subject,
            claims=None if found.tenant is None else {"tenant": found.tenant},
        )


Where = Callable[[Scope], str | None]
"""The protected resource metadata URL a request's challenges name (a tenant's own under
``serve --tenant-from path``), or ``None``."""


class _PerResource(AuthenticationBackend):
    """The SDK's bearer backend over tokens for the resource a request is to: the tenant's
    endpoint its path names (:func:`~foldkit_agent.edge.oauth.tenant_resource`), else the
    issuer's audience."""

    def __init__(self, options: HttpOptions, audience: str) -> None:
        self._options, self._audience = options, audience

    async def authenticate(self, conn: HTTPConnection) -> tuple[AuthCredentials, BaseUser] | None:
        tenant = conn.scope.get("path_params", {}).get("tenant")
        resource = None if tenant is None else tenant_resource(self._audience, tenant)
        verifier = GrantVerifier(partial(self._options.verify, audience=resource))
        return await BearerAuthBackend(verifier).authenticate(conn)


def _backend(
    verifier: TokenVerifier, auth: AuthSettings, options: HttpOptions
) -> AuthenticationBackend:
    """The bearer backend of step 3: with an issuer, tokens for the resource each request is
    to; else ``verifier``'s, for the SDK's ``resource_server_url`` when it validates one."""
    if options.oauth is not None:
        return _PerResource(options, options.oauth.options.audience)
    resource = auth.resource_server_url if auth.validate_token_resource else None
    return BearerAuthBackend(verifier, resource_server_url=resource)


def _where(oauth: OAuthVerifier | None, metadata: str | None, path: str) -> Where:
    """Where a request's challenges send a client: under a tenant's path (the app mounted at
    ``/{tenant}``) with an issuer, that tenant's metadata; else ``metadata``."""
    if oauth is None:
        return lambda _scope: metadata
    audience = oauth.options.audience

    def where(scope: Scope) -> str | None:
        tenant = scope.get("path_params", {}).get("tenant")
        if tenant is None:
            return metadata
        return str(build_resource_metadata_url(cast(Any, tenant_resource(audience, tenant))))

    return where


def _bearer(
    backend: AuthenticationBackend, auth: AuthSettings, where: Where, first: str | None
) -> Authenticate:
    """Step 3 for MCP: the bearer backend, then the required scopes; a 401 names the
    protected resource metadata (``where``, RFC 9728 §5.1) when there is one, and the
    scopes to ask for first (``first``) when there are."""
    required = list(auth.required_scopes or [])
    text = "This server requires a valid bearer token: send Authorization: Bearer <token>."

    def refused(scope: Scope, error: str | None) -> WireError:
        # RFC 6750 §3.1: a request without credentials gets no error code, a bad token one.
        said = None if error is None else "The token is not valid"
        value = challenge(error, said, where(scope), first)
        return WireError(401, "unauthenticated", text, {"WWW-Authenticate": value})

    def missing(scope: Scope) -> WireError:
        sent = bearer_token(Headers(scope=scope).get("authorization"))
        return refused(scope, "invalid_token" if sent else None)

    def scoped(scope: Scope, _rules: Rules) -> WireError | None:
        if not scope["user"].is_authenticated:
            return missing(scope)
        granted = set(scope["auth"].scopes)
        for needed in required:
            if needed not in granted:
                return WireError(
                    403,
                    "insufficient-scope",
                    f"The bearer token lacks the scope {needed!r} this server requires.",
                    {
                        "WWW-Authenticate": challenge(
                            "insufficient_scope", f"Required scope: {needed}", where(scope), needed
                        )
                    },
                )
        return None

    def refuse(_exc: AuthenticationError) -> WireError:
        # the SDK's backend answers a bad token with no user (so ``missing``); an
        # application's backend may raise instead, with no request at hand
        return refused({}, "invalid_token")

    return backend_step(backend, on_error=refuse, then=scoped)


def resource_metadata(
    oauth: OAuthOptions, scopes: list[str], resource: str
) -> ProtectedResourceMetadata:
    """The protected resource metadata (RFC 9728 §2) of ``resource``: ``oauth``'s issuer as
    its one authorization server and ``scopes`` (``None`` when empty) as supported."""
    url: Any = resource
    return ProtectedResourceMetadata(
        resource=url,
        authorization_servers=[cast(Any, oauth.issuer)],
        scopes_supported=scopes or None,
    )


def _serve_resource_metadata(app: Starlette, oauth: OAuthVerifier, scopes: list[str]) -> str:
    """Add the protected resource metadata route (RFC 9728 §3, the SDK's handler) for
    ``oauth``'s audience to ``app``; its URL, for the 401 challenge."""
    resource: Any = oauth.options.audience
    handler = ProtectedResourceMetadataHandler(resource_metadata(oauth.options, scopes, resource))
    metadata = build_resource_metadata_url(resource)
    endpoint = cors_middleware(handler.handle, ["GET", "OPTIONS"])
    route = Route(urlsplit(str(metadata)).path, endpoint=endpoint, methods=["GET", "OPTIONS"])
    app.router.routes.append(route)
    return str(metadata)


def tenant_resource_metadata(oauth: OAuthOptions, path: str = "/mcp") -> Route:
    """The route of every tenant's protected resource metadata under ``serve --tenant-from
    path`` (``/.well-known/oauth-protected-resource/{tenant}/mcp``, RFC 9728 §3.1), to mount
    outside the tenants' path: each names its tenant's endpoint as ``resource``
    (:func:`~foldkit_agent.edge.oauth.tenant_resource`), the issuer and ``oauth``'s scopes.

    Example:
        >>> server = combine(apps, prefix="/{tenant}", routes=[tenant_resource_metadata(oauth)])
    """
    audience, scopes = oauth.audience, list(oauth.scopes)

    async def handle(request: Request) -> Response:
        resource = tenant_resource(audience, request.path_params["tenant"])
        metadata = resource_metadata(oauth, scopes, resource)
        return await ProtectedResourceMetadataHandler(metadata).handle(request)

    endpoint = cors_middleware(handle, ["GET", "OPTIONS"])
    well_known = "/.well-known/oauth-protected-resource/{tenant}" + path
    return Route(well_known, endpoint=endpoint, methods=["GET", "OPTIONS"])


def _routes(path: str) -> Routes:
    """The MCP endpoint takes JSON-RPC; other paths (the OAuth metadata documents) are
    public."""
    return Routes(
        {path: Rules(origin="api", jsonrpc=True)}, Rules(origin="api", body=False, public=True)
    )


def _named(scope: Scope) -> str | None:
    """The capability a refused request named: a modern-era ``tools/call``'s ``Mcp-Name``
    (its body is never trusted, nor read, before the guard passes it)."""
    headers = Headers(scope=scope)
    name = headers.get("mcp-name") if headers.get("mcp-method") == "tools/call" else None
    return name[:200] if name else None


def http_app(
    target: AgentRuntime[Any, Any] | Resolve,
    *,
    name: str,
    version: str,
    options: HttpOptions = DEFAULT_HTTP_OPTIONS,
    instructions: str | None = None,
    credentials_of: CredentialsOf | None = None,
    listing: Listing = "available",
    path: str = "/mcp",
    token_verifier: TokenVerifier | None = None,
    auth: AuthSettings | None = None,
    calls: CallsInFlight | None = None,
) -> Starlette:
    """A Starlette app serving MCP over streamable HTTP at ``path`` (both protocol eras).

    Args:
        target, name, version, instructions, credentials_of, listing: as :func:`mcp_server`.
        options: what every HTTP adapter of the server shares
            (:class:`~foldkit_agent.edge.HttpOptions`), read here as:

            * ``host``: a name (not a wildcard such as ``0.0.0.0``) is accepted in ``Host``
              besides the loopback names; ``allowed_hosts``: more host names a ``Host`` (and
              any ``Origin``) header may carry, any port (others get 421/403).
            * ``max_body``: the largest request body in bytes (default 4 MiB, the SDK's own
              default); a larger ``Content-Length`` gets HTTP 413 before anything is read, a
              larger streamed body as soon as it passes the limit. Every body is JSON
              (``Content-Type``, else 415) and parsed strictly
              (:func:`foldkit_agent.edge.wire.loads_strict`: duplicate keys, ``NaN``,
              ``1e400``, lone surrogates, nesting over 100 levels or more than ``max_items``
              values are a JSON-RPC parse error, HTTP 400).
            * ``caps.sessions_per_caller``, ``caps.sessions``: most handshake-era sessions one
              caller (:func:`foldkit_agent.edge.callers.caller_key`: the token's subject;
              every anonymous caller together counts as one) and all callers may hold open
              (defaults 100 and 1,000); an ``initialize`` past them is refused with HTTP 429
              or 503 and a JSON-RPC error naming the cap. ``caps.session_idle_timeout``:
              seconds after which a session with no request in flight is closed by the SDK,
              giving its slot back (default 1,800). ``caps.streams_per_caller``,
              ``caps.streams``: most open streams (handshake-era ``GET`` streams and
              modern-era ``subscriptions/listen``) one caller and all callers may hold
              (defaults 16 and 256); past them, 429 or 503.
            * ``progress_interval``: as :func:`mcp_server`.
            * ``tokens``: when set (and no ``token_verifier``), the bearer tokens every request
              needs, checked by a :class:`StaticTokenVerifier` over that table.
            * ``oauth``: when set (and no ``token_verifier``), tokens of that issuer are
              accepted too (:class:`GrantVerifier` over ``options.verify``), and the app serves
              the protected resource metadata (RFC 9728) at the well-known path of the
              issuer's audience (``https://todo.example/mcp`` ->
              ``/.well-known/oauth-protected-resource/mcp``) naming the issuer and the scopes
              the capabilities declare; every 401 carries ``WWW-Authenticate: Bearer
              resource_metadata="..."`` so a client finds the issuer from it. Mounted under
              ``/{tenant}``, each tenant's endpoint is its own resource: tokens must name
              :func:`~foldkit_agent.edge.oauth.tenant_resource` in ``aud``, and challenges name
              its metadata (served outside the mount by :func:`tenant_resource_metadata`).
        path: the endpoint path.
        token_verifier: when given (or made from ``options.tokens``), every request needs
            ``Authorization: Bearer <token>``, checked before any byte of the body is read: a
            missing or unknown token gets HTTP 401 (``WWW-Authenticate``), a token without a
            required scope 403, and the verified ``AccessToken`` becomes the call's
            credentials (protocol notes §1.6).
        auth: the SDK's ``AuthSettings`` (issuer, resource URL, required scopes); by default
            a resource server with no advertised metadata and no required scopes.
        calls: the server's calls in flight and their per-caller caps, as
            :func:`mcp_server`; default one of its own within ``options.caps``.

    Returns:
        A :class:`starlette.applications.Starlette` whose lifespan runs the MCP session
        manager (run that lifespan when you mount it inside another app).

    Raises:
        ValueError: an unknown ``listing`` (:func:`mcp_server`), or a malformed
            ``allowed_hosts`` entry (:class:`~foldkit_agent.edge.HostPolicy`).

    Example:
        >>> shared = HttpOptions(caps=CallerLimits(sessions_per_caller=10))
        >>> app = http_app(rt, name="todo", version="1.0", options=shared,
        ...                token_verifier=verifier)
        >>> uvicorn.run(app, host="127.0.0.1", port=8000)
    """
    caps, host = options.caps, options.host
    max_body = options.body_limit(DEFAULT_MAX_BODY)
    oauth = options.oauth if token_verifier is None else None
    if oauth is not None:
        token_verifier = GrantVerifier(options.verify)
    elif token_verifier is None and options.tokens is not None:
        token_verifier = StaticTokenVerifier(options.tokens)
    server = mcp_server(
        target,
        name=name,
        version=version,
        instructions=instructions,
        credentials_of=credentials_of,
        listing=listing,
        progress_interval=options.progress_interval,
        calls=CallsInFlight(caps) if calls is None else calls,
    )
    if token_verifier is not None and auth is None:
        issuer = "http://127.0.0.1" if oauth is None else oauth.options.issuer
        auth = AuthSettings(issuer_url=issuer, resource_server_url=None)  # pyright: ignore[reportArgumentType]
    app = server.streamable_http_app(
        streamable_http_path=path,
        host=host,
        auth=auth,
        max_request_body_size=max_body,
        session_idle_timeout=caps.session_idle_timeout,
        max_sessions=caps.sessions,
        transport_security=TransportSecuritySettings(enable_dns_rebinding_protection=False),
    )
    static = static_runtime(target)
    needs = {} if static is None else scope_table(static.definition.capabilities)
    metadata = first = None
    if oauth is not None:
        first = " ".join(oauth.options.scopes) or None
        listed = scopes_supported(needs, oauth.options.scopes)
        metadata = _serve_resource_metadata(app, oauth, listed)
    elif auth is not None and auth.resource_server_url:
        metadata = str(build_resource_metadata_url(auth.resource_server_url))
    where = _where(oauth, metadata, path)
    served_as = [] if host in _WILDCARD_BINDS else [host]

    async def audit(scope: Scope, rules: Rules, err: WireError, authenticated: bool) -> None:
        # resolve(ctx) needs the SDK's request context, which a refused request never gets:
        # only a fixed runtime can record it. Past authentication (a rate limit, a body cap)
        # the refusal is the verified token's caller's (a credentials_of hook needs that
        # context too: no principal then).
        capability = None if static is None or not rules.jsonrpc else _named(scope)
        if static is None or capability is None:
            return
        user = scope.get("user") if authenticated and credentials_of is None else None
        token = getattr(user, "access_token", None)
        invocation = Invocation(transport=TRANSPORT, credentials=token)
        await audit_refused_call(static, invocation, capability, err)

    sessions = Slots(
        "open MCP sessions",
        per_caller=min(caps.sessions_per_caller, caps.sessions),
        total=caps.sessions,
    )
    streams = Slots(
        "open MCP streams",
        per_caller=min(caps.streams_per_caller, caps.streams),
        total=caps.streams,
        evict_idle=True,
    )
    manager = server.session_manager
    app.add_middleware(SessionCaps, sessions=sessions, manager=lambda: manager, path=path)
    assert server.tools is not None  # every mcp_server() has them
    inline = is_inline(server.tools, path)
    stats = InlineStats()
    app.add_middleware(
        InlineCalls,
        inline=inline,
        server=server,
        tools=server.tools,
        security=manager.security_settings,
        lifespan_state=lambda: lifespan_state_of(manager),
        stats=stats,
        kept_lists=not server.observed,
    )
    if token_verifier is not None:
        # Outside the inline path, so the verified user is get_access_token()'s there too.
        app.add_middleware(AuthContextMiddleware)
    if token_verifier is not None and needs and static is not None:
        app.add_middleware(ScopeCheck, runtime=static, metadata=where)
    elif token_verifier is not None and isinstance(target, Tenants):
        tenants = target

        async def tenant_of(scope: Scope) -> AgentRuntime[Any, Any]:
            # the keys of Tenants read a Starlette request as they read the SDK's context
            return await resolve_runtime(tenants, Request(scope))

        app.add_middleware(ScopeCheck, runtime=tenant_of, metadata=where)
    app.add_middleware(
        EdgeGuard,
        hosts=HostPolicy(options.allowed_hosts, also=served_as),
        classify=_routes(path),
        max_body=max_body,
        render=jsonrpc_or_plain,
        authenticate=None
        if token_verifier is None or auth is None
        else _bearer(_backend(token_verifier, auth, options), auth, where, first),
        on_refusal=audit,
        max_items=options.max_items,
        hold=stream_hold(path, streams),
        rates=options.rates,
        unwatched=lists_alone(inline),
    )
    inner = app.router.lifespan_context

    @asynccontextmanager
    async def lifespan(application: Starlette) -> AsyncGenerator[None]:
        async with inner(application):
            try:
                yield
            finally:
                # Calls still waiting (for a completion, say) answer "cancelled, outcome
                # unknown" before the SDK's task group is cancelled under them.
                with anyio.CancelScope(shield=True):
                    await server.abort_calls(_SHUTDOWN_GRACE)
                server.close_feeds()

    app.router.lifespan_context = lifespan
    app.state.mcp_server = server
    app.state.mcp_sessions = sessions
    app.state.mcp_streams = streams
    app.state.mcp_inline = stats  # calls answered in one JSON response (.inline)
    app.state.deliver_answers = server.abort_calls  # after a drain: hand the answers over
    return app
