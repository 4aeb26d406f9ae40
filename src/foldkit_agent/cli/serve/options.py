"""The options of ``foldkit-agent serve`` as one value that checks itself.

:class:`ServeOptions` is built once from the command line (``command.py`` parses the strings
that need parsing: tokens, the local user, the limits) and then read by every other module of
the command; nothing downstream looks at a flag again. Its checks are the ones ``serve`` makes
before it opens anything, each refusal one line in the words of the flags.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Final, cast
from urllib.parse import urlsplit

from ...edge.callers import DEFAULT_CALLER_LIMITS, DEFAULT_PAGE_STREAMS, CallerLimits
from ...edge.connections import (
    DEFAULT_CONNECTION_LIMITS,
    HTTP_PARSERS,
    ConnectionLimits,
    HttpParser,
    fast_http,
)
from ...edge.hosts import LOOPBACK_HOSTS
from ...edge.progress import DEFAULT_PROGRESS_INTERVAL
from ...edge.tokens import Grant, TokenTable
from ...runtime.idempotency import DEFAULT_KEY_TTL

if TYPE_CHECKING:
    from ...adapters.mcp.local import LocalUser
    from ...edge.oauth import OAuthOptions

__all__ = [
    "AG_UI_PATH",
    "LISTING_MODES",
    "SERVE_LISTING",
    "TENANT_MODES",
    "ServeOptions",
    "ServeOptionsError",
    "Tokens",
    "parse_tokens",
    "token_table",
]

LISTING_MODES: Final = ("available", "all", "catalog")
"""``--listing`` values (``foldkit_agent.adapters.mcp.listing``; kept here so the command
line loads without the ``mcp`` extra)."""

SERVE_LISTING: Final = "all"
"""The listing ``serve`` gives MCP without ``--listing``: every capability, each saying when
it is available and refused while it is not. Most agent loops (Google ADK, the Vercel AI
SDK, mcp-use, smolagents, CrewAI, LlamaIndex) list tools once per run and never hear
``tools/list_changed``, so a capability that becomes available mid-run must already be
listed (docs/mcp.md, "Clients that list once")."""

TENANT_MODES: Final = ("principal", "path")
"""``--tenant-from`` values."""

AG_UI_PATH: Final = "/ag-ui"
"""Where ``serve --ag-ui`` answers AG-UI runs (``POST``)."""

Tokens = Mapping[str, tuple[str, Sequence[str]]]
"""Static bearer tokens: ``token -> (subject, scopes)``."""


_OAUTH_FLAGS: Final = {
    "issuer": "--auth-issuer",
    "audience": "--audience",
    "introspect": "--introspect",
    "scopes": "--auth-scope",
}


def _oauth_words(problem: str) -> str:
    """An ``OAuthOptions`` refusal in the words of the flags."""
    name, _, rest = problem.partition(" ")
    return f"{_OAUTH_FLAGS[name]} {rest}" if name in _OAUTH_FLAGS else problem


class ServeOptionsError(ValueError):
    """Options ``serve`` cannot run with; the message is one line naming the flags."""


def console_streams() -> int:
    """The console's cap on its open event streams (read only when ``--console`` is on)."""
    from ...adapters.web.console import CONSOLE_STREAMS

    return CONSOLE_STREAMS


def parse_tokens(specs: Sequence[str]) -> dict[str, tuple[str, list[str]]]:
    """Parse ``--token TOKEN=SUBJECT[;SCOPE,SCOPE...]`` options.

    Raises:
        ServeOptionsError: a spec without ``=`` or with an empty token or subject.

    Example:
        >>> parse_tokens(["alice-token=alice;todos:delete"])
        {'alice-token': ('alice', ['todos:delete'])}
    """
    tokens: dict[str, tuple[str, list[str]]] = {}
    for spec in specs:
        token, sep, rest = spec.partition("=")
        subject, _, scopes = rest.partition(";")
        if not sep or not token.strip() or not subject.strip():
            raise ServeOptionsError(f"--token takes TOKEN=SUBJECT[;SCOPE,...], got {spec!r}")
        tokens[token.strip()] = (
            subject.strip(),
            [s.strip() for s in scopes.split(",") if s.strip()],
        )
    return tokens


def token_table(tokens: Tokens) -> TokenTable[Grant]:
    """The one table MCP, A2A and the tenants' gate look ``--token`` tokens up in."""
    return TokenTable({t: Grant(who, tuple(scopes)) for t, (who, scopes) in tokens.items()})


@dataclass(frozen=True, slots=True)
class ServeOptions:
    """Everything ``foldkit-agent serve`` was asked for, checked together.

    Attributes:
        target: the ``MODULE:ATTR`` reference of the runtime (factory).
        mcp: ``"stdio"``, ``"http"`` or ``None`` (no MCP).
        a2a, webmcp: serve A2A; serve the WebMCP page.
        console: serve the console at ``/console`` (the calls waiting for a person, the
            activity, the context); with ``tokens`` people sign in to it and to the page.
        native_tokens: bearer tokens of the Agent Native endpoint at ``/native`` (none: not
            served); each at least 16 characters.
        ag_ui: ``MODULE:ATTR`` of a pydantic-ai ``Agent`` (or a function returning one) whose
            runs are served over AG-UI at :data:`AG_UI_PATH`, with the capabilities as its
            tools (``None``: not served).
        host, port: where HTTP listens (``port=0`` picks a free one).
        allowed_hosts: with a non-loopback ``host``, the host names clients use.
        name: the server name clients see (``None``: the target's module).
        base_url: the public origin the A2A card's URLs name.
        tokens: the bearer tokens MCP and A2A require (:func:`parse_tokens`).
        local_user: the local user every call of a stdio server carries.
        audit, audit_durable: where audit entries are stored; answer after storing.
        listing: the MCP listing mode (:data:`LISTING_MODES`); ``None``: :data:`SERVE_LISTING`
            (:attr:`mcp_listing` is the one in force).
        progress_interval: seconds between signs of life of a waiting call.
        http_parser: uvicorn's HTTP/1.1 parser, ``"h11"``, ``"httptools"`` or ``None``
            (the fastest installed).
        drain_timeout: seconds calls in flight get on SIGTERM (``None``: from the contract).
        caller_limits: the per-caller caps of every adapter.
        connection_limits: the timeouts and caps of each HTTP connection.
        tenant_from, tenant_idle, max_tenants: one runtime per tenant (:data:`TENANT_MODES`,
            or ``claim:NAME``: :attr:`tenant_claim`).
        a2a_task_store: where A2A keeps its tasks (``sqlite:PATH``, ``postgres:DSN``).
        rate_limit, rate_limit_storage: requests one caller may make to the HTTP adapters
            (``"100/minute"``; ``None``: no limit) and the ``limits`` storage counting them
            and the capabilities' declared ``rate=`` (``memory://``: per worker process).
        idempotency_ttl: seconds an idempotency key counts after its first call (kept in the
            ``--audit`` database when it is SQLite or PostgreSQL, else per process).
        auth_issuer, audience: the OAuth 2.1 authorization server whose bearer tokens MCP and
            A2A require, and this resource's URL every token must name
            (:meth:`oauth_options`).
        introspect, client_id, client_secret: introspect tokens at this endpoint (RFC 7662)
            with these client credentials (``client_id`` defaults to ``audience``); with the
            console or the page, people sign in through the issuer as ``client_id``.
        auth_scopes: the scopes a client asks for first (``OAuthOptions.scopes``).

    Raises:
        ServeOptionsError: a value out of range, or flags that do not go together (one
            line, in the flags' words).

    Example:
        >>> ServeOptions(target="examples.todo:runtime", mcp="http", port=0).server_name
        'examples.todo'
    """

    target: str
    mcp: str | None = None
    a2a: bool = False
    webmcp: bool = False
    console: bool = False
    native_tokens: tuple[str, ...] = ()
    ag_ui: str | None = None
    host: str = "127.0.0.1"
    port: int = 8000
    allowed_hosts: tuple[str, ...] = ()
    name: str | None = None
    base_url: str | None = None
    tokens: Tokens = field(default_factory=dict[str, tuple[str, Sequence[str]]])
    local_user: LocalUser | None = None
    audit: str | None = None
    audit_durable: bool = False
    listing: str | None = None
    progress_interval: float = DEFAULT_PROGRESS_INTERVAL
    http_parser: str | None = None
    drain_timeout: float | None = None
    caller_limits: CallerLimits = DEFAULT_CALLER_LIMITS
    connection_limits: ConnectionLimits = DEFAULT_CONNECTION_LIMITS
    tenant_from: str | None = None
    tenant_idle: float = 600.0
    max_tenants: int = 100
    a2a_task_store: str | None = None
    rate_limit: str | None = None
    rate_limit_storage: str = "memory://"
    idempotency_ttl: float = DEFAULT_KEY_TTL
    auth_issuer: str | None = None
    audience: str | None = None
    introspect: str | None = None
    client_id: str | None = None
    client_secret: str | None = field(default=None, repr=False)
    auth_scopes: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        for check in (
            self._check_adapters,
            self._check_mcp,
            self._check_numbers,
            self._check_native,
            self._check_hosts,
            self._check_audit,
            self._check_tenants,
            self._check_a2a,
            self._check_rates,
            self._check_oauth,
        ):
            problem = check()
            if problem is not None:
                raise ServeOptionsError(problem)

    @property
    def mcp_listing(self) -> str:
        """The MCP listing mode in force: ``--listing``, else :data:`SERVE_LISTING`."""
        return SERVE_LISTING if self.listing is None else self.listing

    @property
    def server_name(self) -> str:
        """The name clients see: ``name``, else the target's module."""
        return self.name or self.target.partition(":")[0]

    @property
    def parser(self) -> HttpParser:
        """uvicorn's HTTP/1.1 parser: ``http_parser``, else the fastest one installed."""
        return fast_http() if self.http_parser is None else cast("HttpParser", self.http_parser)

    @property
    def native(self) -> bool:
        """Whether the Agent Native endpoint is served."""
        return bool(self.native_tokens)

    @property
    def tenant_claim(self) -> str | None:
        """The claim ``--tenant-from claim:NAME`` reads the tenant from, else ``None``."""
        mode = self.tenant_from or ""
        claim = mode.removeprefix("claim:")
        return claim if mode.startswith("claim:") and claim else None

    @property
    def bearer(self) -> bool:
        """Whether MCP and A2A over HTTP require a bearer token (``--token`` or an issuer)."""
        return bool(self.tokens) or self.auth_issuer is not None

    def oauth_options(self) -> OAuthOptions | None:
        """The :class:`~foldkit_agent.edge.oauth.OAuthOptions` of ``--auth-issuer`` and the
        flags with it, or ``None`` without an issuer.

        Raises:
            ValueError: a URL, scope or credential the options refuse (in their words).
        """
        if self.auth_issuer is None or self.audience is None:
            return None
        from ...edge.oauth import OAuthOptions

        introspecting = self.introspect is not None
        return OAuthOptions(
            issuer=self.auth_issuer,
            audience=self.audience,
            introspect=self.introspect,
            client_id=(self.client_id or self.audience) if introspecting else None,
            client_secret=self.client_secret if introspecting else None,
            scopes=self.auth_scopes,
            tenant_claim=self.tenant_claim,
        )

    @property
    def signs_in(self) -> bool:
        """Whether people sign in to the page and the console (there are ``tokens``, or
        they sign in through the issuer: :attr:`issuer_sign_in`)."""
        return (bool(self.tokens) or self.issuer_sign_in) and (self.webmcp or self.console)

    @property
    def issuer_sign_in(self) -> bool:
        """Whether people sign in through ``--auth-issuer`` as ``--client-id``."""
        return self.auth_issuer is not None and self.client_id is not None

    @property
    def serves_console(self) -> bool:
        """Whether the console is served: asked for, or where the page's people sign in."""
        return self.console or (self.webmcp and self.signs_in)

    @property
    def loopback(self) -> bool:
        """Whether ``host`` is a loopback name (only then may the page be served)."""
        return self.host in LOOPBACK_HOSTS

    @property
    def extra_hosts(self) -> list[str] | None:
        """The host names every adapter accepts besides the loopback ones (``None``: none)."""
        return None if self.loopback else list(self.allowed_hosts)

    @property
    def public_host(self) -> str:
        """The host the printed URLs (and the A2A card) name."""
        hosts = self.extra_hosts
        return self.host if not hosts or hosts[0] == "*" else hosts[0]

    def warnings(self) -> list[str]:
        """The lines ``serve`` prints at start for a choice that serves, but likely not as
        meant: tokens that nothing reads, or HTTP callers that nobody authenticates."""
        found: list[str] = []
        if self.mcp == "stdio" and self.tokens:
            found.append(
                "warning: --token applies to HTTP, and a --mcp stdio server ignores it (a "
                "local pipe carries no token); name the local user with --principal "
                "SUBJECT[;SCOPE,...]"
            )
        bearer = [
            name
            for name, on in (("MCP", self.mcp == "http"), ("A2A", self.a2a), ("AG-UI", self.ag_ui))
            if on
        ]
        if bearer and not self.bearer and self.tenant_from is None:
            named = " and ".join([", ".join(bearer[:-1]), bearer[-1]] if bearer[1:] else bearer)
            found.append(
                f"warning: no --token, so {named} callers are not "
                "authenticated: bearer tokens they send are ignored and every call is "
                "anonymous (capabilities that authorize refuse it); add --token "
                "TOKEN=SUBJECT[;SCOPE,...]"
            )
        return found

    def stream_pools(self) -> int:
        """How many connections every stream pool of this server may hold together.

        Each open stream holds a connection, so the stream caps together must stay below
        ``max_connections`` (by default they stay under half of it: 256 + 64 + 64 of 1,000).
        """
        caps = self.caller_limits
        return (
            (caps.streams if self.mcp == "http" else 0)
            + (caps.page_streams if self.webmcp else 0)
            + (console_streams() if self.serves_console else 0)
            + (DEFAULT_PAGE_STREAMS if self.native else 0)
            + (caps.streams if self.ag_ui else 0)
        )

    def _check_adapters(self) -> str | None:
        if self.mcp not in (None, "stdio", "http"):
            return "--mcp takes 'stdio' or 'http'"
        if self.local_user is not None and self.mcp != "stdio":
            return (
                "--principal names the local user of a --mcp stdio server; over HTTP the "
                "caller comes from the bearer token (--token TOKEN=SUBJECT[;SCOPE,...])"
            )
        if not (self.mcp or self.a2a or self.webmcp or self.native or self.ag_ui):
            return (
                "choose at least one adapter: --mcp stdio|http, --a2a, --webmcp, "
                "--native-token, --ag-ui MODULE:ATTR"
            )
        if self.mcp == "stdio" and (
            self.a2a or self.webmcp or self.native or self.console or self.ag_ui
        ):
            return "--mcp stdio uses standard input and output; serve the HTTP adapters separately"
        return None

    def _check_mcp(self) -> str | None:
        if self.listing is not None and self.listing not in LISTING_MODES:
            return f"--listing takes {', '.join(LISTING_MODES)}, got {self.listing!r}"
        if self.listing is not None and self.mcp is None:
            return "--listing applies to MCP: add --mcp stdio or --mcp http"
        if self.http_parser is not None and self.http_parser not in HTTP_PARSERS:
            return f"--http takes {' or '.join(HTTP_PARSERS)}, got {self.http_parser!r}"
        if self.mcp == "stdio" and self.http_parser is not None:
            return "--http chooses the HTTP parser; --mcp stdio serves no HTTP"
        return None

    def _check_numbers(self) -> str | None:
        interval = self.progress_interval
        if not 0 < interval < float("inf"):
            return f"--progress-interval must be a positive number of seconds, got {interval}"
        if not 0 < self.idempotency_ttl < float("inf"):
            return (
                "--idempotency-ttl must be a positive number of seconds, "
                f"got {self.idempotency_ttl}"
            )
        drain = self.drain_timeout
        if drain is not None and not 0 <= drain < float("inf"):
            return f"--drain-timeout must be a number of seconds >= 0, got {drain}"
        held, most = self.stream_pools(), self.connection_limits.max_connections
        if held >= most:
            return (
                f"the stream caps hold up to {held} connections together (--max-streams, "
                f"--max-page-streams, Agent Native's {DEFAULT_PAGE_STREAMS}), which reaches "
                f"--max-connections {most}: lower them or raise --max-connections"
            )
        waiting = self._check_waiting(held, most)
        if waiting is not None:
            return waiting
        if not 0 <= self.port <= 65535:
            return f"--port must be between 0 and 65535, got {self.port}"
        return None

    def _check_waiting(self, held: int, most: int) -> str | None:
        """One caller's share of calls waiting for a person must leave connections free.

        A handshake-era MCP elicitation holds its request's connection while the person
        decides, so with ``--mcp http`` one caller at its share holds that many connections
        beside the open streams; reaching ``--max-connections`` would lock everyone else out.
        The total (``--max-waiting``) is not checked against it: a parked call (2026-era MCP,
        A2A, the page) holds no connection, so a total above the connection cap is what a
        server of such clients needs (the defaults are 1,024 and 1,000), and many callers
        together are bounded by the connection cap itself.
        """
        share = self.caller_limits.waiting_per_caller  # never above the total (CallerLimits)
        if self.mcp != "http" or share + held < most:
            return None
        flag = "--max-waiting-per-caller"
        return (
            f"{flag} {share}: one caller's handshake-era MCP elicitations each hold a "
            f"connection while they wait, and with the stream caps ({held}) they reach "
            f"--max-connections {most}: lower {flag} or raise --max-connections"
        )

    def _check_native(self) -> str | None:
        if any(len(t) < 16 for t in self.native_tokens):
            return "--native-token must be at least 16 characters"
        return None

    def _check_hosts(self) -> str | None:
        if (self.webmcp or self.console) and not self.loopback and not self.tokens:
            return (
                "without --token the --webmcp page and the --console have no sign-in, so they "
                "are served on loopback only; add --token TOKEN=SUBJECT for each person"
            )
        if self.mcp != "stdio" and not self.loopback and not self.allowed_hosts:
            return (
                f"--host {self.host} is not loopback: name the host(s) clients will use with "
                "--allowed-host NAME (DNS-rebinding protection), and consider --token"
            )
        return None

    def _check_rates(self) -> str | None:
        if self.rate_limit is None and self.rate_limit_storage == "memory://":
            return None
        if self.mcp == "stdio" and self.rate_limit is not None:
            return "--rate-limit counts HTTP requests per caller; a --mcp stdio server has one user"
        from ...edge.rates import RateLimits

        try:
            RateLimits(self.rate_limit, storage=self.rate_limit_storage).limiter()
        except ValueError as err:
            flag = "--rate-limit-storage" if "storage" in str(err) else "--rate-limit"
            return f"{flag}: {err}"
        return None

    def _check_audit(self) -> str | None:
        if self.audit_durable and self.audit is None:
            return "--audit-durable needs --audit SPEC (where to store the entries)"
        return None

    def _check_tenants(self) -> str | None:
        mode = self.tenant_from
        if mode is None:
            return None
        if mode not in TENANT_MODES and self.tenant_claim is None:
            return (
                f"--tenant-from takes {', '.join(TENANT_MODES)} or claim:NAME (a claim of the "
                f"--auth-issuer's tokens), got {mode!r}"
            )
        if self.tenant_claim is not None and self.auth_issuer is None:
            return (
                f"--tenant-from {mode} reads the tenant off a verified token's claim: add "
                "--auth-issuer URL (a --token carries no claims)"
            )
        if self.mcp == "stdio":
            return "--tenant-from serves many callers over HTTP; a --mcp stdio server has one user"
        if (
            self.webmcp
            or self.console
            or self.native
            or self.ag_ui
            or (self.mcp != "http" and not self.a2a)
        ):
            # the page and the native endpoint carry no tenant: they take a Tenants in your
            # own app
            return (
                "--tenant-from applies to --mcp http and --a2a only (pass a Tenants to "
                "webmcp_app or native_app yourself)"
            )
        if not 0 < self.tenant_idle < float("inf"):
            return f"--tenant-idle must be a positive number of seconds, got {self.tenant_idle}"
        if self.max_tenants < 1:
            return f"--max-tenants must be at least 1, got {self.max_tenants}"
        if mode == "principal" and not self.bearer:
            return (
                "--tenant-from principal needs --token TOKEN=SUBJECT or --auth-issuer URL: the "
                "tenant is the token's subject"
            )
        return None

    def _check_oauth(self) -> str | None:
        given = [
            f"--{name.replace('_', '-')}"
            for name in ("audience", "introspect", "client_id", "client_secret")
            if getattr(self, name) is not None
        ] + (["--auth-scope"] if self.auth_scopes else [])
        if self.auth_issuer is None:
            return None if not given else f"{given[0]} goes with --auth-issuer URL"
        if self.audience is None:
            return (
                "--auth-issuer needs --audience URL: this server's resource URL, which every "
                "token must name (for MCP the endpoint's URL, such as https://todo.example/mcp)"
            )
        if self.mcp == "stdio":
            return "--auth-issuer checks bearer tokens over HTTP; a --mcp stdio server has none"
        if self.introspect is None and self.client_secret and not self.client_id:
            return "--client-secret goes with --introspect URL or --client-id ID"
        if self.introspect is None and self.client_id and not (self.console or self.webmcp):
            return (
                "--client-id goes with --introspect URL, or with --console or --webmcp "
                "(people sign in through the issuer as that client)"
            )
        if self.introspect is not None and not self.client_secret:
            return (
                "--introspect needs this server's client secret at the authorization server: "
                "set FOLDKIT_AGENT_CLIENT_SECRET (or --client-secret)"
            )
        try:
            self.oauth_options()
        except ValueError as err:
            return _oauth_words(str(err))
        return None

    def _check_a2a(self) -> str | None:
        if self.base_url is not None:
            parsed = urlsplit(self.base_url)
            if not self.a2a:
                return "--base-url names the A2A card's URLs: add --a2a"
            if parsed.scheme not in ("http", "https") or not parsed.hostname or parsed.query:
                return (
                    "--base-url takes an origin such as http://proxy.example:8080, got "
                    f"{self.base_url!r}"
                )
        if self.a2a_task_store is not None and not self.a2a:
            return "--a2a-task-store keeps A2A tasks: add --a2a"
        return None
