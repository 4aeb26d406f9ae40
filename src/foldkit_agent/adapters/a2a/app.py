"""A2A adapter: every exposed capability becomes an A2A skill, served with ``a2a-sdk`` 1.x.

:func:`a2a_app` returns a Starlette application that speaks A2A 1.0 over JSON-RPC and
HTTP+JSON and serves the Agent Card at ``/.well-known/agent-card.json``. It translates only:
the bound runtime resolves, checks, authorizes, dispatches and audits every call.

Routes (absolute paths; mount the app at the root of its origin)::

    GET  /.well-known/agent-card.json       public Agent Card (every capability as a skill)
    POST /a2a/jsonrpc                       JSON-RPC binding (SendMessage, GetTask, ...)
    *    /a2a/rest/...                      HTTP+JSON binding (POST /a2a/rest/message:send, ...)

Calling a skill. A2A has no field that names a skill, so this package defines an extension,
:data:`EXTENSION_URI`. A call is a ``SendMessage`` whose request metadata (or message metadata)
holds ``{EXTENSION_URI: {"skill": "<capability name>"}}`` and whose message carries the input
as one data part (no data part means ``{}``). The card lists the extension in
``capabilities.extensions``; its ``params`` hold ``{"skills": {name: {"inputSchema": ...}}}``.

Outcome mapping (from :func:`foldkit_agent.runtime.outcome.summarize`):

=================================  ==========================================================
outcome                            A2A result
=================================  ==========================================================
success (dispatched / completed)   task ``COMPLETED``, one data artifact ``result``
refusal (unavailable, invalid      task ``REJECTED``; status message: a text part for the
input, unauthorized, ...)          agent and a data part with the error JSON
no runtime for the caller (no      task ``REJECTED``; "The application for this caller is
tenant, another tenant's, all      not available right now." (data part ``status:
tenants busy)                      "unavailable"``)
caller at its cap of calls         task ``REJECTED``; text naming the cap, data part
                                   ``{"code": "caller-limit"|"server-limit", "message"}``
completion failure                 task ``FAILED``, same message shape
timeout / delivery unknown         task ``FAILED``; the text says the outcome is unknown
cancelled (``CancelTask``)         task ``CANCELED``
no skill / unknown skill           JSON-RPC ``-32602`` (HTTP+JSON: 400) invalid params
anything unexpected                task ``FAILED`` with a generic text (never exception text)
=================================  ==========================================================
"""

from __future__ import annotations

import logging
from collections.abc import (
    AsyncGenerator,
    Callable,
    Sequence,
)
from contextlib import asynccontextmanager
from typing import Any
from urllib.parse import quote, urlsplit

from a2a.server.context import ServerCallContext
from a2a.server.request_handlers.response_helpers import agent_card_to_dict
from a2a.server.routes import create_jsonrpc_routes, create_rest_routes
from a2a.server.tasks import TaskStore
from a2a.types import (
    AgentCard,
    AgentSkill,
    HTTPAuthSecurityScheme,
    SecurityScheme,
)
from a2a.utils.errors import (
    InternalError,
)
from starlette.applications import Starlette
from starlette.authentication import (
    AuthenticationBackend,
)
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import BaseRoute, Route
from starlette.types import ASGIApp, Receive, Scope, Send

from ...contract.declare import Capability
from ...edge.auth import bearer_step
from ...edge.calls import CallsInFlight
from ...edge.guard import EdgeGuard, Routes, Rules
from ...edge.hosts import HostPolicy
from ...edge.options import DEFAULT_HTTP_OPTIONS, HttpOptions
from ...edge.resolve import (
    RuntimeUnavailableError,
    check_target,
    resolve_runtime,
    static_runtime,
)
from ...edge.scopes import scope_table, scopes_supported
from ...edge.tenants import PATH_TENANT_KEY, NoTenantError, hold_path_tenant
from ...runtime.bound import AgentRuntime
from .auth import (
    ContextBuilder,
    VerifiedBearerBackend,
    authenticate_step,
    render_refusal,
)
from .card import (
    CARD_PATH,
    EXTENSION_URI,
    JSONRPC_PATH,
    REST_PREFIX,
    build_agent_card,
    extension_params,
    is_public_card,
    oauth_scheme,
)
from .errors import (
    OwnErrorText,
    install_log_filter,
    ours,
)
from .executor import CANCEL_GRACE, CapabilityExecutor
from .handler import Handler, settle
from .numbers import IntegerAnswers
from .tasks import BoundedTaskStore

_log = logging.getLogger("foldkit_agent.adapters.a2a")

__all__ = ["DEFAULT_MAX_BODY", "RuntimeTarget", "a2a_app"]


DEFAULT_MAX_BODY = 1024 * 1024
"""Largest request body :func:`a2a_app` accepts, in bytes (1 MiB); larger is HTTP 413."""


RuntimeTarget = AgentRuntime[Any, Any] | Callable[[ServerCallContext], Any]
"""An :class:`AgentRuntime`, or ``resolve(call_context) -> AgentRuntime`` (sync or async)."""


CARD_UNAVAILABLE = "The agent card is not available right now."
CARD_NEEDS_TENANT = (
    "This agent card is served per tenant, and this request names none: send the bearer "
    "token of your tenant (Authorization: Bearer <token>)."
)

TENANT_FIELD = "{tenant}"
"""The placeholder of ``base_url`` replaced by the tenant of the path a card is asked through."""


class HoldPathTenant:
    """ASGI middleware keeping the tenant of the mount a request came through
    (:func:`~foldkit_agent.edge.tenants.hold_path_tenant`) before the SDK's routes, one of
    which (``/a2a/rest/{tenant}/...``) has a ``{tenant}`` of its own."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] in ("http", "websocket"):
            hold_path_tenant(scope)
        await self.app(scope, receive, send)


# the card is a document; JSON-RPC at its path; every other path is the REST binding
_ROUTES = Routes(
    {CARD_PATH: Rules(origin="api", body=False), JSONRPC_PATH: Rules(origin="api", jsonrpc=True)},
    Rules(origin="api"),
)


def a2a_app(
    target: RuntimeTarget,
    *,
    name: str,
    version: str,
    base_url: str,
    options: HttpOptions = DEFAULT_HTTP_OPTIONS,
    authentication: AuthenticationBackend | None = None,
    description: str | None = None,
    security_scheme: SecurityScheme | None = None,
    task_store: TaskStore | None = None,
    calls: CallsInFlight | None = None,
) -> Starlette:
    """Serve a bound runtime over A2A 1.0 (JSON-RPC and HTTP+JSON) as a Starlette app.

    Args:
        target: an :class:`~foldkit_agent.runtime.AgentRuntime`, or ``resolve(call_context)``
            (``a2a.server.context.ServerCallContext``; sync or async) returning the runtime for
            that caller, so one server can host an application instance per user or tenant.
        name, version: the Agent Card's name and version.
        base_url: the public origin the app is reachable at (``http://127.0.0.1:8000``); the
            card's interface URLs are ``{base_url}/a2a/jsonrpc`` and ``{base_url}/a2a/rest``.
            Served under a tenant's path (mounted at ``/{tenant}``, as ``serve --tenant-from
            path`` does), it may hold ``{tenant}`` (``http://proxy:8080/{tenant}``): each
            card, public or extended, names the URLs of the tenant it was asked through.
        authentication: a Starlette ``AuthenticationBackend``. Its user (``identity`` or
            ``display_name``) and ``AuthCredentials.scopes`` reach the runtime's principal
            provider as :class:`A2ACaller` on ``Invocation.credentials``; unauthenticated calls
            carry ``None`` and are refused by any capability whose ``authorize`` hook requires
            a principal (the SDK does not enforce the card's security itself). A backend that
            raises ``AuthenticationError`` gets a 401 with a generic body. A backend whose
            ``required`` attribute is true (``BearerTokenBackend(..., required=True)``)
            refuses anonymous requests itself; the card then lists the scheme in its
            top-level ``securityRequirements``.
        description: the card's description.
        security_scheme: the scheme the card declares when ``authentication`` is set
            (default: HTTP bearer).
        options: what every HTTP adapter of the server shares
            (:class:`~foldkit_agent.edge.HttpOptions`), read here as:

            * ``allowed_hosts``: more host names (or IP addresses) the ``Host`` (and any
              ``Origin``) header may name, any port, against DNS rebinding (421/403
              otherwise); the host of ``base_url`` and the loopback names are always
              accepted. ``["*"]`` accepts any well-formed host and origin, which is safe only
              behind a proxy that checks ``Host``.
            * ``max_body``: the largest request body in bytes (default 1 MiB); larger is
              HTTP 413. Every ``POST`` must be JSON (else 415) and parse strictly
              (:func:`foldkit_agent.edge.wire.loads_strict`; else 400), with at most
              ``max_items`` values, before the SDK reads it.
            * ``progress_interval``: seconds between ``WORKING`` status updates while a call
              waits on its completion (default 5; DESIGN §10); streaming callers see them as
              ``statusUpdate`` events, each with a text part and ``{"waited_seconds",
              "timeout_seconds"}``.
            * ``caps.tasks``, ``caps.tasks_per_caller``, ``caps.task_max_age``: the bounds
              of the default task store; the call caps, of the default ``calls``.
            * ``tokens``, ``oauth``: when set (and no ``authentication``), the bearer tokens
              required of every request but the public card, checked by the one verifier
              every adapter of the server shares
              (``VerifiedBearerBackend(options, required=True)``: the static table,
              then the issuer). With ``oauth`` (and no ``security_scheme``) the card declares
              the issuer: OAuth 2.0's authorization code flow with PKCE at the endpoints its
              metadata names, with the scopes of ``oauth.options.scopes`` and of the
              capabilities listed (each skill requiring its capability's ``scopes=``), or
              OpenID Connect's discovery URL while the metadata cannot be fetched.
        task_store: where tasks are kept (an ``a2a.server.tasks.TaskStore``); default a
            :class:`~foldkit_agent.adapters.a2a.tasks.BoundedTaskStore` within
            ``options.caps`` (10,000 tasks, 1,000 per caller, an hour since the last update;
            finished tasks evicted first, and without the request's input).
            :class:`~foldkit_agent.adapters.a2a.SqlTaskStore` keeps them in SQLite or
            PostgreSQL instead, with the same bounds (the SDK's ``DatabaseTaskStore``).
        calls: the server's calls in flight
            (:class:`~foldkit_agent.edge.calls.CallsInFlight`), whose per-caller caps count
            this adapter's calls with every other transport's (share one among every adapter
            of a server); default one of its own within ``options.caps``. A caller (its
            authenticated subject; all anonymous callers together count as one) past its share
            of calls in flight gets a ``REJECTED`` task whose status message names the cap,
            audited as refused; a call past the cap on calls waiting for a person
            (``INPUT_REQUIRED`` tasks, MCP elicitations, page approvals together) is
            ``REJECTED`` with a text naming that cap, nothing sent.

    Every request passes :class:`~foldkit_agent.edge.EdgeGuard` first: Host, Origin,
    ``authentication`` (before any byte of the body is read), content type and length, strict
    JSON; a refusal is answered there and reaches neither the SDK nor the runtime.

    Returns:
        A Starlette app with the routes listed in this module's docs, all at absolute paths
        (the card must sit at the root of the origin). Its lifespan drains running tasks on
        shutdown. To serve it next to other apps, mount it last at the root
        (``Mount("", app=a2a)``) and enter ``a2a.router.lifespan_context(a2a)`` from the
        parent's lifespan (Starlette does not run a mounted app's lifespan).
        ``app.state.a2a_handler`` is the SDK request handler, ``app.state.a2a_task_store``
        the task store.

    Protocol (A2A 1.0, spec sections "Agent Card", "Extensions", "Task lifecycle"): see the
    module docs for the skill extension and the outcome mapping. ``GetExtendedAgentCard`` is
    per caller and lists only the capabilities available right now.

    Every error answer (JSON-RPC error, HTTP+JSON error body, streamed error event) carries
    text written by this adapter, never the SDK's or a parser's; a client's mistakes are
    logged by the SDK as one DEBUG line without a traceback.

    Raises:
        TypeError: ``target`` is neither a runtime nor a callable.
        ValueError: an ``options.allowed_hosts`` entry is not a host name.

    Example:
        >>> async with examples.todo.runtime() as rt:
        ...     app = a2a_app(rt, name="todo", version="1.0", base_url="http://127.0.0.1:8000",
        ...                   options=HttpOptions(caps=CallerLimits(tasks_per_caller=100)))
        ...     await uvicorn.Server(uvicorn.Config(app, port=8000)).serve()
    """
    check_target(target, "a2a_app")
    limits = options.caps
    hosts = HostPolicy(options.allowed_hosts, also=[urlsplit(base_url).hostname or "127.0.0.1"])
    # the issuer's own scheme on the card, unless the caller brought its own backend or scheme
    oauth = options.oauth if authentication is None and security_scheme is None else None
    own = authentication is None and options.bearer_required
    if own:
        authentication = VerifiedBearerBackend(options, required=True)

    async def resolve(ctx: ServerCallContext) -> AgentRuntime[Any, Any]:
        return await resolve_runtime(target, ctx)

    install_log_filter()
    scheme = security_scheme
    if oauth is not None:
        scheme = oauth_scheme(oauth.options.issuer, None, oauth.options.scopes)
    elif authentication is not None and scheme is None:
        scheme = SecurityScheme(
            http_auth_security_scheme=HTTPAuthSecurityScheme(
                scheme="bearer", description="Credentials checked by the server's authentication."
            )
        )
    if authentication is None:
        scheme = None
    required = bool(getattr(authentication, "required", False))
    bearer = oauth is not None or (
        scheme is not None and scheme.http_auth_security_scheme.scheme.lower() == "bearer"
    )

    async def scheme_for(caps: Sequence[Capability]) -> SecurityScheme | None:
        """The card's scheme: the issuer's endpoints once its metadata is known."""
        if oauth is None:
            return scheme
        listed = scopes_supported(scope_table(caps), oauth.options.scopes)
        return oauth_scheme(oauth.options.issuer, await oauth.issuer_metadata(), listed)

    def card_for(
        caps: Sequence[Capability], tenant: Any = None, declared: SecurityScheme | None = scheme
    ) -> AgentCard:
        base = base_url
        if TENANT_FIELD in base_url:
            if not isinstance(tenant, str) or not tenant:
                raise ValueError("the card of a tenant's path was asked for outside one")
            base = base_url.replace(TENANT_FIELD, quote(tenant, safe=""))
        return build_agent_card(
            caps,
            name=name,
            version=version,
            base_url=base,
            description=description,
            security_scheme=declared,
            security_required=required,
        )

    fixed = static_runtime(target)
    base_card = card_for(fixed.messages.all() if fixed is not None else [], "-")
    if fixed is None:
        # The SDK only reads this card's capabilities: every card a caller gets is built for
        # its runtime (the public route below, the extended card's modifier). A skill keeps it
        # spec-complete, so the SDK does not warn about it at start.
        base_card.skills.append(
            AgentSkill(
                id="per-caller",
                name="Per caller",
                description="The skills are listed on the card each caller fetches.",
                tags=["per-caller"],
            )
        )

    async def extended(_card: AgentCard, ctx: ServerCallContext) -> AgentCard:
        try:
            rt = await resolve(ctx)
            caps = rt.messages.available()
            return card_for(caps, ctx.state.get(PATH_TENANT_KEY), await scheme_for(caps))
        except Exception:
            _log.exception("building the extended agent card failed")
            failed = InternalError(message="The agent card could not be built right now.")
            raise ours(ctx, failed) from None

    if task_store is None:
        task_store = BoundedTaskStore(
            max_tasks=limits.tasks,
            max_per_caller=limits.tasks_per_caller,
            max_age=limits.task_max_age,
        )
    executor = CapabilityExecutor(
        resolve,
        task_store,
        options.progress_interval,
        calls=CallsInFlight(limits) if calls is None else calls,
    )
    handler = Handler(
        resolve=resolve,
        agent_executor=executor,
        task_store=task_store,
        agent_card=base_card,
        extended_agent_card=base_card,
        extended_card_modifier=extended,
    )
    builder = ContextBuilder()

    async def public_card(request: Request) -> Response:
        try:
            rt = fixed if fixed is not None else await resolve(builder.build(request))
            caps = rt.messages.all()
            card = card_for(caps, request.scope.get(PATH_TENANT_KEY), await scheme_for(caps))
            body = agent_card_to_dict(card)
        except RuntimeUnavailableError as err:
            if isinstance(err.__cause__, NoTenantError):  # no tenant: nobody to build it for
                return JSONResponse({"error": CARD_NEEDS_TENANT}, status_code=401)
            return JSONResponse({"error": CARD_UNAVAILABLE}, status_code=503)
        except Exception:
            _log.exception("building the public agent card failed")
            return JSONResponse({"error": CARD_UNAVAILABLE}, status_code=503)
        # protobuf carries numbers as doubles; publish the schemas exactly as exported.
        for ext in body.get("capabilities", {}).get("extensions", []):
            if ext.get("uri") == EXTENSION_URI:
                ext["params"] = extension_params(caps)
        return JSONResponse(body)

    routes: list[BaseRoute] = [
        Route(CARD_PATH, public_card, methods=["GET"]),
        *create_jsonrpc_routes(handler, rpc_url=JSONRPC_PATH, context_builder=builder),
        *create_rest_routes(handler, context_builder=builder, path_prefix=REST_PREFIX),
    ]
    step = (
        None
        if authentication is None
        else bearer_step(options, public=is_public_card)  # RFC 6750's two 401s
        if own
        else authenticate_step(authentication, "Bearer" if bearer else None)
    )
    middleware: list[Middleware] = [
        Middleware(HoldPathTenant),
        Middleware(
            EdgeGuard,
            hosts=hosts,
            classify=_ROUTES,
            max_body=options.body_limit(DEFAULT_MAX_BODY),
            render=render_refusal,
            authenticate=step,
            max_items=options.max_items,
            rates=options.rates,
        ),
        Middleware(OwnErrorText, jsonrpc_path=JSONRPC_PATH),
        Middleware(IntegerAnswers, schema_of=executor.outcome_schema),
    ]

    @asynccontextmanager
    async def lifespan(_app: Starlette) -> AsyncGenerator[None]:
        try:
            yield
        finally:
            # Calls still running answer "cancelled, outcome unknown" before the SDK drains.
            await executor.abort_runs(CANCEL_GRACE)
            await settle(handler, CANCEL_GRACE)
            await handler.aclose()

    app = Starlette(routes=routes, middleware=middleware, lifespan=lifespan)
    app.state.a2a_handler = handler
    app.state.a2a_task_store = task_store

    async def deliver(grace: float) -> None:
        await settle(handler, grace)

    app.state.deliver_answers = deliver  # after a drain: let the SDK write the last events
    return app
