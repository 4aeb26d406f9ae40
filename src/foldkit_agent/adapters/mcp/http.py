"""MCP over streamable HTTP (both protocol eras), and a fixed bearer-token table for demos."""

from __future__ import annotations

from collections.abc import (
    AsyncGenerator,
    Iterable,
    Mapping,
)
from contextlib import asynccontextmanager
from typing import Any, Final

import anyio
from mcp.server.auth.provider import AccessToken, TokenVerifier
from mcp.server.auth.settings import AuthSettings
from starlette.applications import Starlette

from ...edge.wire import (
    LOOPBACK_HOSTS,
    JsonBodyGuard,
)
from ...runtime.bound import AgentRuntime
from .server import PrincipalOf, Resolve, mcp_server

__all__ = [
    "DEFAULT_MAX_BODY",
    "StaticTokenVerifier",
    "http_app",
]

DEFAULT_MAX_BODY: Final = 4 * 1024 * 1024
"""Largest request body :func:`http_app` accepts, in bytes (4 MiB, as the SDK); larger is 413."""


_SHUTDOWN_GRACE = 5.0  # seconds calls in flight get to answer when the HTTP app shuts down


class StaticTokenVerifier(TokenVerifier):
    """A :class:`~mcp.server.auth.provider.TokenVerifier` over a fixed token table.

    For demos, tests and local tools; production deployments verify real tokens (JWT, token
    introspection) instead.

    Args:
        tokens: ``{bearer_token: AccessToken}``.

    Example:
        >>> StaticTokenVerifier({"alice-token": AccessToken(token="alice-token",
        ...     client_id="demo", scopes=["todos:delete"], subject="alice")})
    """

    def __init__(self, tokens: Mapping[str, AccessToken]) -> None:
        self._tokens = dict(tokens)

    async def verify_token(self, token: str) -> AccessToken | None:
        """The token's :class:`AccessToken`, or ``None`` (the SDK answers HTTP 401)."""
        return self._tokens.get(token)


def http_app(
    target: AgentRuntime[Any, Any] | Resolve,
    *,
    name: str,
    version: str,
    instructions: str | None = None,
    principal_of: PrincipalOf | None = None,
    path: str = "/mcp",
    host: str = "127.0.0.1",
    token_verifier: TokenVerifier | None = None,
    auth: AuthSettings | None = None,
    max_body: int = DEFAULT_MAX_BODY,
    allowed_hosts: Iterable[str] | None = None,
) -> Starlette:
    """A Starlette app serving MCP over streamable HTTP at ``path`` (both protocol eras).

    Args:
        target, name, version, instructions, principal_of: as :func:`mcp_server`.
        path: the endpoint path.
        host: the host the app will be served on; for ``127.0.0.1``, ``localhost`` and ``::1``
            the SDK's DNS-rebinding protection is on (only loopback ``Host``/``Origin``
            accepted). For another host, name the hosts clients use in ``allowed_hosts``.
        allowed_hosts: for a non-loopback ``host``: the host names a ``Host`` (and any
            ``Origin``) header may carry, any port (others get 421/403); ``"*"`` accepts any
            (only behind a proxy that checks ``Host``). ``None`` leaves a non-loopback server
            without a ``Host`` check.
        token_verifier: when given, every request needs ``Authorization: Bearer <token>``;
            unknown tokens get HTTP 401 and the verified ``AccessToken`` becomes the call's
            credentials (protocol notes §1.6).
        auth: the SDK's ``AuthSettings`` (issuer, resource URL, required scopes); by default
            a resource server with no advertised metadata and no required scopes.
        max_body: the largest request body in bytes (default 4 MiB, the SDK's own default);
            larger bodies get HTTP 413 before anything is parsed. Every body is also parsed
            strictly (:func:`foldkit_agent.edge.wire.loads_strict`: duplicate keys, ``NaN``, lone
            surrogates and nesting over 100 levels are a JSON-RPC parse error, HTTP 400).

    Returns:
        A :class:`starlette.applications.Starlette` whose lifespan runs the MCP session
        manager (run that lifespan when you mount it inside another app).

    Example:
        >>> app = http_app(rt, name="todo", version="1.0", token_verifier=verifier)
        >>> uvicorn.run(app, host="127.0.0.1", port=8000)
    """
    server = mcp_server(
        target, name=name, version=version, instructions=instructions, principal_of=principal_of
    )
    if token_verifier is not None and auth is None:
        auth = AuthSettings(issuer_url="http://127.0.0.1", resource_server_url=None)  # pyright: ignore[reportArgumentType]
    app = server.streamable_http_app(
        streamable_http_path=path,
        host=host,
        auth=auth,
        token_verifier=token_verifier,
        max_request_body_size=max_body,
    )
    hosts = None if allowed_hosts is None else [*allowed_hosts, *LOOPBACK_HOSTS]
    app.add_middleware(JsonBodyGuard, max_body=max_body, allowed_hosts=hosts)
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
    return app
