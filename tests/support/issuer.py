"""A real OAuth 2.1 / OpenID Connect authorization server on loopback: Canaille.

Canaille (PyPI ``canaille``, started the way ``pytest-iam`` starts it) is a production identity
server built on Authlib: RFC 8414 metadata, a JWKS, the authorization code grant with PKCE,
RFC 9068-style JWT access tokens (``iss``, ``sub``, ``aud``, ``exp``; ``sub`` only with the
``openid`` scope), RFC 7662 introspection (``scope``, ``sub``, ``aud``). It runs in a thread on
a real port, so the verifier and the MCP clients reach it over HTTP as they would a deployed
one.

What a test sets up with it: a user (``alice``), the resource server's own client (its
``client_id`` is the resource URL: Canaille names a token's audience by client ids, so the
resource URL lands in ``aud``), and a client for the agent, pre-registered, whose tokens name
both in ``aud``.
"""

from __future__ import annotations

import base64
import datetime
import hashlib
import os
import secrets
import threading
import uuid
import wsgiref.simple_server
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any
from urllib.parse import parse_qs, quote, urlsplit

import httpx

RESOURCE_SECRET = "resource-server-secret"
AGENT_CLIENT = "todo-agent"
AGENT_SECRET = "todo-agent-secret"
REDIRECT = "http://localhost:3/callback"


@dataclass
class Issuer:
    """The running server and what tests do with it."""

    server: Any  # pytest_iam.Server
    port: int
    resource: str

    @property
    def url(self) -> str:
        """The issuer identifier (as its metadata names it: no trailing slash)."""
        return f"http://localhost:{self.port}"

    @property
    def introspect(self) -> str:
        return f"{self.url}/oauth/introspect"

    # -- clients and users ----------------------------------------------------------------------

    def add_agent(
        self,
        client_id: str,
        secret: str,
        scopes: Sequence[str],
        *,
        refresh: bool = True,
        redirects: Sequence[str] = (REDIRECT, "http://localhost:3/ts-callback"),
    ) -> None:
        """A pre-registered confidential client whose tokens name the resource in ``aud``;
        issued refresh tokens unless ``refresh`` is false; sent back to ``redirects``."""
        app, models, backend = self.server.app, self.server.models, self.server.backend
        with app.app_context():
            resource = backend.query(models.Client, client_id=self.resource)[0]
            client = models.Client(
                client_id=client_id,
                client_secret=secret,
                client_name=client_id,
                grant_types=["authorization_code", *(["refresh_token"] if refresh else [])],
                response_types=["code"],
                token_endpoint_auth_method="client_secret_basic",
                scope=list(scopes),
                redirect_uris=list(redirects),
            )
            backend.save(client)
            client.audience = [client, resource]
            backend.save(client)
            self.server.consent(self.server.logged_user, client)

    def add_resource(self, url: str, client_id: str = AGENT_CLIENT) -> None:
        """Another resource (a tenant's endpoint) that ``client_id``'s tokens name in ``aud``
        from now on: Canaille names a token's audience by client ids."""
        app, models, backend = self.server.app, self.server.models, self.server.backend
        with app.app_context():
            resource = models.Client(
                client_id=url,
                client_secret=RESOURCE_SECRET,
                client_name=url,
                grant_types=["client_credentials"],
                response_types=[],
                token_endpoint_auth_method="client_secret_basic",
                scope=["openid"],
                redirect_uris=[],
                issue_date=datetime.datetime.now(datetime.UTC),
            )
            backend.save(resource)
            client = backend.query(models.Client, client_id=client_id)[0]
            client.audience = [*client.audience, resource]
            backend.save(client)

    def consent_all(self) -> None:
        """The signed-in user consents to every client (as a person clicking "accept")."""
        self.server.consent(self.server.logged_user)

    # -- tokens ---------------------------------------------------------------------------------

    def token(self, scopes: str = "openid todos:read", client: str = AGENT_CLIENT) -> str:
        """An access token of ``alice`` for ``client``, through the authorization code grant
        with PKCE over HTTP (the way any client gets one)."""
        verifier = secrets.token_urlsafe(40)
        digest = hashlib.sha256(verifier.encode()).digest()
        challenge = base64.urlsafe_b64encode(digest).rstrip(b"=").decode()
        answer = httpx.get(
            f"{self.url}/oauth/authorize",
            params={
                "response_type": "code",
                "client_id": client,
                "redirect_uri": REDIRECT,
                "scope": scopes,
                "code_challenge": challenge,
                "code_challenge_method": "S256",
                "state": "s",
            },
        )
        code = parse_qs(urlsplit(answer.headers["location"]).query)["code"][0]
        secret = AGENT_SECRET if client == AGENT_CLIENT else client + "-secret"
        issued = httpx.post(
            f"{self.url}/oauth/token",
            data={
                "grant_type": "authorization_code",
                "code": code,
                "redirect_uri": REDIRECT,
                "code_verifier": verifier,
            },
            auth=(client, secret),
        ).json()
        return str(issued["access_token"])

    def signing_key(self) -> Any:
        """The issuer's current private signing key (a joserfc key), to sign a token it would
        sign itself with other claims (an expired one)."""
        from joserfc.jwk import RSAKey

        return RSAKey.import_key(self.server.app.config["CANAILLE_OIDC"]["ACTIVE_JWKS"][0])

    def rotate(self) -> None:
        """A new signing key; the old one stays published (inactive) as issuers do."""
        from joserfc.jwk import JWKRegistry

        config = self.server.app.config["CANAILLE_OIDC"]
        fresh = JWKRegistry.generate_key("RSA", 2048)
        fresh.ensure_kid()
        config["INACTIVE_JWKS"] = list(config.get("INACTIVE_JWKS") or []) + config["ACTIVE_JWKS"]
        config["ACTIVE_JWKS"] = [fresh.as_dict(private=True)]

    # -- up and down ----------------------------------------------------------------------------

    @contextmanager
    def down(self) -> Iterator[None]:
        """The issuer is unreachable (its port closed) inside the block."""
        self.server.httpd.shutdown()
        self.server.httpd.server_close()
        try:
            yield
        finally:
            self._listen()

    def _listen(self) -> None:
        handler = self.server._make_request_handler()  # pytest-iam's quiet access log
        self.server.httpd = wsgiref.simple_server.make_server(
            "localhost", self.port, self.server.app, handler_class=handler
        )
        threading.Thread(target=self.server.httpd.serve_forever, daemon=True).start()


def resource_basic(resource: str) -> tuple[str, str]:
    """The resource server's client credentials as HTTP Basic sends them (RFC 6749 §2.3.1)."""
    return quote(resource, safe=""), RESOURCE_SECRET


@contextmanager
def running_issuer(resource: str) -> Iterator[Issuer]:
    """Canaille on a free loopback port, with ``alice`` signed in and the resource's client."""
    os.environ["AUTHLIB_INSECURE_TRANSPORT"] = "1"  # plain HTTP on loopback
    import portpicker
    from canaille import create_app
    from canaille.backends import Backend
    from joserfc.jwk import JWKRegistry
    from pytest_iam import Server

    port = portpicker.pick_unused_port()
    key = JWKRegistry.generate_key("RSA", 2048)
    key.ensure_kid()
    config = {
        "TESTING": True,
        "ENV_FILE": None,
        "SECRET_KEY": str(uuid.uuid4()),
        "WTF_CSRF_ENABLED": False,
        "PREFERRED_URL_SCHEME": "http",
        "SERVER_NAME": f"localhost:{port}",
        "CANAILLE": {"DATABASE": "memory", "ACL": {"DEFAULT": {"PERMISSIONS": ["use_oidc"]}}},
        "CANAILLE_OIDC": {
            "REQUIRE_NONCE": False,
            "DYNAMIC_CLIENT_REGISTRATION_OPEN": True,
            "ACTIVE_JWKS": [key.as_dict(private=True)],
        },
    }
    app = create_app(config=config, env_file=None, env_prefix="FOLDKIT_TEST_IAM_")
    server = Server(app, port, Backend.instance)
    thread = threading.Thread(target=server.httpd.serve_forever, daemon=True)
    thread.start()
    issuer = Issuer(server, port, resource)
    try:
        with app.app_context():
            models = server.models
            user = server.random_user(user_name="alice")
            server.login(user)
            server.backend.save(
                models.Client(
                    client_id=resource,
                    client_secret=RESOURCE_SECRET,
                    client_name="foldkit-agent resource",
                    grant_types=["client_credentials"],
                    response_types=[],
                    token_endpoint_auth_method="client_secret_basic",
                    scope=["openid"],
                    redirect_uris=[],
                    issue_date=datetime.datetime.now(datetime.UTC),
                )
            )
        issuer.add_agent(
            AGENT_CLIENT,
            AGENT_SECRET,
            ["openid", "email", "todos:read", "todos:write", "todos:delete"],
        )
        yield issuer
    finally:
        server.httpd.shutdown()
        server.httpd.server_close()
