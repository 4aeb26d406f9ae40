"""What every network adapter shares before a request reaches a runtime (DESIGN §9).

* :mod:`.guard` — :class:`EdgeGuard`, the five steps every HTTP route passes: Host, Origin,
  authentication, content type and length, strict JSON.
* :mod:`.hosts` — the one Host/Origin policy (:class:`HostPolicy`).
* :mod:`.tokens` — the one constant-time bearer-token table (:class:`TokenTable`).
* :mod:`.auth` — step 3 from a Starlette authentication backend.
* :mod:`.limits` — reading a body within a limit; draining a refused one.
* :mod:`.options` — what every HTTP adapter of one server shares (:class:`HttpOptions`).
* :mod:`.connections` — the HTTP server's (uvicorn) read timeouts, connection cap, head caps.
* :mod:`.wire` — the one strict JSON parser (:func:`loads_strict`) and JSON-RPC shape checks.
* :mod:`.resolve` — the one way to find the runtime for a request; auditing a refusal.
* :mod:`.tenants` — one runtime per tenant per process (:class:`Tenants`, a ``resolve``).
* :mod:`.activity` — who did what on a runtime, for a person to watch (:class:`ActivityFeed`).
* :mod:`.startup` — freezing what start-up allocated, so the collector never rescans it.
* :mod:`.calls` — one call in flight for every transport (:class:`CallsInFlight`): signal,
  approver, start, disconnect, progress (:mod:`.progress`), waiting for a person
  (:mod:`.approvals`), settle, and the per-caller caps on calls in flight and waiting.
* :mod:`.serving` — a uvicorn server that drains its runtimes on SIGTERM and SIGINT.
"""

from __future__ import annotations

from ..errors import needs_extra

with needs_extra(__name__):  # starlette and anyio come with the web, mcp, a2a and cli extras
    from . import wire
    from .activity import ActivityFeed, ActivityItem
    from .auth import backend_step
    from .callers import CallerLimits
    from .calls import PARK, CallRequest, CallsInFlight
    from .guard import (
        BODY_KEY,
        HOST_REFUSAL,
        HOST_STATUS,
        Authenticate,
        EdgeGuard,
        Rules,
        jsonrpc_or_plain,
        plain_error,
        route_path,
    )
    from .hosts import LOOPBACK_HOSTS, HostPolicy, parse_host, parse_origin
    from .limits import PREAUTH_DRAIN
    from .options import DEFAULT_HTTP_OPTIONS, HttpOptions
    from .resolve import (
        RuntimeUnavailableError,
        audit_refusal,
        check_target,
        resolve_runtime,
        static_runtime,
    )
    from .serving import draining_server
    from .startup import freeze_startup, frozen_lifespan
    from .tenants import (
        NoTenantError,
        TenantKey,
        Tenants,
        TenantsFullError,
        claim_tenant,
        own_path_tenant,
        path_tenant,
        principal_tenant,
    )
    from .tokens import Grant, TokenTable, bearer_token
    from .wire import *  # noqa: F403

# The strict parser's names are re-exported by wire's own __all__ (as the front door does),
# so the list is kept in one place.
__all__ = [
    "BODY_KEY",
    "DEFAULT_HTTP_OPTIONS",
    "HOST_REFUSAL",
    "HOST_STATUS",
    "LOOPBACK_HOSTS",
    "PARK",
    "PREAUTH_DRAIN",
    "ActivityFeed",
    "ActivityItem",
    "Authenticate",
    "CallRequest",
    "CallerLimits",
    "CallsInFlight",
    "EdgeGuard",
    "Grant",
    "HostPolicy",
    "HttpOptions",
    "NoTenantError",
    "Rules",
    "RuntimeUnavailableError",
    "TenantKey",
    "Tenants",
    "TenantsFullError",
    "TokenTable",
    "audit_refusal",
    "backend_step",
    "bearer_token",
    "check_target",
    "claim_tenant",
    "draining_server",
    "freeze_startup",
    "frozen_lifespan",
    "jsonrpc_or_plain",
    "own_path_tenant",
    "parse_host",
    "parse_origin",
    "path_tenant",
    "plain_error",
    "principal_tenant",
    "resolve_runtime",
    "route_path",
    "static_runtime",
]
__all__ += wire.__all__
