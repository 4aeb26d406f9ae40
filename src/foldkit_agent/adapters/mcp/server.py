"""Serve a bound runtime over the Model Context Protocol (the official ``mcp`` 2.3 SDK).

Built on the low-level :class:`mcp.server.Server`; the adapter translates and adds no
authority. Every capability the runtime lists as available is an MCP tool; every call goes
through :meth:`AgentRuntime.call <foldkit_agent.runtime.AgentRuntime.call>` (a stale client may
call a tool that is no longer listed, so nothing is trusted from the listing), and the adapter
only turns its :class:`~foldkit_agent.runtime.Outcome` into a ``CallToolResult``.

Shapes on the wire:

* ``tools/list``: computed on every request from ``runtime.messages.available()``; each tool
  carries the capability's compatibility-profile input schema, a shared output schema, its
  title and behaviour annotations. ``listing="all"`` and ``"catalog"`` answer differently, for
  clients that never re-list (:mod:`.listing`).
* ``notifications/progress`` while a call with a ``progressToken`` waits, every
  ``progress_interval`` seconds, none after its answer.
* ``tools/call`` success: ``CallToolResult(content=[text], structured_content=Outcome.data)``.
* ``tools/call`` refusal (unknown, unavailable, invalid input, unauthorized, cancelled,
  completion failed, timeout): ``is_error=True``, the agent-facing sentence as text, and the
  error's JSON (``{"_tag", "capability", "message", ..., "status"}``) as structured content.
* defects: ``is_error=True`` with a generic sentence; no exception text leaves the process.
* resources: ``agent://context`` (the context projection) and ``agent://resources/<name>``
  for each ``agent.resource``, as JSON, with subscriptions.
* change notifications: ``notifications/tools/list_changed`` when the set of available
  capabilities changes and ``notifications/resources/updated`` when the context or a resource
  changes, pushed to modern-era ``subscriptions/listen`` streams *and* to handshake-era
  connections (stdio and HTTP), only when something an agent can see changed.

Example::

    from foldkit_agent.adapters.mcp import mcp_server, http_app, serve_stdio

    server = mcp_server(runtime, name="todo", version="1.0")
    async with mcp.Client(server) as client:          # in-process
        await client.call_tool("create_todo", {"title": "Milk"})

    app = http_app(runtime, name="todo", version="1.0")   # Starlette, serve with uvicorn
"""

from __future__ import annotations

import logging
from collections.abc import (
    Awaitable,
    Callable,
)
from dataclasses import replace
from typing import Any, Final, Literal

import mcp.types as types
from mcp import MCPError
from mcp.server import Server, ServerRequestContext
from mcp.server.auth.middleware.auth_context import get_access_token
from mcp.server.auth.provider import AccessToken
from mcp.server.context import CallNext, HandlerResult
from mcp.server.lowlevel import NotificationOptions
from mcp.server.models import InitializationOptions
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

from ...contract.approval import Approver
from ...edge.approvals import ParkedApproval
from ...edge.callers import ANONYMOUS, caller_key
from ...edge.calls import PARK, CallRequest, CallsInFlight, credentials_or_none
from ...edge.progress import DEFAULT_PROGRESS_INTERVAL, check_interval, waiting_text
from ...edge.resolve import (
    RuntimeUnavailableError,
    check_target,
    resolve_runtime,
    static_runtime,
)
from ...runtime.bound import AgentRuntime
from ...runtime.idempotency import IDEMPOTENCY_META, key_from
from ...runtime.outcome import Outcome, refused
from ._sdk import connection_of
from .approval import (
    INPUT_KEY,
    answer_of,
    approver_name,
    can_elicit,
    elicit_request,
    handshake_approver,
    owner_of,
)
from .apps import ACTOR_META, AGENT, VIEW
from .feed import Feed, LegacyPeer
from .listing import (
    CATALOG_NAMES,
    LIST_CAPABILITIES,
    Catalog,
    Listing,
    Tools,
    call_arguments,
    check_listing,
    list_arguments,
)
from .resources import check_uri, listed, read
from .telemetry import Observed, observing

_log = logging.getLogger("foldkit_agent.adapters.mcp")

__all__ = [
    "CredentialsOf",
    "FoldkitMCPServer",
    "Resolve",
    "Target",
    "default_credentials_of",
    "mcp_server",
]


TRANSPORT: Final = "mcp"


Resolve = Callable[
    [ServerRequestContext[Any, Any]], "AgentRuntime[Any, Any] | Awaitable[AgentRuntime[Any, Any]]"
]
"""``(request_context) -> AgentRuntime`` (or an awaitable of one): one runtime per caller/tenant."""

Target = "AgentRuntime[Any, Any] | Resolve"

CredentialsOf = Callable[[ServerRequestContext[Any, Any]], Any]
"""``(request_context) -> credentials`` put on ``Invocation.credentials`` (``None`` = nobody)."""


def default_credentials_of(ctx: ServerRequestContext[Any, Any]) -> AccessToken | None:
    """The credentials of a call: the bearer token the HTTP transport verified, else ``None``.

    Reads the SDK's ``get_access_token()`` (set by its bearer-auth middleware, §1.6 of the
    protocol notes). Never reads the call's arguments or ``_meta``. Over stdio and in-memory
    there is no token, so protected capabilities are refused (fail closed) unless the host
    passes its own ``credentials_of``.

    Example:
        >>> default_credentials_of(ctx)  # over HTTP with "Authorization: Bearer alice-token"
        AccessToken(token='alice-token', client_id='demo', scopes=['todos:delete'], ...)
    """
    del ctx
    return get_access_token()


class FoldkitMCPServer(Server[Any]):
    """The low-level MCP ``Server`` built by :func:`mcp_server`.

    Differs from the SDK's only in advertising ``tools.listChanged`` and
    ``resources.listChanged`` to handshake-era clients on every transport (the SDK's HTTP app
    builds its initialization options without them; protocol notes §1.3).
    """

    _foldkit_adapter: _Adapter | None = None
    tools: Tools | None = None
    """What it lists as tools, the list kept in wire form, which calls need no stream."""
    observed: bool = False
    """Whether it records OpenTelemetry's MCP conventions (:mod:`.telemetry`): a tracer or
    meter provider was set when it was built."""

    def create_initialization_options(
        self,
        notification_options: NotificationOptions | None = None,
        experimental_capabilities: dict[str, dict[str, Any]] | None = None,
        extensions: dict[str, dict[str, Any]] | None = None,
    ) -> InitializationOptions:
        """As the SDK's, with change notifications advertised by default."""
        return super().create_initialization_options(
            notification_options or NotificationOptions(tools_changed=True, resources_changed=True),
            experimental_capabilities,
            extensions,
        )

    async def abort_calls(self, grace: float) -> None:
        """Abort every ``tools/call`` in flight and wait up to ``grace`` seconds for each to
        answer (a cancellation saying whether the Message was sent; nothing rolled back)."""
        adapter = self._foldkit_adapter
        if adapter is not None:
            await adapter.abort_calls(grace)

    def close_feeds(self) -> None:
        """Stop watching every runtime this server has served (idempotent)."""
        adapter = self._foldkit_adapter
        if adapter is not None:
            adapter.close()


def _text(text: str) -> list[types.ContentBlock]:
    return [types.TextContent(type="text", text=text)]


class _Adapter:
    """The handlers and per-runtime change feeds behind one :class:`FoldkitMCPServer`."""

    def __init__(
        self,
        target: object,
        credentials_of: CredentialsOf | None,
        listing: Listing = "available",
        progress_interval: float = DEFAULT_PROGRESS_INTERVAL,
        calls: CallsInFlight | None = None,
    ) -> None:
        self.listing: Listing = check_listing(listing)
        self.progress_interval = check_interval(progress_interval)
        check_target(target, "mcp_server")
        self.target = target
        self.static = static_runtime(target)
        self.credentials_of = credentials_of  # None: default_credentials_of's answer
        self.feeds: dict[int, tuple[AgentRuntime[Any, Any], Feed]] = {}
        self.schemas: dict[str, dict[str, Any]] = {}
        self.calls = CallsInFlight() if calls is None else calls
        self.tools = Tools(self.listing, self.static, self.runtime, self.feed)
        if self.static is not None:
            self.schemas = {c.name: c.input_schema for c in self.static.messages.all()}
            if self.listing == "catalog":
                self.schemas.update(Catalog(self.static.messages.all()).schemas)

    # runtime and connection bookkeeping

    async def runtime(self, ctx: ServerRequestContext[Any, Any]) -> AgentRuntime[Any, Any]:
        rt = self.static  # a fixed runtime needs no resolving
        if rt is None:
            try:
                rt = await resolve_runtime(self.target, ctx, passthrough=(MCPError,))
            except RuntimeUnavailableError as err:
                raise MCPError(types.INTERNAL_ERROR, str(err)) from err
        if ctx.session.protocol_version not in MODERN_PROTOCOL_VERSIONS:
            self.track(ctx, rt)  # nothing is pushed to a modern-era connection: its feed
            # waits for a listing or a subscriptions/listen
        return rt

    def feed(self, rt: AgentRuntime[Any, Any]) -> Feed:
        entry = self.feeds.get(id(rt))
        if entry is None or entry[0] is not rt:
            self.drop_closed()
            entry = self.feeds[id(rt)] = (rt, Feed(rt, self.listing))
        return entry[1]

    def drop_closed(self) -> None:
        """Forget the feeds of runtimes closed since (a tenant's runtime closed when idle)."""
        for key, (old, feed) in list(self.feeds.items()):
            if old.closed:
                del self.feeds[key]
                feed.close()

    def track(
        self, ctx: ServerRequestContext[Any, Any], rt: AgentRuntime[Any, Any]
    ) -> LegacyPeer | None:
        """The change feed's peer for a connection that can be pushed to (one with a
        standalone channel), made on first sight; ``None`` for any other (a modern-era one
        has none), which never creates a feed."""
        connection = connection_of(ctx)
        if connection is None or not connection.has_standalone_channel:
            return None
        return self.feed(rt).peer(connection)

    async def credentials(self, ctx: ServerRequestContext[Any, Any]) -> Any:
        """The credentials of a call: the host's ``credentials_of`` (as
        :func:`~foldkit_agent.edge.calls.credentials_or_none`), by default the verified bearer
        token (what :func:`default_credentials_of` answers, read here without its frame)."""
        hook = self.credentials_of
        if hook is None:
            return get_access_token()
        return await credentials_or_none(hook, ctx)

    async def middleware(
        self, ctx: ServerRequestContext[Any, Any], call_next: CallNext
    ) -> HandlerResult:
        if ctx.method == "tools/list":
            return await self.tools.keep(ctx, call_next)
        result = await call_next(ctx)
        if self.static is not None and ctx.method == "notifications/initialized":
            self.track(ctx, self.static)
        return result

    async def abort_calls(self, grace: float) -> None:
        """Abort every MCP call in flight (each answers that its outcome is unknown), then
        wait up to ``grace`` seconds for their answers."""
        await self.calls.abort(grace, TRANSPORT)

    def close(self) -> None:
        for _rt, feed in list(self.feeds.values()):
            feed.close()
        self.feeds.clear()

    # handlers

    async def call_tool(
        self, ctx: ServerRequestContext[Any, Any], params: types.CallToolRequestParams
    ) -> types.CallToolResult | types.InputRequiredResult:
        """``tools/call``: the request as a call in flight (:mod:`foldkit_agent.edge.calls`),
        its outcome as a ``CallToolResult``, or, once a 2026-era call asks a person, an
        ``InputRequiredResult`` whose ``request_state`` names the parked call."""
        if params.request_state is not None:  # a modern-era client answering an approval
            return await self.resume_approval(ctx, params)
        rt = await self.runtime(ctx)
        if self.listing == "catalog":
            called = self.catalog_call(rt, params)
            if isinstance(called, types.CallToolResult):
                return called
            name, payload = called
        else:
            name, payload = params.name, {} if params.arguments is None else params.arguments
        request, meta = await self.call_request(ctx, rt, name), params.meta
        if meta is not None:
            if (given := meta.get(IDEMPOTENCY_META)) is not None:  # SEP-3182
                request = replace(request, idempotency_key=key_from(given))
            if meta.get(ACTOR_META) == VIEW:  # an MCP Apps view's click, as the host forwards it
                request = replace(request, actor=VIEW)
        got = await self.calls.run(rt, name, payload, request)
        return _asking(got) if isinstance(got, ParkedApproval) else _result(got)

    async def call_request(
        self, ctx: ServerRequestContext[Any, Any], rt: AgentRuntime[Any, Any], name: str
    ) -> CallRequest:
        """What this request brings to a call of ``name``: who calls (caps and credentials),
        how a person is asked, the disconnect watch and the progress beat.

        The beat sends ``notifications/progress``; the SDK sends it only when the call carried
        a ``progressToken`` (on the in-process transport, a progress callback), otherwise each
        beat is a no-op. Its words are made at the first beat: most calls answer before one.
        """
        credentials = await self.credentials(ctx)
        scope = getattr(ctx.request, "scope", None)
        caller = ANONYMOUS if scope is None else caller_key(scope)
        plan = rt.plans.get(name)
        if plan is None or not plan.may_wait:  # nothing to ask or beat for
            return CallRequest(TRANSPORT, caller, credentials, scope=scope, actor=AGENT)
        asks = plan.asks_person  # else no person is ever asked: none to find
        ask = self.approver_for(ctx, credentials) if asks else None
        interval = self.progress_interval

        async def beat(n: int) -> None:
            total, text = waiting_text(rt.definition.by_name.get(name), name)
            await ctx.session.report_progress(n * interval, total, text)

        return CallRequest(
            TRANSPORT,
            caller,
            credentials,
            ask=ask,
            owner=owner_of(ctx) if asks else None,
            scope=scope,
            beat=beat,
            interval=interval,
            reask=ask == PARK,  # the next InputRequiredResult can put a second question
            actor=AGENT,
        )

    def catalog_call(
        self, rt: AgentRuntime[Any, Any], params: types.CallToolRequestParams
    ) -> tuple[str, Any] | types.CallToolResult:
        """The capability and input a ``tools/call`` names: itself, or in catalog mode what
        ``call_capability`` names; ``list_capabilities`` and a malformed catalog call are
        answered here."""
        name: str = params.name
        payload: Any = {} if params.arguments is None else params.arguments
        catalog = self.feed(rt).catalog
        if catalog is None or name not in CATALOG_NAMES:
            return name, payload
        args: tuple[str, Any] | str | None
        if name == LIST_CAPABILITIES:
            args = list_arguments(params.arguments)
            if args is None:
                text, data = catalog.listed(rt)
                return types.CallToolResult(
                    content=_text(text), structured_content=data, is_error=False
                )
        else:
            args = call_arguments(params.arguments)
        if isinstance(args, str):
            return _result(refused(args))
        return args

    def approver_for(
        self, ctx: ServerRequestContext[Any, Any], credentials: Any
    ) -> Approver | Literal["park"] | None:
        """How this request can ask a person (``CallRequest.ask``); ``None`` if it cannot.

        Handshake era: an approver that elicits on the request's stream. Modern era:
        :data:`~foldkit_agent.edge.calls.PARK` (see :mod:`.approval`).
        """
        if not can_elicit(ctx):
            return None
        if ctx.session.protocol_version in MODERN_PROTOCOL_VERSIONS:
            return PARK
        return handshake_approver(ctx, approver_name(ctx, credentials))

    async def resume_approval(
        self, ctx: ServerRequestContext[Any, Any], params: types.CallToolRequestParams
    ) -> types.CallToolResult | types.InputRequiredResult:
        """The second leg of a modern-era approval: the answer to the parked call, then its
        outcome or next question (a call answered first at the console: where that led)."""
        credentials = await self.credentials(ctx)
        response = (params.input_responses or {}).get(INPUT_KEY)
        key, owner = params.request_state or "", owner_of(ctx)
        shown = self.calls.parked.question(key, owner)
        approval = answer_of(response, approver_name(ctx, credentials), shown)
        got = await self.calls.follow(key, owner, params.name, approval)
        if isinstance(got, ParkedApproval):
            return _asking(got)
        if got is not None:
            return _result(got)
        return _result(
            refused(
                f"No approval request for {params.name!r} is waiting under this "
                "request_state: it was answered, timed out or was cancelled, or belongs to "
                "another caller. Nothing was sent by this call; call the tool again.",
                params.name,
            )
        )

    async def list_resources(
        self, ctx: ServerRequestContext[Any, Any], params: types.PaginatedRequestParams | None
    ) -> types.ListResourcesResult:
        return listed(await self.runtime(ctx))

    async def read_resource(
        self, ctx: ServerRequestContext[Any, Any], params: types.ReadResourceRequestParams
    ) -> types.ReadResourceResult:
        return read(await self.runtime(ctx), str(params.uri))

    async def subscribe(
        self, ctx: ServerRequestContext[Any, Any], params: types.SubscribeRequestParams
    ) -> types.EmptyResult:
        rt = await self.runtime(ctx)
        uri = str(params.uri)
        check_uri(rt, uri)
        peer = self.track(ctx, rt)
        if peer is not None:
            peer.uris.add(uri)
        return types.EmptyResult()

    async def unsubscribe(
        self, ctx: ServerRequestContext[Any, Any], params: types.UnsubscribeRequestParams
    ) -> types.EmptyResult:
        rt = await self.runtime(ctx)
        peer = self.track(ctx, rt)
        if peer is not None:
            peer.uris.discard(str(params.uri))
        return types.EmptyResult()

    async def listen(
        self, ctx: ServerRequestContext[Any, Any], params: types.SubscriptionsListenRequestParams
    ) -> types.SubscriptionsListenResult:
        rt = await self.runtime(ctx)
        return await self.feed(rt).listen(ctx, params)


def _asking(parked: ParkedApproval) -> types.InputRequiredResult:
    """The answer of a call parked for a person: its question, under its ``request_state``."""
    return types.InputRequiredResult(
        input_requests={INPUT_KEY: elicit_request(parked.request)}, request_state=parked.key
    )


def _result(outcome: Outcome) -> types.CallToolResult:
    """The ``tools/call`` answer for an outcome (refusals and defects are ``is_error``)."""
    ok = outcome.ok
    text = f"{outcome.text}\n{outcome.data_json()}" if ok else outcome.text
    return types.CallToolResult(
        content=[types.TextContent(type="text", text=text)],
        structured_content=outcome.data,
        is_error=not ok,
    )


def mcp_server(
    target: AgentRuntime[Any, Any] | Resolve,
    *,
    name: str,
    version: str,
    instructions: str | None = None,
    credentials_of: CredentialsOf | None = None,
    listing: Listing = "available",
    progress_interval: float = DEFAULT_PROGRESS_INTERVAL,
    calls: CallsInFlight | None = None,
) -> FoldkitMCPServer:
    """Build a low-level MCP server for a bound runtime.

    Args:
        target: an :class:`~foldkit_agent.runtime.AgentRuntime`, or ``resolve(request_context)
            -> AgentRuntime`` (sync or async) to serve one application instance per caller or
            tenant (:class:`~foldkit_agent.Tenants` is one). The server watches each runtime
            it has seen for change notifications until :meth:`FoldkitMCPServer.close_feeds`,
            or until the runtime is closed (``runtime.closed``; forgotten at the next new one).
        name, version: the server's ``serverInfo``.
        instructions: optional text a client may show its model.
        credentials_of: ``(request_context) -> credentials`` (sync or async) placed on
            ``Invocation.credentials`` for the runtime's principal provider. Default:
            :func:`default_credentials_of` (the verified bearer token; ``None`` on stdio).
            Never derive it from the call's arguments or ``_meta``.
        listing: what ``tools/list`` answers (DESIGN §10, :mod:`.listing`): ``"available"``
            (what is available now, ``tools/list_changed`` on change), ``"all"`` (every
            capability, always; an unavailable one says so and is refused at call time) or
            ``"catalog"`` (``list_capabilities`` and ``call_capability`` only), for clients
            that list once.
        progress_interval: seconds between ``notifications/progress`` while a ``tools/call``
            that carried a ``progressToken`` waits (default 5). Progress is the seconds
            waited, counted in intervals; the total is the completion's timeout, if any.
        calls: the server's calls in flight and their per-caller caps
            (:class:`~foldkit_agent.edge.calls.CallsInFlight`; share one among every adapter
            of a server so the caps are one set of numbers); default one of its own.

    Returns:
        A :class:`FoldkitMCPServer` (an ``mcp.server.Server``): pass it to ``mcp.Client`` for
        in-process use, to :func:`serve_stdio`, or use :func:`http_app`.

    Raises:
        TypeError: ``target`` is neither a runtime nor callable.
        ValueError: ``listing`` is not one of the three, or ``progress_interval`` is not a
            positive number.

    Behaviour (protocol notes §1.1–1.4): tools are listed per request, from a wire form built
    once per runtime, availability set and protocol version (reused until one changes); every
    call goes through ``runtime.call`` with ``transport="mcp"``; refusals are ``is_error``
    results carrying the error JSON; defects are generic error results; cancelling a
    ``tools/call`` sets the invocation's signal (the SDK then sends no answer). Change
    notifications go to modern ``subscriptions/listen`` streams and to handshake-era
    connections.

    Example:
        >>> server = mcp_server(rt, name="todo", version="1.0")
        >>> async with mcp.Client(server) as client:
        ...     result = await client.call_tool("create_todo", {"title": "Milk"})
        >>> result.structured_content["status"]
        'completed'
    """
    adapter = _Adapter(target, credentials_of, listing, progress_interval, calls)
    server = FoldkitMCPServer(
        name,
        version=version,
        instructions=instructions,
        get_tool_input_schema=adapter.schemas.get,  # the SDK's Mcp-Param-* check reads it
        on_list_tools=adapter.tools.list_tools,
        on_call_tool=adapter.call_tool,
        on_list_resources=adapter.list_resources,
        on_read_resource=adapter.read_resource,
        on_subscribe_resource=adapter.subscribe,
        on_unsubscribe_resource=adapter.unsubscribe,
        on_subscriptions_listen=adapter.listen,
    )
    if observing():  # decided once, here: unobserved, a request runs none of it
        server.middleware.append(Observed())
        server.observed = True
    server.middleware.append(adapter.middleware)
    server._foldkit_adapter = adapter  # pyright: ignore[reportPrivateUsage]
    server.tools = adapter.tools
    return server
