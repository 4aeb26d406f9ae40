"""A person signs in to the console and the page through the server's OAuth issuer.

With ``serve --auth-issuer URL --client-id ID`` and the console or the page, a person signs
in at the issuer instead of typing a token: the console's sign-in sends the browser to the
issuer's authorization endpoint (the authorization code grant with PKCE, RFC 7636 ``S256``,
built by Authlib's OAuth 2 client), the issuer sends it back to ``/console/sign-in/callback``
with a code, and the server exchanges the code for an access token as the client ``ID``. That
token is checked by the server's one :class:`~foldkit_agent.edge.oauth.OAuthVerifier` (the
same issuer, audience and algorithms every bearer token is checked with) and never reaches the
browser: its :class:`~foldkit_agent.edge.Grant` (the person's subject and scopes) opens the
same session the ``--token`` sign-in opens, so the approver policy applies as it does there.

Each sign-in's ``state`` and PKCE verifier are kept server-side for :data:`PENDING_SECONDS`,
at most :data:`MAX_PENDING` at once, and are good for one callback.

Example:
    >>> issuer = IssuerSignIn(verifier, client_id="todo-console", client_secret=None)
    >>> url = await issuer.start("https://todo.example/console/sign-in/callback")
    >>> grant = await issuer.finish(state, code)     # Grant(subject, scopes) or None
"""

from __future__ import annotations

import logging
import secrets
import time
from collections import OrderedDict
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Final, cast

from ...edge.oauth import OAuthVerifier
from ...edge.tokens import Grant
from ...errors import needs_extra

__all__ = ["MAX_PENDING", "PENDING_SECONDS", "IssuerSignIn"]

_log = logging.getLogger("foldkit_agent.edge")

PENDING_SECONDS: Final = 600.0
"""Seconds a person has to come back from the issuer."""

MAX_PENDING: Final = 1024
"""Sign-ins waiting for their callback at once; the oldest goes first."""


@dataclass(frozen=True, slots=True)
class _Pending:
    verifier: str
    redirect_uri: str
    until: float


@dataclass(eq=False)
class IssuerSignIn:
    """The issuer's side of a person's sign-in: where to send the browser, and the code
    exchanged for a verified :class:`~foldkit_agent.edge.Grant`.

    Args:
        verifier: the server's verifier (its issuer's metadata names the endpoints; its check
            is the one every token passes).
        client_id: this server's client at the issuer.
        client_secret: the client's secret (HTTP Basic at the token endpoint), or ``None`` for
            a public client (PKCE alone).
        scopes: what the person's token is asked for (``openid`` first: the issuer names the
            subject with it).

    Raises:
        MissingExtra: the ``oauth`` extra (Authlib) is not installed.
    """

    verifier: OAuthVerifier
    client_id: str
    client_secret: str | None = field(default=None, repr=False)
    scopes: tuple[str, ...] = ("openid",)
    _pending: OrderedDict[str, _Pending] = field(default_factory=OrderedDict[str, _Pending])

    def __post_init__(self) -> None:
        with needs_extra("foldkit_agent.edge.oauth"):
            import authlib.integrations.httpx_client  # noqa: F401  # pyright: ignore[reportUnusedImport]

    def _client(self, redirect_uri: str) -> Any:
        from authlib.integrations.httpx_client import AsyncOAuth2Client

        return AsyncOAuth2Client(
            client_id=self.client_id,
            client_secret=self.client_secret,
            token_endpoint_auth_method="client_secret_basic" if self.client_secret else "none",
            scope=" ".join(self.scopes),
            redirect_uri=redirect_uri,
            code_challenge_method="S256",
            timeout=self.verifier.options.timeout,
        )

    async def _endpoint(self, name: str) -> str | None:
        found = await self.verifier.issuer_metadata()
        value = None if found is None else found[1].get(name)
        return value if isinstance(value, str) else None

    async def start(self, redirect_uri: str) -> str | None:
        """The issuer's authorization URL to send the browser to (coming back to
        ``redirect_uri``), or ``None`` while the issuer's metadata cannot be fetched."""
        endpoint = await self._endpoint("authorization_endpoint")
        if endpoint is None:
            return None
        code_verifier = secrets.token_urlsafe(48)
        async with self._client(redirect_uri) as client:
            url, state = client.create_authorization_url(endpoint, code_verifier=code_verifier)
        now = time.monotonic()
        for key in [k for k, p in self._pending.items() if p.until <= now]:
            del self._pending[key]
        self._pending[state] = _Pending(code_verifier, redirect_uri, now + PENDING_SECONDS)
        while len(self._pending) > MAX_PENDING:
            self._pending.popitem(last=False)
        return str(url)

    async def finish(self, state: str | None, code: str | None) -> Grant | None:
        """The verified grant of the person the issuer sent back with ``code`` for ``state``,
        or ``None`` (an unknown or used ``state``, a refused exchange, a token the verifier
        does not accept). Never raises for what the browser or the issuer sent."""
        pending = None if state is None else self._pending.pop(state, None)
        if pending is None or not code or pending.until <= time.monotonic():
            return None
        endpoint = await self._endpoint("token_endpoint")
        if endpoint is None:
            return None
        try:
            async with self._client(pending.redirect_uri) as client:
                token = await client.fetch_token(
                    endpoint, code=code, code_verifier=pending.verifier
                )
        except Exception as exc:  # the issuer's refusal, in its words: never shown or logged
            _log.warning(
                "a person's sign-in code was not exchanged at %s (%s)",
                self.verifier.options.issuer,
                type(exc).__name__,
            )
            return None
        found: Any = token
        access: Any = (
            cast(Mapping[str, Any], found).get("access_token") if isinstance(found, dict) else None
        )
        return await self.verifier.verify(access if isinstance(access, str) else None)
