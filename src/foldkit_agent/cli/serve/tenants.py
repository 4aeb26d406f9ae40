"""``serve --tenant-from principal|path|claim:NAME``: one runtime per tenant, made by
``MODULE:ATTR(tenant)``.

The runtimes are held by one :class:`~foldkit_agent.edge.Tenants`, which every HTTP adapter
of the server takes as its ``resolve``. With ``--audit``, each tenant's runtime writes to its
own sink on the same store, flushed and closed when the tenant's runtime closes.
"""

from __future__ import annotations

import inspect
import sys
from collections.abc import AsyncGenerator, Callable, Sequence
from contextlib import asynccontextmanager
from functools import partial
from typing import Any, overload

from starlette.responses import Response
from starlette.types import Scope

from ...audit.forward import AuditSink
from ...contract.declare import AgentDefinition
from ...edge.guard import Rules, jsonrpc_or_plain, route_path
from ...edge.tenants import Tenants, claim_tenant, foreign_token, own_path_tenant
from ...edge.tokens import Grant, TokenTable
from ...edge.wire import WireError
from ...runtime.bound import AgentRuntime
from ..loading import fail
from .audit import audited, open_sink
from .options import ServeOptions
from .target import open_runtime

__all__ = [
    "OpenRuntimes",
    "check_tenant_factory",
    "close_sink",
    "foreign_token_gate",
    "serve_tenants",
]

JSONRPC_ROUTES = ("/mcp", "/a2a/jsonrpc")
"""The routes under a tenant's path that answer in JSON-RPC (MCP's and A2A's)."""

FOREIGN_TOKEN = WireError(
    403,
    "forbidden",
    "This bearer token is not one of this tenant's: send the token issued for the tenant "
    "named in the URL's path.",
)


def foreign_token_gate(tokens: TokenTable[Grant]) -> Callable[[Scope], Response | None]:
    """``refuse(scope)`` for ``serve --tenant-from path --token``: the 403 answer to a request
    under ``/{tenant}/`` whose bearer token is another tenant's
    (:func:`~foldkit_agent.edge.foreign_token`), in the route's shape (a JSON-RPC error on
    ``/mcp`` and ``/a2a/jsonrpc``, ``{"error": {...}}`` elsewhere), else ``None``.

    It runs before any adapter sees the request: one digest lookup, no body read, no MCP
    session created, nothing of the tenant opened.
    """

    def refuse(scope: Scope) -> Response | None:
        if not foreign_token(scope, tokens):
            return None
        jsonrpc = scope.get("method") == "POST" and route_path(scope) in JSONRPC_ROUTES
        return jsonrpc_or_plain(scope, Rules(jsonrpc=jsonrpc), FOREIGN_TOKEN)

    return refuse


def check_tenant_factory(loaded: object, reference: str) -> None:
    """Exit with a one-line error unless ``loaded`` can be called with a tenant."""
    if isinstance(loaded, AgentRuntime | AgentDefinition) or not callable(loaded):
        fail(
            f"--tenant-from needs {reference} to be a runtime factory taking the tenant, like "
            "`async def runtime(tenant: str)` under @asynccontextmanager"
        )
    try:
        inspect.signature(loaded).bind("tenant")
    except TypeError:
        fail(f"--tenant-from calls {reference}(tenant), and it takes no argument")
    except ValueError:  # no signature to read: try it at the first call
        pass


def close_sink(sink: AuditSink) -> None:
    """Close a sink opened only to check its spec."""
    close = getattr(sink, "close", None)
    if callable(close):
        close()


@asynccontextmanager
async def _tenant_runtime(
    loaded: Any, reference: str, tenant: str, audit: str | None, durable: bool, keys_ttl: float
) -> AsyncGenerator[AgentRuntime[Any, Any]]:
    sink = None if audit is None else open_sink(audit, durable=durable)
    async with (
        open_runtime(partial(loaded, tenant), reference) as rt,
        audited(rt, sink, keys_ttl, namespace=tenant),  # one tenant's keys answer only it
    ):
        yield rt


class OpenRuntimes(Sequence[AgentRuntime[Any, Any]]):
    """The tenants' runtimes open at the moment it is read: what ``serve`` drains on a signal."""

    def __init__(self, tenants: Tenants) -> None:
        self._tenants = tenants

    def __len__(self) -> int:
        return len(self._tenants.runtimes())

    @overload
    def __getitem__(self, index: int) -> AgentRuntime[Any, Any]: ...
    @overload
    def __getitem__(self, index: slice) -> Sequence[AgentRuntime[Any, Any]]: ...
    def __getitem__(self, index: int | slice) -> Any:
        return self._tenants.runtimes()[index]


def _report(tenant: str, why: str) -> None:
    print(f"tenant {tenant!r} closed ({why})", file=sys.stderr, flush=True)


@asynccontextmanager
async def serve_tenants(loaded: Any, options: ServeOptions) -> AsyncGenerator[Tenants]:
    """The running :class:`~foldkit_agent.edge.Tenants` of ``serve --tenant-from``; every
    runtime closed (and its audit flushed) on exit. Each close is reported on stderr.

    Args:
        loaded: what ``options.target`` names, called with each tenant.
        options: ``tenant_from``, ``tenant_idle``, ``max_tenants`` and the audit flags; with
            bearer tokens (``--token`` or ``--auth-issuer``), a tenant read off the path is
            served only to a caller whose token's subject is that tenant
            (:func:`~foldkit_agent.edge.own_path_tenant`); with ``claim:NAME``, the tenant is
            the claim of the issuer's verified token
            (:func:`~foldkit_agent.edge.tenants.claim_tenant`).
    """
    audit, durable, reference = options.audit, options.audit_durable, options.target

    def factory(tenant: str) -> Any:
        return _tenant_runtime(loaded, reference, tenant, audit, durable, options.idempotency_ttl)

    key = options.tenant_from
    # a path is served only to a caller authenticated as its tenant, by --token or the issuer
    mode: Any = own_path_tenant if key == "path" and options.bearer else key
    if options.tenant_claim is not None:
        mode = claim_tenant
    async with Tenants(
        factory,
        key=mode,
        idle=options.tenant_idle,
        max_tenants=options.max_tenants,
        on_close=_report,
    ) as tenants:
        yield tenants
