"""The one bearer-token table every adapter checks tokens against (DESIGN §9, step 3).

MCP's :class:`~foldkit_agent.adapters.mcp.StaticTokenVerifier`, A2A's
:class:`~foldkit_agent.adapters.a2a.BearerTokenBackend` and Agent Native's service tokens
(:func:`~foldkit_agent.adapters.native.native_app`) all look tokens up here.

Constant time: the table is keyed by the SHA-256 digest of each token, so a lookup hashes the
presented token once and finds its entry by digest. Nothing compares the presented token with
a stored one character by character, so the time a lookup takes tells nothing about how many
leading characters of a guess were right, and it does not grow with the number of tokens.

Example:
    >>> table = TokenTable({"alice-token": Grant("alice", ("todos:delete",))})
    >>> table.lookup("alice-token")
    Grant(subject='alice', scopes=('todos:delete',))
    >>> table.bearer("Bearer alice-tokeX") is None
    True
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Final, Generic, TypeVar

__all__ = ["MAX_TOKEN_LENGTH", "Grant", "TokenTable", "bearer_token"]

V = TypeVar("V")

MAX_TOKEN_LENGTH: Final = 4096
"""Longest token looked up, in characters; a longer one is unknown without being hashed."""


@dataclass(frozen=True, slots=True)
class Grant:
    """Who a bearer token stands for: a static token's entry, or what an
    :class:`~.oauth.OAuthVerifier` read from a verified one.

    Attributes:
        subject: the caller's identity (``AccessToken.subject`` over MCP, the user's identity
            over A2A).
        scopes: the scopes granted.
        tenant: the tenant the token names (``serve --tenant-from claim:org``), else ``None``.
    """

    subject: str
    scopes: tuple[str, ...] = ()
    tenant: str | None = None


def bearer_token(authorization: str | None) -> str | None:
    """The token of an ``Authorization: Bearer <token>`` header, else ``None``.

    The scheme is case-insensitive (RFC 9110 §11.1); surrounding spaces are dropped.

    Example:
        >>> bearer_token("bearer  abc ")
        'abc'
        >>> bearer_token("Basic YWxpY2U6eA==") is None
        True
    """
    if authorization is None:
        return None
    scheme, _, token = authorization.strip().partition(" ")
    token = token.strip()
    if scheme.lower() != "bearer" or not token:
        return None
    return token


def _digest(token: str) -> bytes:
    return hashlib.sha256(token.encode("utf-8", "surrogatepass")).digest()


class TokenTable(Generic[V]):
    """Static bearer tokens and what each one grants, looked up in constant time.

    Args:
        tokens: ``{token: value}``; the value is what :meth:`lookup` returns (a
            :class:`Grant`, an ``AccessToken``, a service identity, ...).
        min_length: shortest token accepted, in characters.

    Raises:
        ValueError: a token that is not a string, shorter than ``min_length`` or longer than
            :data:`MAX_TOKEN_LENGTH`, or a value that is ``None``.
        TypeError: ``tokens`` is not a mapping.

    Example:
        >>> TokenTable({"s3rvice-token-0123456789": "mail-app"}, min_length=16).lookup(
        ...     "s3rvice-token-0123456789")
        'mail-app'
    """

    __slots__ = ("_by_digest",)

    def __init__(self, tokens: Mapping[str, V], *, min_length: int = 1) -> None:
        if not isinstance(tokens, Mapping):  # pyright: ignore[reportUnnecessaryIsInstance]
            raise TypeError("a token table is built from a {token: value} mapping")
        table: dict[bytes, V] = {}
        for token, value in tokens.items():
            if not isinstance(token, str) or not min_length <= len(token) <= MAX_TOKEN_LENGTH:  # pyright: ignore[reportUnnecessaryIsInstance]
                raise ValueError(
                    f"tokens must be strings of {min_length} to {MAX_TOKEN_LENGTH} characters"
                )
            if value is None:
                raise ValueError("a token must grant something, not None")
            table[_digest(token)] = value
        self._by_digest = table

    def __len__(self) -> int:
        return len(self._by_digest)

    def lookup(self, token: str | None) -> V | None:
        """What ``token`` grants, or ``None`` for an unknown (or missing) token."""
        if not token or len(token) > MAX_TOKEN_LENGTH:
            return None
        return self._by_digest.get(_digest(token))

    def bearer(self, authorization: str | None) -> V | None:
        """What the token of an ``Authorization: Bearer`` header grants, or ``None``."""
        return self.lookup(bearer_token(authorization))

    def __repr__(self) -> str:
        return f"TokenTable(<{len(self)} tokens>)"
