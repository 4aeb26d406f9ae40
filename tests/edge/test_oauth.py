"""Tokens of a real authorization server (Canaille on loopback), verified at the edge.

Every refusal is a 401 at step 3 of the guard, before any byte of the body is parsed
(the strict parser is never called), and names the protected resource metadata.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import logging
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import pytest
from joserfc import jwt
from joserfc.jwk import JWKRegistry

from examples.todo import run_todo
from foldkit_agent.adapters.mcp import http_app
from foldkit_agent.edge import HttpOptions
from foldkit_agent.edge import guard as guard_module
from foldkit_agent.edge.oauth import OAuthOptions, OAuthVerifier
from tests.support.hostile import MODERN_META, asgi_client, mcp_headers
from tests.support.issuer import Issuer, resource_basic


def _jwt_options(issuer: Issuer, **kw: Any) -> OAuthOptions:
    return OAuthOptions(issuer=issuer.url, audience=issuer.resource, **kw)


def _base(issuer: Issuer) -> str:
    return issuer.resource.removesuffix("/mcp")


@asynccontextmanager
async def _served(verifier: OAuthVerifier) -> AsyncIterator[Any]:
    async with run_todo() as (_running, rt):
        app = http_app(rt, name="todo", version="1", options=HttpOptions(oauth=verifier))
        async with asgi_client(app, base=_base_of(verifier)) as client:
            yield client


def _base_of(verifier: OAuthVerifier) -> str:
    return verifier.options.audience.removesuffix("/mcp")


LIST = json.dumps(
    {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {"_meta": MODERN_META}}
).encode()


async def _list(client: Any, token: str | None) -> Any:
    headers = mcp_headers("create_todo", token)
    headers["Mcp-Method"] = "tools/list"
    del headers["Mcp-Name"]
    return await client.post("/mcp", content=LIST, headers=headers)


@pytest.fixture
def parsed(monkeypatch: pytest.MonkeyPatch) -> list[bytes]:
    """Every body the edge's strict parser was asked to parse."""
    seen: list[bytes] = []
    real = guard_module.loads_strict

    def spy(data: bytes, **kw: Any) -> Any:
        seen.append(data)
        return real(data, **kw)

    monkeypatch.setattr(guard_module, "loads_strict", spy)
    return seen


async def test_a_token_of_the_issuer_calls_a_tool_as_its_subject(issuer: Issuer) -> None:
    token = issuer.token()
    async with _served(OAuthVerifier(_jwt_options(issuer))) as client:
        answer = await _list(client, token)
    assert answer.status_code == 200, answer.text
    names = {tool["name"] for tool in answer.json()["result"]["tools"]}
    assert "create_todo" in names


def _signed(key: Any, claims: dict[str, Any], alg: str = "RS256", kid: str | None = None) -> str:
    header: dict[str, Any] = {"alg": alg}
    if kid is not None:
        header["kid"] = kid
    return jwt.encode(header, claims, key, algorithms=[alg])


def _claims(issuer: Issuer, **over: Any) -> dict[str, Any]:
    now = int(time.time())
    claims = {
        "iss": issuer.url,
        "sub": "alice",
        "aud": [issuer.resource],
        "iat": now,
        "exp": now + 600,
    }
    claims.update(over)
    return {k: v for k, v in claims.items() if v is not None}


def _refused_tokens(issuer: Issuer) -> dict[str, str]:
    key = issuer.signing_key()
    kid = key.kid
    now = int(time.time())
    stranger = JWKRegistry.generate_key("RSA", 2048)
    stranger.ensure_kid()
    public_pem = key.as_pem(private=False)

    def b64(data: bytes) -> str:
        return base64.urlsafe_b64encode(data).rstrip(b"=").decode()

    def unsigned(alg: str) -> str:
        head = b64(json.dumps({"alg": alg, "kid": kid}).encode())
        return head + "." + b64(json.dumps(_claims(issuer)).encode())

    # The classic confusion attack, written by hand: JOSE libraries refuse to make this key.
    confused = unsigned("HS256")
    mac = hmac.new(public_pem, confused.encode(), hashlib.sha256).digest()
    return {
        "expired": _signed(key, _claims(issuer, iat=now - 7200, exp=now - 3600), kid=kid),
        "another audience": _signed(
            key, _claims(issuer, aud=["https://other.example/mcp"]), kid=kid
        ),
        "another issuer": _signed(key, _claims(issuer, iss="https://evil.example"), kid=kid),
        "no subject": _signed(key, _claims(issuer, sub=None), kid=kid),
        "not yet valid": _signed(key, _claims(issuer, nbf=now + 3600), kid=kid),
        "unknown key": _signed(stranger, _claims(issuer), kid=stranger.kid),
        "alg none": unsigned("none") + ".",
        "HS256 with the public key": confused + "." + b64(mac),
        "too long": _signed(key, _claims(issuer, pad="x" * 9000), kid=kid),
        "garbage": "not-a-jwt",
    }


THE_ISSUERS_OWN = ("canaille", "authlib", "werkzeug")
"""Loggers of the test's authorization server (Authlib logs the tokens it issues at DEBUG)."""

CASES = [
    "expired",
    "another audience",
    "another issuer",
    "no subject",
    "not yet valid",
    "unknown key",
    "alg none",
    "HS256 with the public key",
    "too long",
    "garbage",
]


@pytest.mark.parametrize("case", CASES)
async def test_a_bad_token_is_401_before_any_body_is_parsed(
    issuer: Issuer, parsed: list[bytes], case: str
) -> None:
    token = _refused_tokens(issuer)[case]
    verifier = OAuthVerifier(_jwt_options(issuer, refetch_interval=0.001))
    async with _served(verifier) as client:
        answer = await _list(client, token)
    assert answer.status_code == 401, (case, answer.text)
    challenge = answer.headers["www-authenticate"]
    assert challenge.startswith("Bearer ")
    metadata = f"{_base(issuer)}/.well-known/oauth-protected-resource/mcp"
    assert f'resource_metadata="{metadata}"' in challenge
    assert parsed == []


async def test_the_issuers_own_key_signing_good_claims_is_accepted(issuer: Issuer) -> None:
    """The control of the refusals above: the same forging path, with nothing wrong."""
    key = issuer.signing_key()
    token = _signed(key, _claims(issuer), kid=key.kid)
    async with _served(OAuthVerifier(_jwt_options(issuer))) as client:
        assert (await _list(client, token)).status_code == 200


async def test_no_token_is_401_with_the_metadata_and_the_metadata_names_the_issuer(
    issuer: Issuer, parsed: list[bytes]
) -> None:
    async with _served(OAuthVerifier(_jwt_options(issuer, scopes=("todos:read",)))) as client:
        answer = await _list(client, None)
        document = await client.get("/.well-known/oauth-protected-resource/mcp")
    assert answer.status_code == 401
    assert "resource_metadata=" in answer.headers["www-authenticate"]
    assert parsed == []
    assert document.status_code == 200
    body = document.json()
    assert body["resource"] == issuer.resource
    assert [s.rstrip("/") for s in body["authorization_servers"]] == [issuer.url]
    assert body["scopes_supported"] == ["todos:read"]


async def test_a_rotated_key_is_picked_up_without_a_restart(issuer: Issuer) -> None:
    verifier = OAuthVerifier(_jwt_options(issuer, refetch_interval=0.001))
    before = issuer.token()
    async with _served(verifier) as client:
        assert (await _list(client, before)).status_code == 200
        issuer.rotate()
        after = issuer.token()
        assert (await _list(client, after)).status_code == 200
        assert (await _list(client, before)).status_code == 200  # the old key is still published


async def test_the_issuer_down_refuses_new_keys_and_accepts_nothing_unverified(
    issuer: Issuer,
) -> None:
    verifier = OAuthVerifier(_jwt_options(issuer, refetch_interval=0.001, timeout=2))
    known = issuer.token()
    async with _served(verifier) as client:
        assert (await _list(client, known)).status_code == 200
        issuer.rotate()
        unseen = issuer.token()  # signed by a key the verifier has not fetched
        with issuer.down():
            assert (await _list(client, unseen)).status_code == 401
            assert (await _list(client, known)).status_code == 200  # its key was verified before
        assert (await _list(client, unseen)).status_code == 200  # back up: fetched again


async def test_a_verifier_that_never_reached_the_issuer_refuses_everything(
    issuer: Issuer,
) -> None:
    verifier = OAuthVerifier(_jwt_options(issuer, timeout=2))
    token = issuer.token()
    with issuer.down():
        async with _served(verifier) as client:
            assert (await _list(client, token)).status_code == 401


def _introspecting(issuer: Issuer, **kw: Any) -> OAuthVerifier:
    who, secret = resource_basic(issuer.resource)
    del who
    return OAuthVerifier(
        _jwt_options(
            issuer,
            introspect=issuer.introspect,
            client_id=issuer.resource,
            client_secret=secret,
            **kw,
        )
    )


async def test_introspection_accepts_an_active_token_with_its_scopes(issuer: Issuer) -> None:
    verifier = _introspecting(issuer)
    token = issuer.token("openid todos:read")
    grant = await verifier.verify(token)
    assert grant is not None
    assert grant.subject == "alice"
    assert set(grant.scopes) == {"openid", "todos:read"}
    async with _served(verifier) as client:
        assert (await _list(client, token)).status_code == 200


async def test_introspection_refuses_an_unknown_token_and_an_issuer_that_is_down(
    issuer: Issuer, parsed: list[bytes]
) -> None:
    verifier = _introspecting(issuer, timeout=2)
    assert await verifier.verify("made-up-token") is None
    token = issuer.token()
    with issuer.down():
        assert await verifier.verify(token) is None
        async with _served(verifier) as client:
            assert (await _list(client, token)).status_code == 401
    assert parsed == []


async def test_no_token_or_key_set_reaches_a_log_record(
    issuer: Issuer, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    verifier = OAuthVerifier(_jwt_options(issuer, refetch_interval=0.001, timeout=2))
    token = issuer.token()
    bad = _refused_tokens(issuer)["unknown key"]
    async with _served(verifier) as client:
        await _list(client, token)
        await _list(client, bad)
        issuer.rotate()
        unseen = issuer.token()
        with issuer.down():
            await _list(client, unseen)
    ours = [r for r in caplog.records if not r.name.startswith(THE_ISSUERS_OWN)]
    text = "\n".join(r.getMessage() + str(r.args) for r in ours)
    assert "could not be fetched" in text  # the failure is logged, as the kind of failure
    for secret in (token, bad, token.split(".")[1], '"keys"', '"n"'):
        assert secret not in text
