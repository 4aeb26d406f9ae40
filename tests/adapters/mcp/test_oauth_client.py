"""The official MCP client signs in through a real authorization server (Canaille on loopback).

From a bare 401 it finds the protected resource metadata, the issuer's metadata, asks for a
token (authorization code with PKCE, a pre-registered client), calls a tool, is refused a
capability whose scope it lacks with that scope named, steps up, and calls it.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any
from urllib.parse import parse_qs, urlsplit

import anyio
import httpx
import httpx2
from mcp import Client
from mcp.client.auth import OAuthClientProvider
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.auth import (
    AuthorizationCodeResult,
    OAuthClientInformationFull,
    OAuthClientMetadata,
    OAuthToken,
)

from foldkit_agent.adapters.mcp import http_app
from foldkit_agent.cli.serve import bind_socket, run_http
from foldkit_agent.edge import HttpOptions
from foldkit_agent.edge.oauth import OAuthOptions, OAuthVerifier
from tests.support.issuer import AGENT_CLIENT, AGENT_SECRET, REDIRECT, Issuer, resource_basic
from tests.support.scoped_todo import WRITE, scoped_todo


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

    async def get_tokens(self) -> OAuthToken | None:
        return self.tokens

    async def set_tokens(self, tokens: OAuthToken) -> None:
        self.tokens = tokens
        self.issued.append(tokens.scope or "")

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


def _introspecting(issuer: Issuer) -> OAuthVerifier:
    return OAuthVerifier(
        OAuthOptions(
            issuer=issuer.url,
            audience=issuer.resource,
            introspect=issuer.introspect,
            client_id=issuer.resource,
            client_secret=resource_basic(issuer.resource)[1],
            scopes=("todos:read",),
        )
    )


@asynccontextmanager
async def _resource(issuer: Issuer) -> AsyncIterator[str]:
    """The scoped todo app's MCP endpoint, served at the issuer's resource URL."""
    port = urlsplit(issuer.resource).port
    assert port is not None
    sock = bind_socket("127.0.0.1", port)
    async with scoped_todo() as runtime:
        options = HttpOptions(oauth=_introspecting(issuer))
        app = http_app(runtime, name="todo", version="1", options=options)
        async with anyio.create_task_group() as tg:
            tg.start_soon(lambda: run_http(app, sock=sock))
            try:
                yield issuer.resource
            finally:
                tg.cancel_scope.cancel()
    sock.close()


def _text(result: Any) -> str:
    return " ".join(getattr(c, "text", "") for c in result.content)


async def test_the_mcp_client_discovers_signs_in_is_refused_a_scope_and_steps_up(
    issuer: Issuer,
) -> None:
    wallet, browser = Wallet(issuer), Browser()
    async with _resource(issuer) as url:
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
        async with Client(streamable_http_client(url, http_client=http)) as client:
            cleared = await client.call_tool("clear_selection", {})
            assert not cleared.is_error, _text(cleared)
            assert browser.asked == ["todos:read"]  # the 401's scope, nothing more
            created = await client.call_tool("create_todo", {"title": "Buy milk"})
    assert not created.is_error, _text(created)
    # the 403 named the scope; the client asked again for what it had and that
    assert len(browser.asked) == 2
    assert set(browser.asked[1].split()) >= {"todos:read", WRITE}
    assert WRITE not in wallet.issued[0].split()
    assert WRITE in wallet.issued[-1].split()


async def test_a_token_without_the_scope_is_403_naming_it(issuer: Issuer) -> None:
    token = issuer.token("openid todos:read")
    async with _resource(issuer) as url:
        body = (
            b'{"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {"name": '
            b'"create_todo", "arguments": {"title": "x"}, "_meta": '
            b'{"io.modelcontextprotocol/protocolVersion": "2026-07-28", '
            b'"io.modelcontextprotocol/clientCapabilities": {}}}}'
        )
        headers = {
            "Authorization": f"Bearer {token}",
            "Content-Type": "application/json",
            "Accept": "application/json, text/event-stream",
            "MCP-Protocol-Version": "2026-07-28",
            "Mcp-Method": "tools/call",
            "Mcp-Name": "create_todo",
        }
        async with httpx.AsyncClient() as http:
            answer = await http.post(url, content=body, headers=headers)
    assert answer.status_code == 403
    challenge = answer.headers["www-authenticate"]
    assert challenge.startswith('Bearer error="insufficient_scope"')
    assert f"{WRITE}" in challenge.split('scope="')[1].split('"')[0].split()
    assert 'resource_metadata="' in challenge
    error = answer.json()
    assert error["id"] == 7
    assert WRITE in error["error"]["message"]
    assert "create_todo" in error["error"]["message"]
