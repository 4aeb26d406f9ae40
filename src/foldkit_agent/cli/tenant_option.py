"""``serve --tenant-from principal|path``: one runtime per tenant, made by ``MODULE:ATTR(tenant)``.

The runtimes are held by one :class:`~foldkit_agent.edge.Tenants`, which every HTTP adapter
of the server takes as its ``resolve``. With ``--audit``, each tenant's runtime writes to its
own sink on the same store, flushed and closed when the tenant's runtime closes.
"""

from __future__ import annotations

import inspect
import sys
from collections.abc import AsyncGenerator, Sequence
from contextlib import asynccontextmanager
from functools import partial
from typing import Any, overload

from ..audit.log import AuditSink
from ..contract.declare import AgentDefinition
from ..edge.tenants import Tenants, own_path_tenant
from ..runtime.bound import AgentRuntime
from .audit_option import audited, open_sink
from .loading import fail

__all__ = [
    "OpenRuntimes",
    "check_tenant_factory",
    "check_tenant_options",
    "close_sink",
    "serve_tenants",
]

TENANT_MODES = ("principal", "path")
"""``--tenant-from`` values."""


def check_tenant_options(
    mode: str, idle: float, max_tenants: int, mcp: str | None, webmcp: bool, native: bool, a2a: bool
) -> None:
    """Exit with a one-line error unless the ``--tenant-from`` options make sense together."""
    if mode not in TENANT_MODES:
        fail(f"--tenant-from takes {' or '.join(TENANT_MODES)}, got {mode!r}")
    if mcp == "stdio":
        fail("--tenant-from serves many callers over HTTP; a --mcp stdio server has one user")
    if webmcp or native or a2a or mcp != "http":
        # A2A's public card is fetched with no principal, and the page and native endpoint
        # carry no tenant: those adapters take a Tenants in your own app for now
        fail("--tenant-from applies to --mcp http only (pass a Tenants to a2a_app yourself)")
    if not idle > 0 or idle == float("inf"):
        fail(f"--tenant-idle must be a positive number of seconds, got {idle}")
    if max_tenants < 1:
        fail(f"--max-tenants must be at least 1, got {max_tenants}")


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
    loaded: Any, reference: str, tenant: str, audit: str | None, durable: bool
) -> AsyncGenerator[AgentRuntime[Any, Any]]:
    from .serve import open_runtime

    sink = None if audit is None else open_sink(audit, durable=durable)
    async with open_runtime(partial(loaded, tenant), reference) as rt, audited(rt, sink):
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
async def serve_tenants(
    loaded: Any,
    reference: str,
    *,
    key: str,
    idle: float,
    max_tenants: int,
    audit: str | None,
    audit_durable: bool,
    verified: bool = False,
) -> AsyncGenerator[Tenants]:
    """The running :class:`~foldkit_agent.edge.Tenants` of ``serve --tenant-from``; every
    runtime closed (and its audit flushed) on exit. Each close is reported on stderr.

    With ``verified`` (``--token`` given), a tenant read off the path is served only to a
    caller whose token's subject is that tenant (:func:`~foldkit_agent.edge.own_path_tenant`).
    """

    def factory(tenant: str) -> Any:
        return _tenant_runtime(loaded, reference, tenant, audit, audit_durable)

    mode: Any = own_path_tenant if key == "path" and verified else key
    async with Tenants(
        factory, key=mode, idle=idle, max_tenants=max_tenants, on_close=_report
    ) as tenants:
        yield tenants
