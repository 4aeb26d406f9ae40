"""Bearer tokens issued by an OAuth 2.1 authorization server, verified before a body is read.

The MCP specification's authorization section makes an HTTP server an OAuth *resource
server*: it accepts only access tokens its authorization server issued for it (RFC 8707: the
token's audience is this resource), and passes none of them on. :class:`OAuthVerifier` is the
one check every HTTP adapter runs at step 3 of the edge guard (MCP through the SDK's
``TokenVerifier`` seam, A2A through its Starlette backend), so a token is verified the same way
on every transport and its subject and scopes become the call's credentials exactly as a
static token's :class:`~.tokens.Grant` does.

Two ways to verify, chosen by :class:`OAuthOptions`:

* **JWT** (RFC 9068 access tokens; the default): the signature against the issuer's JSON Web
  Key Set, found through the issuer's metadata (RFC 8414
  ``/.well-known/oauth-authorization-server``, else OpenID Connect Discovery's
  ``/.well-known/openid-configuration``), fetched once and cached. A token naming a key id
  the cache does not hold makes the set be fetched again (the issuer rotated its keys), at
  most once every ``refetch_interval`` seconds, so a stream of tokens with made-up key ids
  costs the issuer one fetch per interval. The algorithm must be one of ``algorithms``
  (asymmetric only: ``none`` and the ``HS*`` family, which would let a public key act as a
  shared secret, are refused at construction and at verification); ``exp`` (required),
  ``nbf``, ``iss`` (the issuer) and ``aud`` (the audience, the resource's URL) are checked
  with ``leeway`` seconds of clock skew. Parsing is bounded: a token longer than
  :data:`MAX_BEARER_LENGTH` is refused before it is decoded.
* **Introspection** (RFC 7662), with ``introspect=``: the token is posted to the endpoint
  with the resource's client credentials; an answer with ``active: true``, the issuer (when
  named), the audience and an unexpired ``exp`` is accepted, and kept for at most
  ``introspect_cache`` seconds (never past its ``exp``), keyed by the token's digest.

The issuer being unreachable refuses every token it cannot vouch for (a JWT whose key is not
already held, every introspected token not already answered); nothing is ever accepted
unverified. No token, key set or introspection answer is written to a log: a failure is logged
as the issuer's URL and the kind of failure only.

Example:
    >>> verifier = OAuthVerifier(OAuthOptions(
    ...     issuer="https://auth.example", audience="https://todo.example/mcp"))
    >>> grant = await verifier.verify(token)       # Grant(subject, scopes) or None
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import logging
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Final, cast
from urllib.parse import quote, urlsplit

from ..errors import needs_extra
from .hosts import LOOPBACK_HOSTS
from .tokens import Grant

if TYPE_CHECKING:
    import httpx2
    from joserfc.jwk import Key

__all__ = [
    "DEFAULT_ALGORITHMS",
    "MAX_BEARER_LENGTH",
    "OAuthOptions",
    "OAuthVerifier",
    "metadata_urls",
    "tenant_resource",
]

_log = logging.getLogger("foldkit_agent.edge")

DEFAULT_ALGORITHMS: Final = (
    "RS256",
    "RS384",
    "RS512",
    "PS256",
    "PS384",
    "PS512",
    "ES256",
    "ES384",
    "ES512",
    "EdDSA",
)
"""The signature algorithms accepted by default: every asymmetric one of RFC 7518 and 8037."""

MAX_BEARER_LENGTH: Final = 8192
"""Longest bearer token an :class:`OAuthVerifier` decodes or introspects, in characters."""

_MAX_DOCUMENT = 1 << 20  # largest metadata, key set or introspection answer read, in bytes
_MAX_CACHED = 4096  # most introspection answers kept
_KEY_TYPES = frozenset({"RSA", "EC", "OKP"})


def _is_url(value: str) -> bool:
    parts = urlsplit(value)
    if parts.scheme == "https":
        return bool(parts.hostname)
    # OAuth 2.1 §1.5: plain HTTP only to this machine.
    return parts.scheme == "http" and (parts.hostname or "") in LOOPBACK_HOSTS


@dataclass(frozen=True, slots=True)
class OAuthOptions:
    """Where tokens come from and what they must say (``serve --auth-issuer/--audience``).

    Attributes:
        issuer: the authorization server's issuer identifier (an ``https`` URL, or ``http``
            on a loopback address); tokens must name it in ``iss``, and its metadata names
            the key set.
        audience: this resource's URL (RFC 8707; for MCP the endpoint's URL, such as
            ``https://todo.example/mcp``); tokens must name it in ``aud``, and the protected
            resource metadata names it as ``resource``.
        introspect: an RFC 7662 introspection endpoint: tokens are introspected there instead
            of verified as JWTs (opaque tokens), with ``client_id``/``client_secret``.
        client_id, client_secret: this resource's credentials at the introspection endpoint
            (HTTP Basic, RFC 7662 §2.1). The secret is never shown in a ``repr``.
        algorithms: the JWS algorithms accepted (default :data:`DEFAULT_ALGORITHMS`).
        leeway: seconds of clock skew allowed on ``exp``, ``nbf`` and ``iat`` (default 30).
        refetch_interval: least seconds between two fetches of the key set (default 30).
        jwks_max_age: seconds a fetched key set is used before it is fetched again (1 hour).
        introspect_cache: most seconds an introspection answer is kept (default 60).
        timeout: seconds for each request to the authorization server (default 5).
        tenant_claim: the claim naming the caller's tenant (``serve --tenant-from claim:org``),
            read into :attr:`Grant.tenant <foldkit_agent.edge.Grant.tenant>`, or ``None``.
        scopes: the scopes a client asks for first: named in the ``scope`` of every 401's
            challenge (a client requests exactly those, MCP's scope selection) and listed in
            the protected resource metadata's ``scopes_supported`` together with every scope
            a capability declares (which a client is then asked for by a 403 when it calls
            that capability: step-up). ``()``: no ``scope`` in the 401.

    Raises:
        ValueError: an issuer, audience or introspection endpoint that is not an ``https``
            URL (or ``http`` on loopback), an algorithm that is not asymmetric (``none``,
            ``HS256``), introspection without client credentials, or a non-positive number.

    Example:
        >>> OAuthOptions(issuer="https://auth.example", audience="https://todo.example/mcp",
        ...              algorithms=("HS256",))
        Traceback (most recent call last):
        ValueError: algorithms takes asymmetric JWS algorithms (RS256, ES256, EdDSA, ...), ...
    """

    issuer: str
    audience: str
    introspect: str | None = None
    client_id: str | None = None
    client_secret: str | None = field(default=None, repr=False)
    algorithms: tuple[str, ...] = DEFAULT_ALGORITHMS
    leeway: int = 30
    refetch_interval: float = 30.0
    jwks_max_age: float = 3600.0
    introspect_cache: float = 60.0
    timeout: float = 5.0
    tenant_claim: str | None = None
    scopes: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        for name in ("issuer", "audience", "introspect"):
            value = getattr(self, name)
            if value is not None and (not isinstance(value, str) or not _is_url(value)):
                raise ValueError(
                    f"{name} takes an https URL (http only on a loopback address), got {value!r}"
                )
        object.__setattr__(self, "algorithms", tuple(self.algorithms))
        for alg in self.algorithms:
            if alg not in DEFAULT_ALGORITHMS:
                raise ValueError(
                    "algorithms takes asymmetric JWS algorithms (RS256, ES256, EdDSA, ...), "
                    f"not {alg!r}"
                )
        if not self.algorithms:
            raise ValueError("algorithms needs at least one algorithm, such as RS256")
        if self.introspect is not None and not (self.client_id and self.client_secret):
            raise ValueError(
                "introspect needs client_id and client_secret: the resource's credentials at "
                "the introspection endpoint"
            )
        for name in ("refetch_interval", "jwks_max_age", "introspect_cache", "timeout"):
            number = getattr(self, name)
            if not isinstance(number, int | float) or number <= 0:  # pyright: ignore[reportUnnecessaryIsInstance]
                raise ValueError(f"{name} takes a positive number of seconds, got {number!r}")
        if not isinstance(self.leeway, int) or self.leeway < 0:  # pyright: ignore[reportUnnecessaryIsInstance]
            raise ValueError(f"leeway takes a whole number of seconds, got {self.leeway!r}")
        object.__setattr__(self, "scopes", tuple(self.scopes))


def metadata_urls(issuer: str) -> tuple[str, str]:
    """Where an issuer's metadata is looked for, in order: RFC 8414 §3.1 (the well-known
    segment before the issuer's path), then OpenID Connect Discovery §4 (after it).

    Example:
        >>> metadata_urls("https://auth.example/tenant1")
        ('https://auth.example/.well-known/oauth-authorization-server/tenant1', \
'https://auth.example/tenant1/.well-known/openid-configuration')
    """
    parts = urlsplit(issuer)
    base, path = f"{parts.scheme}://{parts.netloc}", parts.path.rstrip("/")
    return (
        f"{base}/.well-known/oauth-authorization-server{path}",
        f"{base}{path}/.well-known/openid-configuration",
    )


def tenant_resource(audience: str, tenant: str) -> str:
    """The resource URL of ``tenant``'s endpoint under ``serve --tenant-from path``: the
    tenant's path segment put before the audience's path, as the server mounts it.

    Each tenant's endpoint is a resource of its own (RFC 8707 §2: a token is for the resource
    it names, and the MCP specification makes that resource the endpoint's URL), so a token is
    accepted at ``/alice/mcp`` only when it names ``alice``'s URL in ``aud``.

    Example:
        >>> tenant_resource("https://todo.example/mcp", "alice")
        'https://todo.example/alice/mcp'
    """
    parts = urlsplit(audience)
    segment = quote(tenant, safe=":@!$&'()*+,;=")  # RFC 3986 pchar
    return f"{parts.scheme}://{parts.netloc}/{segment}{parts.path}"


def _same_issuer(named: object, issuer: str) -> bool:
    # Issuers compare as strings (RFC 8414 §3.3); a trailing slash is the one difference
    # servers and their configuration commonly disagree on.
    return isinstance(named, str) and named.rstrip("/") == issuer.rstrip("/")


def _scopes(claims: Mapping[str, Any]) -> tuple[str, ...]:
    scope = claims.get("scope", claims.get("scp"))
    if isinstance(scope, str):
        return tuple(scope.split())
    if isinstance(scope, list):
        return tuple(s for s in cast(list[Any], scope) if isinstance(s, str))
    return ()


def _audiences(claims: Mapping[str, Any]) -> list[str]:
    aud = claims.get("aud")
    if isinstance(aud, str):
        return [aud]
    if isinstance(aud, list):
        return [a for a in cast(list[Any], aud) if isinstance(a, str)]
    return []


async def _read_json(response: httpx2.Response) -> Any:
    """The JSON of ``response``, read to at most ``_MAX_DOCUMENT`` bytes."""
    if response.status_code != 200:
        raise ValueError(f"HTTP {response.status_code}")
    data = bytearray()
    async for chunk in response.aiter_bytes():
        data += chunk
        if len(data) > _MAX_DOCUMENT:
            raise ValueError("document too large")
    return json.loads(bytes(data))


class OAuthVerifier:
    """Verifies bearer tokens as :class:`OAuthOptions` says; one per server, shared by every
    adapter (the key set and the introspection answers are cached here).

    Args:
        options: the issuer, audience and how to verify.
        transport: the HTTP transport to reach the authorization server with (tests), or
            ``None`` for the network.

    Raises:
        TypeError: ``options`` is not an :class:`OAuthOptions`.
        MissingExtra: the ``oauth`` extra (joserfc, httpx2) is not installed; its text names
            it (:class:`~foldkit_agent.errors.MissingExtra`).

    Example:
        >>> shared = HttpOptions(oauth=OAuthVerifier(OAuthOptions(issuer=..., audience=...)))
    """

    def __init__(
        self, options: OAuthOptions, *, transport: httpx2.AsyncBaseTransport | None = None
    ) -> None:
        if not isinstance(options, OAuthOptions):  # pyright: ignore[reportUnnecessaryIsInstance]
            raise TypeError(f"OAuthVerifier takes OAuthOptions, got {type(options).__name__}")
        # Both libraries are checked here, not at the first token: serve then answers a
        # missing one at start, in one line naming the extra.
        with needs_extra(__name__):
            import httpx2  # noqa: F401  # pyright: ignore[reportUnusedImport]
            from joserfc import jwt  # noqa: F401  # pyright: ignore[reportUnusedImport]
        self.options = options
        self._transport = transport
        self._claims = self._registry(options.audience)
        self._keys: dict[str | None, Key] = {}
        self._jwks_uri: str | None = None
        self._metadata: dict[str, Any] | None = None  # the issuer's, once fetched
        self._metadata_url: str | None = None
        self._metadata_tried_at: float | None = None
        self._loaded_at: float | None = None  # monotonic time of the last good key set
        self._tried_at: float | None = None  # monotonic time of the last fetch attempt
        self._lock: asyncio.Lock | None = None
        self._answers: dict[bytes, tuple[float, Grant]] = {}

    def __repr__(self) -> str:
        how = "introspection" if self.options.introspect else "JWT"
        return f"OAuthVerifier({how}, issuer={self.options.issuer!r})"

    def _registry(self, audience: str) -> Any:
        from joserfc import jwt

        issuer = self.options.issuer
        return jwt.JWTClaimsRegistry(
            leeway=self.options.leeway,
            iss={"essential": True, "values": [issuer, issuer.rstrip("/")]},
            aud={"essential": True, "value": audience},
            exp={"essential": True},
            sub={"essential": True},
        )

    async def verify(self, token: str | None, *, audience: str | None = None) -> Grant | None:
        """What ``token`` grants (its ``sub`` and scopes), or ``None`` for any token that is
        missing, too long, malformed, not verifiable now, or not for this resource: the
        options' ``audience``, or ``audience`` when given (a tenant's endpoint,
        :func:`tenant_resource`).

        Never raises for a bad token or an unreachable issuer (both answer ``None``).
        """
        if not token or len(token) > MAX_BEARER_LENGTH:
            return None
        resource = self.options.audience if audience is None else audience
        if self.options.introspect is not None:
            return await self._introspected(token, resource)
        return await self._decoded(token, resource)

    # -- JWT -------------------------------------------------------------------------------------

    async def _decoded(self, token: str, audience: str) -> Grant | None:
        from joserfc import jws, jwt
        from joserfc.errors import JoseError

        try:
            header = jws.extract_compact(token.encode("ascii")).protected
        except (JoseError, ValueError, UnicodeError, TypeError):
            return None
        alg, kid = header.get("alg"), header.get("kid")
        if alg not in self.options.algorithms or not isinstance(kid, str | None):
            return None
        key = await self._key(kid)
        if key is None:
            return None
        try:
            claims = jwt.decode(token, key, algorithms=[alg]).claims
            registry = self._claims if audience == self.options.audience else None
            (registry or self._registry(audience)).validate(claims)
        except (JoseError, ValueError, TypeError):
            return None
        return self._grant(claims)

    async def _key(self, kid: str | None) -> Key | None:
        known = self._keys.get(kid)
        now = time.monotonic()
        fresh = self._loaded_at is not None and now - self._loaded_at < self.options.jwks_max_age
        if known is not None and fresh:
            return known
        tried = self._tried_at
        if tried is not None and now - tried < self.options.refetch_interval:
            return known  # fetched moments ago: the issuer has no other key to offer yet
        if self._lock is None:
            self._lock = asyncio.Lock()
        async with self._lock:
            if self._tried_at == tried:  # nobody fetched while this call waited
                await self._fetch_keys()
        return self._keys.get(kid)

    async def _fetch_keys(self) -> None:
        import httpx2
        from joserfc.errors import JoseError

        self._tried_at = time.monotonic()
        try:
            async with self._client() as client:
                if self._jwks_uri is None:
                    self._jwks_uri = await self._discover(client)
                async with client.stream("GET", self._jwks_uri) as response:
                    document = await _read_json(response)
            keys = self._usable_keys(document)
        except (httpx2.HTTPError, ValueError, JoseError) as exc:
            _log.warning(
                "the key set of %s could not be fetched (%s); tokens signed with a key not "
                "already held are refused",
                self.options.issuer,
                type(exc).__name__,
            )
            return
        self._keys, self._loaded_at = keys, self._tried_at

    async def _discover(self, client: httpx2.AsyncClient) -> str:
        found = self._metadata or await self._fetch_metadata(client)
        uri = found.get("jwks_uri")
        if not isinstance(uri, str) or not _is_url(uri):
            raise ValueError("metadata names no usable jwks_uri")
        return uri

    async def _fetch_metadata(self, client: httpx2.AsyncClient) -> dict[str, Any]:
        for url in metadata_urls(self.options.issuer):
            async with client.stream("GET", url) as response:
                if response.status_code == 404:
                    continue
                metadata = await _read_json(response)
            if not isinstance(metadata, dict):
                raise ValueError("metadata is not an object")
            found = cast(dict[str, Any], metadata)
            if not _same_issuer(found.get("issuer"), self.options.issuer):
                raise ValueError("metadata names another issuer")
            self._metadata, self._metadata_url = found, url
            return found
        raise ValueError("no metadata")

    async def issuer_metadata(self) -> tuple[str, Mapping[str, Any]] | None:
        """Where the issuer's metadata (RFC 8414, else OpenID Connect Discovery) was found and
        what it says (its endpoints, for an A2A card's security scheme), fetched once and
        kept; ``None`` while it cannot be fetched (tried again after ``refetch_interval``).

        Example:
            >>> url, metadata = await verifier.issuer_metadata()
            >>> metadata["token_endpoint"]
            'https://auth.example/oauth/token'
        """
        import httpx2

        now = time.monotonic()
        tried = self._metadata_tried_at
        if self._metadata is None and (
            tried is None or now - tried >= self.options.refetch_interval
        ):
            self._metadata_tried_at = now
            try:
                async with self._client() as client:
                    await self._fetch_metadata(client)
            except (httpx2.HTTPError, ValueError) as exc:
                _log.warning(
                    "the metadata of %s could not be fetched (%s)",
                    self.options.issuer,
                    type(exc).__name__,
                )
        if self._metadata is None or self._metadata_url is None:
            return None
        return self._metadata_url, self._metadata

    def _usable_keys(self, document: Any) -> dict[str | None, Key]:
        from joserfc.jwk import KeySet

        if not isinstance(document, dict):
            raise ValueError("not a key set")
        entries: Any = cast(dict[str, Any], document).get("keys")
        if not isinstance(entries, list):
            raise ValueError("not a key set")
        public: list[dict[str, Any]] = []
        for entry in cast(list[Any], entries):
            if not isinstance(entry, dict):
                continue
            k = cast(dict[str, Any], entry)
            if k.get("kty") in _KEY_TYPES and k.get("use", "sig") == "sig" and "d" not in k:
                public.append(k)
        keys: dict[str | None, Key] = {}
        for key in KeySet.import_key_set({"keys": public}).keys:  # pyright: ignore[reportArgumentType]
            keys[key.kid] = key
        if len(keys) == 1:  # a token naming no key id is verified by the only key
            keys[None] = next(iter(keys.values()))
        return keys

    # -- introspection ---------------------------------------------------------------------------

    async def _introspected(self, token: str, audience: str) -> Grant | None:
        import httpx2

        # the answer is kept per resource: one token may be for one tenant's and not another's
        named = f"{audience}\n{token}".encode("utf-8", "surrogatepass")
        digest = hashlib.sha256(named).digest()
        now = time.monotonic()
        kept = self._answers.get(digest)
        if kept is not None and kept[0] > now:
            return kept[1]
        options = self.options
        url, who, secret = options.introspect, options.client_id, options.client_secret
        if url is None or who is None or secret is None:  # OAuthOptions requires all three
            return None
        try:
            async with self._client() as client:
                response_cm = client.stream(
                    "POST",
                    url,
                    data={"token": token, "token_type_hint": "access_token"},
                    auth=(quote(who, safe=""), quote(secret, safe="")),  # RFC 6749 §2.3.1
                    headers={"Accept": "application/json"},
                )
                async with response_cm as response:
                    answer = await _read_json(response)
        except (httpx2.HTTPError, ValueError) as exc:
            _log.warning(
                "the introspection endpoint of %s could not be asked (%s); the token is refused",
                options.issuer,
                type(exc).__name__,
            )
            return None
        if not isinstance(answer, dict):
            return None
        claims = cast(dict[str, Any], answer)
        grant = self._active(claims, audience)
        if grant is None:
            return None
        if len(self._answers) >= _MAX_CACHED:
            self._answers.pop(next(iter(self._answers)))
        exp = claims.get("exp")
        until = now + options.introspect_cache
        if isinstance(exp, int | float) and not isinstance(exp, bool):
            until = min(until, now + (exp - time.time()))
        self._answers[digest] = (until, grant)
        return grant

    def _active(self, claims: dict[str, Any], audience: str) -> Grant | None:
        if claims.get("active") is not True:
            return None
        leeway, wall = self.options.leeway, time.time()
        exp, nbf = claims.get("exp"), claims.get("nbf")
        if isinstance(exp, bool) or not isinstance(exp, int | float | None):
            return None
        if exp is not None and exp <= wall - leeway:
            return None
        if isinstance(nbf, int | float) and not isinstance(nbf, bool) and nbf > wall + leeway:
            return None
        if "iss" in claims and not _same_issuer(claims["iss"], self.options.issuer):
            return None
        if audience not in _audiences(claims):
            return None
        return self._grant(claims)

    # -- shared ----------------------------------------------------------------------------------

    def _grant(self, claims: Mapping[str, Any]) -> Grant | None:
        subject = claims.get("sub")
        if not isinstance(subject, str) or not subject:
            return None
        tenant = None
        if self.options.tenant_claim is not None:
            named = claims.get(self.options.tenant_claim)
            if not isinstance(named, str) or not named:
                return None  # a tenant is required and this token names none
            tenant = named
        return Grant(subject, _scopes(claims), tenant=tenant)

    def _client(self) -> httpx2.AsyncClient:
        import httpx2

        # A client per exchange: the verifier outlives any one event loop (tests, reloads),
        # and an exchange is rare (a key set fetch, or a token not seen before).
        return httpx2.AsyncClient(
            timeout=self.options.timeout, transport=self._transport, follow_redirects=False
        )
