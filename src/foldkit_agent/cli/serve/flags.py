"""The flags of ``foldkit-agent serve``: one table, made into Typer options and read back as
one :class:`~.options.ServeOptions`.

Each flag is named after the :class:`~.options.ServeOptions` field it sets and takes that
field's default, so a default is written once (on the field). The limit flags are made from
the fields of :class:`~foldkit_agent.edge.callers.CallerLimits` and
:class:`~foldkit_agent.edge.connections.ConnectionLimits`: a limit is declared once (its
field) and the command line follows it. A cap of ``CallerLimits`` (an ``int``) reads as
``--max-<field>``; its timeouts and the fields of ``ConnectionLimits`` are flags under their
own names (``--session-idle-timeout``, ``--max-connections``).

Typer reads a command's options from its signature, so :func:`with_flags` writes them into
the command's signature; their values reach the command in ``**flags``, and
:func:`options_from` builds the options from them.
"""

from __future__ import annotations

import dataclasses
import inspect
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final, TypeVar, cast

import typer

from ...edge.callers import CallerLimits
from ...edge.connections import ConnectionLimits
from .audit import AUDIT_HELP
from .options import ServeOptions, parse_tokens

if TYPE_CHECKING:
    from ...adapters.mcp.local import LocalUser

__all__ = ["FLAGS", "LIMIT_HELP", "Flag", "flag_of", "options_from", "with_flags"]

ADAPTERS, HTTP, CALLERS, CALLS, TENANTS = "Adapters", "HTTP", "Callers", "Calls", "Tenants"
OAUTH = "OAuth"
"""The ``--help`` panels, besides the two of the limits."""


@dataclass(frozen=True, slots=True)
class Flag:
    """How one :class:`~.options.ServeOptions` field is set on the command line.

    Attributes:
        help: what ``--help`` says.
        metavar: the value's placeholder (``None``: its type).
        panel: the ``--help`` panel it is listed in.
        flag: its spelling, when not ``--`` and the field's name in words.
        kind: the type of a value whose field defaults to ``None``.
        envvar: an environment variable that sets it too (a secret kept off the command
            line, where ``ps`` would show it), or ``None``.
    """

    help: str
    metavar: str | None = None
    panel: str = CALLS
    flag: str | None = None
    kind: type = str
    envvar: str | None = None


FLAGS: Final[dict[str, Flag]] = {
    "mcp": Flag(
        "Serve MCP over stdio (a client starts this command) or streamable HTTP (at /mcp)",
        "stdio|http",
        ADAPTERS,
    ),
    "a2a": Flag("Serve A2A (agent card + JSON-RPC + REST)", panel=ADAPTERS),
    "webmcp": Flag("Serve a page at / whose capabilities are WebMCP tools", panel=ADAPTERS),
    "console": Flag(
        "Serve the console at /console: calls waiting for a person (every transport's), who "
        "did what, the context; with --token people sign in to it (and to the page)",
        panel=ADAPTERS,
    ),
    "native_tokens": Flag(
        "Serve the endpoint generated Agent Native actions call, at /native, for servers "
        "sending this bearer token (repeatable; at least 16 characters)",
        "TOKEN",
        ADAPTERS,
        "--native-token",
    ),
    "ag_ui": Flag(
        "Serve AG-UI at /ag-ui for a copilot in your front end: runs of this pydantic-ai Agent "
        "(or a function returning one) with the capabilities as its tools, the context as "
        "shared state, a confirm as an interrupt; with --token each run needs one",
        "MODULE:ATTR",
        ADAPTERS,
    ),
    "name": Flag("Server name shown to clients (default: MODULE)", "NAME", ADAPTERS),
    "host": Flag("HTTP host (loopback by default)", "HOST", HTTP),
    "port": Flag("HTTP port (0 picks a free one)", "PORT", HTTP),
    "allowed_hosts": Flag(
        "With a non-loopback --host: a host name clients use (repeatable; '*' = any, "
        "only behind a proxy that checks Host)",
        "NAME",
        HTTP,
        "--allowed-host",
    ),
    "base_url": Flag(
        "With --a2a: the public origin clients reach this server at, which the agent "
        "card's URLs name (default http://HOST:PORT; behind a proxy, the proxy's origin)",
        "URL",
        HTTP,
    ),
    "http_parser": Flag(
        "uvicorn's HTTP/1.1 parser (default: httptools where installed, else h11); every "
        "connection limit holds on both",
        "h11|httptools",
        HTTP,
        "--http",
    ),
    "tokens": Flag(
        "Require a bearer token for MCP and A2A over HTTP (the A2A card stays public), and a "
        "person's sign-in with one for the page and the console: TOKEN=SUBJECT[;SCOPE,...] "
        "(scope 'approver': answers every caller's requests), repeatable",
        "SPEC",
        CALLERS,
        "--token",
    ),
    "auth_issuer": Flag(
        "Require bearer tokens of this OAuth 2.1 authorization server for MCP and A2A over "
        "HTTP: its issuer URL (https, or http on loopback); JWTs are checked against its key "
        "set, found through its metadata; needs --audience; see docs/security.md",
        "URL",
        OAUTH,
    ),
    "audience": Flag(
        "With --auth-issuer: this server's resource URL, which every token must name in aud "
        "(for MCP the endpoint's public URL, such as https://todo.example/mcp); the protected "
        "resource metadata is served at its well-known path",
        "URL",
        OAUTH,
    ),
    "introspect": Flag(
        "With --auth-issuer: ask this RFC 7662 introspection endpoint about each token "
        "instead of reading it as a JWT (opaque tokens); needs --client-secret",
        "URL",
        OAUTH,
    ),
    "client_id": Flag(
        "This server's client id at the authorization server: with --introspect, the "
        "resource's (default: the --audience); with --console or --webmcp, people sign in "
        "through the issuer as this client (authorization code with PKCE)",
        "ID",
        OAUTH,
    ),
    "client_secret": Flag(
        "This server's client secret at the authorization server, for --introspect and a "
        "person's sign-in (better set in the environment variable, out of sight of ps)",
        "SECRET",
        OAUTH,
        envvar="FOLDKIT_AGENT_CLIENT_SECRET",
    ),
    "auth_scopes": Flag(
        "With --auth-issuer: a scope clients ask for first, named in every 401 and in the "
        "metadata's scopes_supported (repeatable); a capability's own scopes= are asked for "
        "by a 403 when it is called (step-up)",
        "SCOPE",
        OAUTH,
        "--auth-scope",
    ),
    "local_user": Flag(
        "With --mcp stdio: the local user who started the server (Claude Desktop's "
        "user), SUBJECT[;SCOPE,...]; every call carries them as invocation.credentials "
        "(a LocalUser with subject and scopes)",
        "SPEC",
        CALLERS,
        "--principal",
    ),
    "audit": Flag(AUDIT_HELP, "SPEC"),
    "audit_durable": Flag("With --audit: answer each call only after its audit entry is stored"),
    "idempotency_ttl": Flag(
        "Seconds an idempotency key counts after its first call (a retry with it gets the "
        "first answer); kept in the --audit database when it is sqlite: or postgres:, so "
        "every worker and restart sees them, else per process; see docs/retries.md",
        "SECONDS",
    ),
    "listing": Flag(
        "What MCP tools/list shows: 'all' (default: every capability, saying when it is "
        "available, refused while it is not; works with agent loops that list once), "
        "'available' (what is available now; only for clients that re-list on "
        "tools/list_changed) or 'catalog' (list_capabilities + call_capability)",
        "available|all|catalog",
    ),
    "progress_interval": Flag(
        "Seconds between signs of life of a call waiting on its completion (MCP "
        "notifications/progress, A2A WORKING updates)"
    ),
    "a2a_task_store": Flag(
        "With --a2a: keep A2A tasks in SQLite or PostgreSQL, so GetTask finds them after a "
        "restart: sqlite:PATH (or sqlite:///PATH), postgres:DSN or postgresql://... (needs "
        "foldkit-agent\\[a2a-db]; the --max-tasks* and --task-max-age bounds apply)",
        "SPEC",
    ),
    "drain_timeout": Flag(
        "On SIGTERM or SIGINT over HTTP: stop accepting, give calls in flight this long "
        "to finish, then answer the rest 'server shut down, outcome unknown' (default: the "
        "longest completion timeout in the contract plus 5)",
        "SECONDS",
        kind=float,
    ),
    "tenant_from": Flag(
        "With --mcp http and/or --a2a: serve one runtime per tenant, MODULE:ATTR(tenant) "
        "each; the tenant is the bearer token's subject (principal; needs --token) or the first "
        "path segment (path: /TENANT/mcp, /TENANT/a2a/...; with --token, only for a token of "
        "that tenant) or a claim of the --auth-issuer's tokens (claim:org: the token's org); "
        "see docs/deploy.md",
        "principal|path|claim:NAME",
        TENANTS,
    ),
    "tenant_idle": Flag(
        "With --tenant-from: close a tenant's runtime after this many idle seconds",
        "SECONDS",
        TENANTS,
    ),
    "rate_limit": Flag(
        "Requests one caller (a --token's subject; every anonymous caller together) may make "
        "to the HTTP adapters, such as 100/minute; past it HTTP 429 with Retry-After, "
        "audited (default: no limit; see docs/security.md)",
        "N/UNIT",
        CALLERS,
    ),
    "rate_limit_storage": Flag(
        "Where rate limits are counted: memory:// (each worker process counts its own) or a "
        "storage URI of the limits library, such as redis://HOST:6379 (shared by workers)",
        "URI",
        CALLERS,
    ),
    "max_tenants": Flag(
        "With --tenant-from: runtimes held at most (the least recently used is closed)",
        "N",
        TENANTS,
    ),
}
"""Every flag but the limits', by the :class:`~.options.ServeOptions` field it sets, in
``--help`` order."""

LIMITS: Final[dict[type[CallerLimits] | type[ConnectionLimits], str]] = {
    ConnectionLimits: "Connection limits",
    CallerLimits: "Per-caller limits",
}
"""The two limit values, each with the ``--help`` panel its flags are listed in."""

LIMIT_HELP: Final[dict[str, str]] = {
    "header_timeout": "Seconds a client has to send a request's headers; then the connection is "
    "closed",
    "body_timeout": "Seconds a request body has to arrive whole after its headers; then the "
    "connection is closed",
    "keep_alive": "Seconds an idle connection is kept open between requests",
    "max_connections": "Open connections; at the cap a new one closes the connection idle longest",
    "max_header_bytes": "Bytes of one request's request line and headers; past it the request "
    "is answered 431 and the connection closed",
    "max_headers": "Header fields in one request; past it the request is answered 431 and the "
    "connection closed",
    "streams_per_caller": "Open streams one caller may hold per adapter (MCP GET and "
    "subscriptions/listen, the page's events, AG-UI runs); every anonymous caller together "
    "counts as one",
    "streams": "Open MCP streams all callers may hold together (and, with --ag-ui, open AG-UI "
    "runs: a pool of their own)",
    "page_streams": "With --webmcp: open events streams all page sessions may hold together",
    "page_sessions": "With --webmcp: page sessions that each hold their own share of streams",
    "sessions_per_caller": "Handshake-era MCP sessions one caller may hold open",
    "sessions": "Handshake-era MCP sessions all callers may hold open",
    "session_idle_timeout": "Seconds after which an MCP session with no request in flight is "
    "closed",
    "tasks_per_caller": "A2A tasks kept for one caller (finished ones dropped first)",
    "tasks": "A2A tasks kept for all callers",
    "task_max_age": "Seconds after its last update when an A2A task is dropped",
    "calls_per_caller": "Calls one caller may have in flight at once, every transport together "
    "(a call waiting for a person counts among --max-waiting-per-caller instead)",
    "calls": "Calls all callers may have in flight at once, every transport together",
    "waiting_per_caller": "Calls one caller may have waiting for a person's approval at once, "
    "every transport together",
    "waiting": "Calls all callers may have waiting for a person's approval at once",
}
"""What each limit flag's ``--help`` says, by field name."""


def flag_of(
    kind: type[CallerLimits] | type[ConnectionLimits], field: dataclasses.Field[Any]
) -> str:
    """The flag (without ``--``) that sets ``field`` of ``kind``.

    Example:
        >>> flag_of(CallerLimits, dataclasses.fields(CallerLimits)[0])
        'max-streams-per-caller'
    """
    words = field.name.replace("_", "-")
    return f"max-{words}" if kind is CallerLimits and isinstance(field.default, int) else words


def _default(field: dataclasses.Field[Any]) -> Any:
    if field.default is not dataclasses.MISSING:
        return field.default
    return field.default_factory()  # type: ignore[misc]


def _parameter(name: str, default: Any, flag: Flag) -> inspect.Parameter:
    if isinstance(default, tuple | Mapping):  # a repeatable flag
        default, annotation = [], list[str]
    else:
        annotation = flag.kind | None if default is None else type(default)
    option = typer.Option(
        default,
        flag.flag or f"--{name.replace('_', '-')}",
        metavar=flag.metavar,
        help=flag.help,
        rich_help_panel=flag.panel,
        show_default=default is not None and default != [],
        envvar=flag.envvar,
        show_envvar=flag.envvar is not None,
    )
    return inspect.Parameter(
        name, inspect.Parameter.KEYWORD_ONLY, default=option, annotation=annotation
    )


def _parameters() -> list[inspect.Parameter]:
    fields = {f.name: f for f in dataclasses.fields(ServeOptions)}
    own = [_parameter(name, _default(fields[name]), flag) for name, flag in FLAGS.items()]
    limits = [
        _parameter(
            f.name,
            f.default,
            Flag(
                LIMIT_HELP.get(f.name, f.name.replace("_", " ")),
                None,
                panel,
                f"--{flag_of(kind, f)}",
            ),
        )
        for kind, panel in LIMITS.items()
        for f in dataclasses.fields(kind)
    ]
    names = [p.name for p in own + limits]
    if len(set(names)) != len(names):
        raise TypeError(f"two serve flags set one name: {sorted(names)}")
    return own + limits


Command = TypeVar("Command", bound=Callable[..., Any])


def with_flags(command: Command) -> Command:
    """``command`` with one keyword option per flag in place of its ``**flags``."""
    signature = inspect.signature(command, eval_str=True)
    own = [p for p in signature.parameters.values() if p.kind is not p.VAR_KEYWORD]
    command.__signature__ = signature.replace(parameters=[*own, *_parameters()])  # type: ignore[attr-defined]
    return command


def _local_user(spec: str | None) -> LocalUser | None:
    if spec is None:
        return None
    from ...adapters.mcp.local import parse_local_user

    return parse_local_user(spec)


def _limits(kind: Any, values: dict[str, Any]) -> Any:
    fields = dataclasses.fields(kind)
    try:
        return kind(**{f.name: values.pop(f.name) for f in fields})
    except ValueError as err:  # said in the words of the flags: every field name it names
        flags = {f.name: f"--{flag_of(kind, f)}" for f in fields}
        words = re.sub(r"\b[a-z_]+\b", lambda m: flags.get(m[0], m[0]), str(err))
        raise ValueError(words) from None


def _frozen(value: Any) -> Any:
    """A repeatable flag's list as a tuple (the options value is frozen)."""
    return tuple(cast("list[str]", value)) if isinstance(value, list) else value


def options_from(target: str, flags: Mapping[str, Any]) -> ServeOptions:
    """The options the flags' values (by field name) say, parsed and checked.

    Raises:
        ValueError: a value that does not parse or is out of range, or flags that do not go
            together (:class:`~.options.ServeOptionsError`), in the words of the flags
            (``--max-streams must be at least 1, got 0``).
    """
    values = dict(flags)
    connection_limits: ConnectionLimits = _limits(ConnectionLimits, values)
    caller_limits: CallerLimits = _limits(CallerLimits, values)
    tokens = parse_tokens(values.pop("tokens"))
    local_user = _local_user(values.pop("local_user"))
    plain = {k: _frozen(v) for k, v in values.items()}
    return ServeOptions(
        target=target,
        tokens=tokens,
        local_user=local_user,
        caller_limits=caller_limits,
        connection_limits=connection_limits,
        **plain,
    )
