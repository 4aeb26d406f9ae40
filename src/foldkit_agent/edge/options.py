"""What every HTTP adapter of one server shares, as one value.

``http_app`` (MCP), ``a2a_app``, ``agent_surface``/``webmcp_app`` (the page) and ``native_app``
each take an :class:`HttpOptions` as ``options=``, so a server that mounts several of them
builds it once and every adapter holds to the same host names, body caps, per-caller caps,
rhythm of signs of life and bearer tokens. What only one adapter has (MCP's listing mode and
path, A2A's card and task store, the page's CSRF secret) stays a keyword of that adapter, and
so does ``calls``, the server's live count of calls in flight: state shared by the adapters,
not an option of them.

Example::

    shared = HttpOptions(allowed_hosts=("todo.example",), tokens=TokenTable({...}))
    calls = CallsInFlight(shared.caps)
    apps = [http_app(rt, name="todo", version="1.0", options=shared, calls=calls),
            a2a_app(rt, name="todo", version="1.0", base_url=origin, options=shared,
                    calls=calls)]
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Final

from .callers import DEFAULT_CALLER_LIMITS, CallerLimits, check_count, check_seconds
from .hosts import host_names
from .oauth import OAuthVerifier
from .progress import DEFAULT_PROGRESS_INTERVAL
from .rates import RateLimits
from .tokens import Grant, TokenTable
from .wire import DEFAULT_MAX_ITEMS

__all__ = ["DEFAULT_HTTP_OPTIONS", "HttpOptions"]


@dataclass(frozen=True, slots=True)
class HttpOptions:
    """The options every HTTP adapter reads the same way.

    Attributes:
        host: the host the server listens on. MCP also accepts it in ``Host`` (a name, not
            a wildcard bind such as ``0.0.0.0``); the loopback names are always accepted.
        allowed_hosts: more host names a ``Host`` (and any ``Origin``) header may carry, any
            port (:class:`~foldkit_agent.edge.HostPolicy`; others get 421/403); ``"*"``
            accepts any well-formed host, safe only behind a proxy that checks ``Host``. A
            single string is one name; ``None`` is none. Read as a tuple.
        max_body: the largest request body in bytes, larger is HTTP 413 before it is read;
            ``None`` keeps each adapter's own (MCP 4 MiB, A2A 1 MiB, the page 64 KiB).
        max_items: most JSON values in one body (default 10,000; :mod:`.wire`).
        caps: the per-caller caps of every adapter (:class:`~.callers.CallerLimits`): MCP
            sessions and streams, the page's event streams and sessions, A2A tasks; and the
            caps on calls in flight and waiting for a person of the ``CallsInFlight`` an
            adapter makes when it is given no ``calls`` of the server's.
        progress_interval: seconds between signs of life of a call waiting on its completion
            (MCP ``notifications/progress``, A2A ``WORKING`` updates; default 5).
        tokens: the bearer tokens MCP and A2A require (the page and Agent Native do not read
            them: a page signs in with its session, a service with its own tokens), in the
            one constant-time table
            (:class:`~.tokens.TokenTable` of :class:`~.tokens.Grant`); the grant's subject and
            scopes become the call's credentials. ``None``: no token required (an adapter's
            own hook, such as MCP's ``token_verifier``, may still ask for one).
        oauth: bearer tokens issued by an OAuth 2.1 authorization server
            (:class:`~.oauth.OAuthVerifier`: JWTs against the issuer's keys, or
            introspection), required by MCP and A2A like ``tokens`` and checked by the one
            verifier (its key set cached once for the server); MCP also serves the protected
            resource metadata (RFC 9728) naming the issuer. With both, a token in ``tokens``
            is accepted as well (a local operator's). ``None``: no issuer.
        rates: the server's :class:`~.rates.RateLimits` (one object, so every adapter counts
            against the same numbers): its ``per_caller`` rate is checked by every adapter's
            edge guard (429 with ``Retry-After``), and a ``CallsInFlight`` made with it counts
            the capabilities' declared ``rate=`` there. ``None``: no rate per caller.

    Raises:
        TypeError: a field of the wrong kind: ``host`` not a string, ``allowed_hosts`` not
            strings, ``max_body``/``max_items`` not an ``int`` (a ``bool`` is not one),
            ``caps`` not a :class:`~.callers.CallerLimits`, ``progress_interval`` not a
            number, ``tokens`` not a :class:`~.tokens.TokenTable` or ``None``, ``oauth`` not an
            :class:`~.oauth.OAuthVerifier` or ``None``.
        ValueError: an ``allowed_hosts`` entry that is not a host name or IP address (a URL,
            one with a port; :func:`~.hosts.host_names`), ``max_body`` below 2 bytes,
            ``max_items`` below 1, or a ``progress_interval`` that is not a positive number of
            seconds.

    Example:
        >>> HttpOptions(allowed_hosts="todo.example").allowed_hosts
        ('todo.example',)
        >>> HttpOptions(caps=CallerLimits(sessions_per_caller=10)).caps.sessions_per_caller
        10
    """

    host: str = "127.0.0.1"
    allowed_hosts: Iterable[str] | str | None = ()
    max_body: int | None = None
    max_items: int = DEFAULT_MAX_ITEMS
    caps: CallerLimits = DEFAULT_CALLER_LIMITS
    progress_interval: float = DEFAULT_PROGRESS_INTERVAL
    tokens: TokenTable[Grant] | None = None
    oauth: OAuthVerifier | None = None
    rates: RateLimits | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.host, str):  # pyright: ignore[reportUnnecessaryIsInstance]
            raise TypeError(f"host takes one host name or address as a string, got {self.host!r}")
        # frozen: the one place the given names become the tuple every adapter reads
        object.__setattr__(self, "allowed_hosts", host_names(self.allowed_hosts))
        if self.max_body is not None:
            check_count("max_body", self.max_body, 2, "bytes")
        check_count("max_items", self.max_items, 1)
        if not isinstance(self.caps, CallerLimits):  # pyright: ignore[reportUnnecessaryIsInstance]
            raise TypeError(
                f"caps takes a CallerLimits, such as CallerLimits(calls_per_caller=8), "
                f"got {self.caps!r}"
            )
        check_seconds("progress_interval", self.progress_interval)
        tokens = self.tokens
        if tokens is not None and not isinstance(tokens, TokenTable):  # pyright: ignore[reportUnnecessaryIsInstance]
            raise TypeError(
                "tokens takes a TokenTable, such as TokenTable({'TOKEN': Grant('alice')}), "
                f"or None, got a {type(tokens).__name__}"
            )
        if self.oauth is not None and not isinstance(self.oauth, OAuthVerifier):  # pyright: ignore[reportUnnecessaryIsInstance]
            raise TypeError(
                "oauth takes an OAuthVerifier, such as OAuthVerifier(OAuthOptions(issuer=..., "
                f"audience=...)), or None, got a {type(self.oauth).__name__}"
            )

    async def verify(self, token: str | None, *, audience: str | None = None) -> Grant | None:
        """What a bearer token grants, by the static table first, then the issuer (for the
        issuer's audience, or ``audience``: a tenant's endpoint); ``None`` for a token neither
        vouches for (or no token)."""
        found = None if self.tokens is None else self.tokens.lookup(token)
        if found is None and self.oauth is not None:
            return await self.oauth.verify(token, audience=audience)
        return found

    @property
    def bearer_required(self) -> bool:
        """A token table or an issuer is configured: MCP and A2A require a bearer token."""
        return self.tokens is not None or self.oauth is not None

    def body_limit(self, default: int) -> int:
        """``max_body``, else the adapter's own ``default``."""
        return default if self.max_body is None else self.max_body


DEFAULT_HTTP_OPTIONS: Final = HttpOptions()
