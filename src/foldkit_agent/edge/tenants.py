"""One runtime per tenant per process: :class:`Tenants`, a ``resolve(ctx)`` for every adapter.

A tenant is a key read off the request — the authenticated principal, or a path segment — and
each tenant gets its own application and bound runtime, made by ``factory(tenant)`` on the
tenant's first request and closed when the tenant has been idle for ``idle`` seconds, or when
``max_tenants`` are open and a new one arrives (the least recently used is closed first).
Closing a runtime leaves its factory's context manager, so whatever the factory set up — the
application, its store, the audit log and its sink — is shut down and flushed there.

Example:
    >>> tenants = Tenants(lambda tenant: run_app(tenant), key="principal", idle=600)
    >>> async with tenants:
    ...     app = http_app(tenants, token_verifier=verifier)   # or a2a_app, agent_surface...
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections import OrderedDict
from collections.abc import Callable, Mapping
from contextlib import AbstractAsyncContextManager
from typing import Any, Literal, cast

from ..runtime.bound import AgentRuntime
from .tokens import Grant, TokenTable

__all__ = [
    "GRANT_TENANT_KEY",
    "PATH_TENANT_KEY",
    "NoTenantError",
    "TenantKey",
    "Tenants",
    "TenantsFullError",
    "claim_tenant",
    "foreign_token",
    "hold_path_tenant",
    "own_path_tenant",
    "path_tenant",
    "principal_tenant",
]

_log = logging.getLogger("foldkit_agent.edge")

MAX_KEY = 200
"""Longest tenant key accepted (characters); a longer one is no tenant."""

GRANT_TENANT_KEY = "foldkit_agent.grant_tenant"
"""Where an A2A call context's ``state`` keeps the tenant its verified token's claim names
(:attr:`Grant.tenant <foldkit_agent.edge.Grant.tenant>`), for :func:`claim_tenant`."""

PATH_TENANT_KEY = "foldkit_agent.path_tenant"
"""Where :func:`hold_path_tenant` keeps the ``{tenant}`` of the mount a request came through
(in the ASGI scope, and in an A2A call context's ``state``)."""

Factory = Callable[[str], AbstractAsyncContextManager[Any]]
"""``factory(tenant)``: an async context manager yielding the tenant's bound runtime."""

TenantKey = Literal["principal", "path"] | Callable[[Any], "str | None"]
"""How :class:`Tenants` reads the tenant off a request: ``"principal"``
(:func:`principal_tenant`), ``"path"`` (:func:`path_tenant`) or ``key(ctx) -> str | None``."""


def _request_of(ctx: Any) -> Any:
    """The Starlette request behind ``ctx``: the surface's ``Request`` itself, or MCP's
    ``ctx.request`` (``None`` over stdio)."""
    if hasattr(ctx, "scope") and hasattr(ctx, "path_params"):
        return ctx
    request = getattr(ctx, "request", None)
    return request if hasattr(request, "scope") else None


def principal_tenant(ctx: Any) -> str | None:
    """The tenant is the authenticated caller: the verified token's subject.

    Reads only what the transport authenticated: over MCP/HTTP the bearer token the SDK verified
    (its ``subject``, else its ``client_id``); over A2A the authenticated ``user``; on the
    surface the Starlette ``request.user``. ``None`` when nobody was authenticated (stdio, an
    anonymous page), and the request is refused.
    """
    request = _request_of(ctx)
    user: Any = None
    if request is not None:
        user = request.scope.get("user")
    elif hasattr(ctx, "user"):  # A2A's ServerCallContext
        a2a_user: Any = ctx.user
        if getattr(a2a_user, "is_authenticated", False):
            name = getattr(a2a_user, "user_name", None)
            return name if isinstance(name, str) else None
        return None
    if user is None or not getattr(user, "is_authenticated", False):
        return None
    token = getattr(user, "access_token", None)  # MCP's AuthenticatedUser
    for value in (getattr(token, "subject", None), getattr(token, "client_id", None)):
        if isinstance(value, str) and value:
            return value
    try:
        identity = user.identity
    except NotImplementedError:
        identity = getattr(user, "display_name", None)
    return identity if isinstance(identity, str) else None


def hold_path_tenant(scope: Any) -> None:
    """Keep the ``{tenant}`` path parameter the request has now under :data:`PATH_TENANT_KEY`.

    Called where a request enters an adapter mounted under ``/{tenant}``, before its own
    routes run: a route further in may have a ``{tenant}`` of its own (A2A's HTTP+JSON binding
    serves ``/{tenant}/message:send``) that would replace the mount's in ``path_params``. The
    first value kept is never replaced.
    """
    if PATH_TENANT_KEY not in scope:
        value = scope.get("path_params", {}).get("tenant")
        scope[PATH_TENANT_KEY] = value if isinstance(value, str) and value else None


def _in_state(ctx: Any, key: str) -> Any:
    """What an A2A call context's ``state`` holds under ``key`` (``None``: nothing)."""
    state: Any = getattr(ctx, "state", None)
    return cast(Mapping[str, Any], state).get(key) if isinstance(state, Mapping) else None


def path_tenant(ctx: Any) -> str | None:
    """The tenant is the ``{tenant}`` path parameter of the mount the request came through
    (``/{tenant}/mcp``, ``/{tenant}/a2a/...``).

    Over A2A the call context carries it in ``state`` (the adapter's context builder copies
    it); A2A's own ``tenant`` field (a JSON-RPC body's ``tenant``, or the segment of
    ``/a2a/rest/{tenant}/...``) never selects a tenant: when it is set and differs from the
    path's, the request names no tenant and is refused. The path is not a credential: use it
    behind a proxy that authenticates the caller for that path, or together with per-tenant
    tokens (:func:`own_path_tenant`).
    """
    request = _request_of(ctx)
    if request is not None:
        held = request.scope.get(PATH_TENANT_KEY)
        value = held if held is not None else request.scope.get("path_params", {}).get("tenant")
    else:
        value = _in_state(ctx, PATH_TENANT_KEY)
        claimed = getattr(ctx, "tenant", "")
        if isinstance(claimed, str) and claimed and claimed != value:
            return None  # the body (or a route further in) names another tenant than the path
    return value if isinstance(value, str) and value else None


def foreign_token(scope: Any, tokens: TokenTable[Grant]) -> bool:
    """The request carries a known bearer token whose subject is not the path's tenant.

    One digest lookup, before anything else of the request is read: what ``serve
    --tenant-from path --token`` refuses at its edge, so a token of alice opens nothing
    (no MCP session, no A2A call) under ``/bob/``. An unknown or missing token is not
    foreign: the adapter's own authentication answers it.

    Example:
        >>> foreign_token(scope_of("/bob/mcp", "Bearer alice-token"), table)
        True
    """
    tenant = scope.get(PATH_TENANT_KEY) or scope.get("path_params", {}).get("tenant")
    header = None
    for name, value in scope.get("headers", ()):
        if name == b"authorization":
            header = value.decode("latin-1")
            break
    found = tokens.bearer(header)
    return found is not None and found.subject != tenant


def own_path_tenant(ctx: Any) -> str | None:
    """The tenant is the path's ``{tenant}``, served only to a caller authenticated as it.

    For tenants routed by path (a proxy hashing on ``/TENANT/...``) whose callers carry
    tokens: the path says where the request goes, the verified token's subject
    (:func:`principal_tenant`) must be that tenant, so one tenant's token never reaches
    another tenant's Model. ``serve --tenant-from path`` with ``--token`` uses it.

    Example:
        >>> Tenants(runtime, key=own_path_tenant)  # /alice/mcp with a token of alice
    """
    tenant = path_tenant(ctx)
    return tenant if tenant is not None and principal_tenant(ctx) == tenant else None


def _claimed(ctx: Any) -> str | None:
    """The tenant the verified token's claim names: MCP's ``AccessToken.claims["tenant"]``
    (:class:`~foldkit_agent.adapters.mcp.GrantVerifier` puts it there), A2A's call context
    ``state[GRANT_TENANT_KEY]`` (its context builder copies it), the surface's user's grant."""
    request = _request_of(ctx)
    if request is None:
        value = _in_state(ctx, GRANT_TENANT_KEY)
    else:
        user: Any = request.scope.get("user")
        claims: Any = getattr(getattr(user, "access_token", None), "claims", None)
        grant: Any = getattr(user, "grant", None)
        value = (
            cast(Mapping[str, Any], claims).get("tenant")
            if isinstance(claims, Mapping)
            else getattr(grant, "tenant", None)
        )
    return value if isinstance(value, str) and value else None


def claim_tenant(ctx: Any) -> str | None:
    """The tenant is what the caller's verified token names in its tenant claim
    (``OAuthOptions(tenant_claim="org")``, ``serve --tenant-from claim:org``).

    Where the request also names a tenant — the ``{tenant}`` of the mount it came through, or
    A2A's own ``tenant`` field — the two must be the same, else the request names no tenant
    and is refused: a token of one organisation never reaches another's Model by its URL.

    Example:
        >>> Tenants(runtime, key=claim_tenant)  # /acme/mcp with a token whose org is acme
    """
    named = _claimed(ctx)
    if named is None:
        return None
    request = _request_of(ctx)
    if request is not None:
        others = [request.scope.get(PATH_TENANT_KEY), request.scope.get("path_params", {})]
        others[1] = cast(Mapping[str, Any], others[1]).get("tenant")
    else:
        others = [_in_state(ctx, PATH_TENANT_KEY), getattr(ctx, "tenant", None)]
    for other in others:
        if isinstance(other, str) and other and other != named:
            return None
    return named


class NoTenantError(Exception):
    """The request names no tenant (nobody authenticated, or no tenant in its path)."""


class TenantsFullError(Exception):
    """``max_tenants`` runtimes are open and every one has a call in flight."""


class _Slot:
    """One tenant's runtime: the task that runs its factory, and when it was last used."""

    __slots__ = ("last_used", "ready", "stop", "task")

    def __init__(self, now: float) -> None:
        self.last_used = now
        loop = asyncio.get_running_loop()
        self.ready: asyncio.Future[AgentRuntime[Any, Any]] = loop.create_future()
        self.stop = asyncio.Event()
        self.task: asyncio.Task[None] | None = None


def _quiet(slot: _Slot) -> bool:
    """Open, and no call of its in flight: the slot may be closed without cutting a call."""
    if not slot.ready.done() or slot.ready.exception() is not None:
        return False
    return slot.ready.result().pending() == 0


class Tenants:
    """``resolve(ctx) -> AgentRuntime`` keyed by tenant, with one runtime per tenant.

    Pass it wherever an adapter takes a runtime or a ``resolve`` (``http_app``, ``mcp_server``,
    ``a2a_app``, ``agent_surface``, ``native_app``), and run it: ``async with tenants:`` (in
    your app's lifespan) watches for idle tenants and closes every runtime on exit.
    ``foldkit-agent serve MODULE:factory --tenant-from principal|path`` does both.

    Args:
        factory: ``factory(tenant)`` returns an async context manager yielding the tenant's
            bound runtime (``examples.todo:runtime`` takes the tenant as its one argument). It
            is entered and left in a task of its own, so it may use task groups.
        key: how to read the tenant off a request: ``"principal"`` (the authenticated caller;
            the default), ``"path"`` (the route's ``{tenant}`` parameter) or ``key(ctx)``
            returning the tenant or ``None`` (the request is then refused).
        idle: seconds without a request, and without a call in flight
            (``runtime.pending()``), after which a tenant's runtime is closed.
        max_tenants: how many runtimes this process holds at most; opening one more closes
            the least recently used one with no call in flight first, and when every one
            has a call in flight the new tenant is refused until one is free.
        on_close: ``on_close(tenant, why)`` after a tenant's runtime closed; ``why`` is
            ``"idle"``, ``"max_tenants"``, ``"closed"`` (:meth:`close`) or ``"shutdown"``.

    Raises:
        ValueError: ``idle`` is not a positive number or ``max_tenants`` is below 1.

    A request whose key is ``None``, or whose factory raises, fails as the adapter's
    "not available" answer (:class:`~foldkit_agent.edge.RuntimeUnavailableError`, logged);
    the tenant's name and the factory's error are never shown to the caller. A tenant's next
    runtime is made only once its previous one finished closing, so it reads what the old one
    saved.

    Example:
        >>> @asynccontextmanager
        ... async def runtime(tenant: str):
        ...     async with Program(init=load(tenant), update=update).run() as running:
        ...         yield TodoAgent.bind(definition=AppAgent, host=running.host)
        >>> tenants = Tenants(runtime, key="principal", idle=300, max_tenants=100)
        >>> async with tenants:
        ...     rt = await tenants.get("alice")
    """

    def __init__(
        self,
        factory: Factory,
        *,
        key: TenantKey = "principal",
        idle: float = 600.0,
        max_tenants: int = 100,
        on_close: Callable[[str, str], None] | None = None,
    ) -> None:
        if not idle > 0:
            raise ValueError(f"idle must be a positive number of seconds, got {idle!r}")
        if max_tenants < 1:
            raise ValueError(f"max_tenants must be at least 1, got {max_tenants!r}")
        self._factory = factory
        self._key: Callable[[Any], str | None] = (
            principal_tenant if key == "principal" else path_tenant if key == "path" else key
        )
        self.idle = float(idle)
        self.max_tenants = max_tenants
        self._on_close = on_close
        self._slots: OrderedDict[str, _Slot] = OrderedDict()  # least recently used first
        self._closing: dict[str, asyncio.Task[None]] = {}
        self._reaper: asyncio.Task[None] | None = None
        self._wake = asyncio.Event()
        self._running = False

    # -- running --------------------------------------------------------------------------------

    async def __aenter__(self) -> Tenants:
        self._running = True
        self._wake = asyncio.Event()
        self._reaper = asyncio.get_running_loop().create_task(self._reap())
        return self

    async def __aexit__(self, *exc: object) -> None:
        self._running = False
        if self._reaper is not None:
            self._reaper.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._reaper
        for tenant in list(self._slots):
            self._evict(tenant, "shutdown")
        if self._closing:
            await asyncio.gather(*self._closing.values(), return_exceptions=True)

    # -- resolving ------------------------------------------------------------------------------

    async def __call__(self, ctx: Any) -> AgentRuntime[Any, Any]:
        """The runtime of the tenant ``ctx`` names (what an adapter's ``resolve`` calls).

        Raises:
            NoTenantError: ``ctx`` names no tenant (the adapter answers "not available").
        """
        tenant = self._key(ctx)
        if not isinstance(tenant, str) or not tenant or len(tenant) > MAX_KEY:
            raise NoTenantError("this request names no tenant")
        return await self.get(tenant)

    async def get(self, tenant: str) -> AgentRuntime[Any, Any]:
        """``tenant``'s runtime, made by the factory on first use (concurrent first calls
        share one); marks the tenant used now.

        Raises:
            RuntimeError: the tenants are not running (``async with tenants`` first).
            Exception: whatever the factory raised (the next call tries again).
        """
        if not self._running:
            raise RuntimeError("Tenants is not running: enter it with `async with tenants:`")
        loop = asyncio.get_running_loop()
        slot = self._slots.get(tenant)
        if slot is None:
            while len(self._slots) >= self.max_tenants:
                free = next((t for t, s in self._slots.items() if _quiet(s)), None)
                if free is None:
                    raise TenantsFullError(f"all {self.max_tenants} tenants have calls in flight")
                self._evict(free, "max_tenants")
            slot = self._slots[tenant] = _Slot(loop.time())
            slot.task = loop.create_task(self._run(tenant, slot, self._closing.get(tenant)))
            self._wake.set()
        else:
            slot.last_used = loop.time()
            self._slots.move_to_end(tenant)
        return await asyncio.shield(slot.ready)

    def open(self) -> list[str]:
        """The tenants with a runtime now, least recently used first."""
        return list(self._slots)

    def runtimes(self) -> list[AgentRuntime[Any, Any]]:
        """The runtimes open now (what a drain at shutdown waits on), least recently used
        first; one still being made is not among them."""
        ready = [s.ready for s in self._slots.values() if s.ready.done()]
        return [f.result() for f in ready if f.exception() is None]

    async def close(self, tenant: str) -> bool:
        """Close ``tenant``'s runtime now (its factory's context exits); ``False`` if none."""
        if tenant not in self._slots:
            return False
        self._evict(tenant, "closed")
        closing = self._closing.get(tenant)
        if closing is not None:
            await asyncio.gather(closing, return_exceptions=True)
        return True

    # -- internals ------------------------------------------------------------------------------

    async def _run(self, tenant: str, slot: _Slot, before: asyncio.Task[None] | None) -> None:
        if before is not None:  # the tenant's previous runtime finishes closing first
            await asyncio.gather(before, return_exceptions=True)
        try:
            async with self._factory(tenant) as rt:
                if not isinstance(rt, AgentRuntime):
                    raise TypeError(f"the tenant factory yielded a {type(rt).__name__}")
                slot.ready.set_result(cast("AgentRuntime[Any, Any]", rt))
                await slot.stop.wait()
        except BaseException as exc:
            if not slot.ready.done():
                _log.warning("opening tenant %r failed", tenant, exc_info=True)
                slot.ready.set_exception(exc if isinstance(exc, Exception) else RuntimeError())
                slot.ready.exception()  # retrieved: no "never retrieved" warning
                if self._slots.get(tenant) is slot:
                    del self._slots[tenant]
            else:
                _log.warning("closing tenant %r failed", tenant, exc_info=True)
            if not isinstance(exc, Exception):
                raise

    def _evict(self, tenant: str, why: str) -> None:
        slot = self._slots.pop(tenant, None)
        if slot is None or slot.task is None:
            return
        slot.stop.set()
        task = slot.task
        self._closing[tenant] = task

        def closed(_: asyncio.Task[None]) -> None:
            if self._closing.get(tenant) is task:
                del self._closing[tenant]
            _log.info("tenant %r closed (%s)", tenant, why)
            if self._on_close is not None:
                try:
                    self._on_close(tenant, why)
                except Exception:
                    _log.exception("on_close raised")

        task.add_done_callback(closed)

    async def _reap(self) -> None:
        loop = asyncio.get_running_loop()
        while True:
            self._wake.clear()
            now = loop.time()
            for tenant, slot in list(self._slots.items()):
                if now - slot.last_used < self.idle:
                    continue
                if _quiet(slot):
                    self._evict(tenant, "idle")
                else:  # still opening, or a call is in flight: idle from now on
                    slot.last_used = now
            if not self._slots:
                await self._wake.wait()
                continue
            oldest = min(s.last_used for s in self._slots.values())
            delay = max(oldest + self.idle - loop.time(), 0.01)
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(delay):
                    await self._wake.wait()
