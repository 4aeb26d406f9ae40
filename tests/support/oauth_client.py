"""The official MCP client's side of an OAuth sign-in against the test issuer (Canaille).

:class:`Wallet` is the client's token storage (holding the pre-registered agent client),
:class:`Browser` what a person's browser does at the authorization endpoint, and
:func:`signed_in_client` the MCP client that signs in with them from a bare 401.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any
from urllib.parse import parse_qs, urlsplit

import anyio
import httpx
from mcp.shared.auth import AuthorizationCodeResult, OAuthClientInformationFull, OAuthToken

from tests.support.issuer import AGENT_CLIENT, AGENT_SECRET, REDIRECT, Issuer


class Wallet:
    """The client's storage: the pre-registered client, and the tokens it was given."""

    def __init__(self, issuer: Issuer) -> None:
        self.tokens: OAuthToken | None = None
        self.client = OAuthClientInformationFull(
            client_id=AGENT_CLIENT,
            client_secret=AGENT_SECRET,
            redirect_uris=[REDIRECT],  # pyright: ignore[reportArgumentType]
            token_endpoint_auth_method="client_secret_basic",
            grant_types=["authorization_code", "refresh_token"],
        )
        self.issued: list[str] = []  # the scope of each token, in order
        self.access_tokens: list[str] = []  # each token, in order

    async def get_tokens(self) -> OAuthToken | None:
        return self.tokens

    async def set_tokens(self, tokens: OAuthToken) -> None:
        self.tokens = tokens
        self.issued.append(tokens.scope or "")
        self.access_tokens.append(tokens.access_token)

    async def get_client_info(self) -> OAuthClientInformationFull | None:
        return self.client

    async def set_client_info(self, client_info: OAuthClientInformationFull) -> None:
        self.client = client_info


class Browser:
    """What a person's browser does at the authorization endpoint: alice is signed in and has
    consented, so the issuer redirects straight back with a code."""

    def __init__(self) -> None:
        self.redirect: dict[str, list[str]] = {}
        self.asked: list[str] = []

    async def open(self, url: str) -> None:
        self.asked.append(parse_qs(urlsplit(url).query).get("scope", [""])[0])
        answer = await anyio.to_thread.run_sync(lambda: httpx.get(url))
        self.redirect = parse_qs(urlsplit(answer.headers["location"]).query)

    async def callback(self) -> AuthorizationCodeResult:
        return AuthorizationCodeResult(
            code=self.redirect["code"][0],
            state=self.redirect.get("state", [None])[0],
            iss=self.redirect.get("iss", [None])[0],
        )


@asynccontextmanager
async def signed_in_client(
    url: str, wallet: Wallet, browser: Browser, *, mode: str = "auto"
) -> AsyncIterator[Any]:
    """The official MCP client of ``url``, signing in through the issuer the server's 401
    names (RFC 9728 discovery, authorization code with PKCE, step-up on a 403)."""
    import httpx2
    from mcp import Client
    from mcp.client.auth import OAuthClientProvider
    from mcp.client.streamable_http import streamable_http_client
    from mcp.shared.auth import OAuthClientMetadata

    auth = OAuthClientProvider(
        server_url=url,
        client_metadata=OAuthClientMetadata(
            redirect_uris=[REDIRECT],  # pyright: ignore[reportArgumentType]
            grant_types=["authorization_code", "refresh_token"],
            token_endpoint_auth_method="client_secret_basic",
        ),
        storage=wallet,
        redirect_handler=browser.open,
        callback_handler=browser.callback,
    )
    http = httpx2.AsyncClient(auth=auth, timeout=20)
    async with Client(streamable_http_client(url, http_client=http), mode=mode) as client:
        yield client
