"""Serve a bound runtime over the Model Context Protocol (the official ``mcp`` 2.3 SDK).

Built on the low-level :class:`mcp.server.Server`; the adapter translates and adds no
authority. Every capability the runtime lists as available is an MCP tool; every call goes
through :meth:`~foldkit_agent.runtime.RuntimeMessages.dispatch_unknown` (a stale client may call
a tool that is no longer listed, so nothing is trusted from the listing).

Shapes on the wire:

* ``tools/list``: computed on every request from ``runtime.messages.available()``; each tool
  carries the capability's compatibility-profile input schema and a shared output schema.
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

import asyncio
import inspect
import io
import json
import logging
import os
from collections import deque
from collections.abc import (
    AsyncGenerator,
    AsyncIterator,
    Awaitable,
    Callable,
    Generator,
    Iterable,
    Mapping,
)
from contextlib import asynccontextmanager, contextmanager, suppress
from typing import Any, BinaryIO, Final, cast

import anyio
import mcp.types as types
from mcp import MCPError
from mcp.server import Server, ServerRequestContext
from mcp.server.auth.middleware.auth_context import get_access_token
from mcp.server.auth.provider import AccessToken, TokenVerifier
from mcp.server.auth.settings import AuthSettings
from mcp.server.context import CallNext, HandlerResult
from mcp.server.lowlevel import NotificationOptions
from mcp.server.models import InitializationOptions
from mcp.server.subscriptions import (
    ListenHandler,
    ResourceUpdated,
    ServerEvent,
    ToolsListChanged,
)
from mcp.shared.message import SessionMessage
from mcp_types.version import MODERN_PROTOCOL_VERSIONS
from starlette.applications import Starlette

from ...contract.calls import Invocation
from ...contract.declare import Capability
from ...edge.wire import (
    LOOPBACK_HOSTS,
    JsonBodyGuard,
    WireError,
    jsonrpc_code,
    jsonrpc_problem,
    loads_strict,
)
from ...errors import AgentError
from ...runtime.bound import AgentRuntime, Change
from ...runtime.outcome import summarize
from ...runtime.results import DispatchResult

__all__ = [
    "CONTEXT_URI",
    "DEFAULT_MAX_BODY",
    "OUTPUT_SCHEMA",
    "RESOURCE_URI_PREFIX",
    "FoldkitMCPServer",
    "PrincipalOf",
    "Resolve",
    "StaticTokenVerifier",
    "Target",
    "default_principal_of",
    "http_app",
    "mcp_server",
    "serve_stdio",
]

_log = logging.getLogger("foldkit_agent.adapters.mcp")

CONTEXT_URI: Final = "agent://context"
"""The URI of the context projection resource."""

RESOURCE_URI_PREFIX: Final = "agent://resources/"
"""``agent://resources/<name>`` is the URI of the contract's resource ``<name>``."""

TRANSPORT: Final = "mcp"

DEFAULT_MAX_BODY: Final = 4 * 1024 * 1024
"""Largest request body :func:`http_app` accepts, in bytes (4 MiB, as the SDK); larger is 413."""

OUTPUT_SCHEMA: Final[dict[str, Any]] = {
    "type": "object",
    "properties": {
        "status": {
            "type": "string",
            "enum": ["dispatched", "completed", "failed", "refused", "unknown", "defect"],
            "description": "dispatched or completed on success; otherwise why not",
        },
        "capability": {"anyOf": [{"type": "string"}, {"type": "null"}]},
        "invocation_id": {"type": "string"},
        "message": {
            "anyOf": [{"type": "object"}, {"type": "string"}],
            "description": "On success the Message applied; on an error the explanation",
        },
        "result": {"type": "object", "description": "The Message that completed the call"},
        "_tag": {"type": "string", "description": "On an error: the error's tag"},
    },
    "required": ["status"],
}
"""The output schema of every tool. It covers the structured content of a success
(``{"status", "capability", "invocation_id", "message", "result"?}``) and of an error result
(the error's JSON plus ``"status"``), since some clients check both against it."""

Resolve = Callable[
    [ServerRequestContext[Any, Any]], "AgentRuntime[Any, Any] | Awaitable[AgentRuntime[Any, Any]]"
]
"""``(request_context) -> AgentRuntime`` (or an awaitable of one): one runtime per caller/tenant."""

Target = "AgentRuntime[Any, Any] | Resolve"

PrincipalOf = Callable[[ServerRequestContext[Any, Any]], Any]
"""``(request_context) -> credentials`` put on ``Invocation.credentials`` (``None`` = nobody)."""

_GENERIC_DEFECT = (
    "The call could not be completed because of an internal error; "
    "whether it was applied is unknown."
)
_NO_APP = "The application for this caller is not available."
_SHUTDOWN_GRACE = 5.0  # seconds calls in flight get to answer when the HTTP app shuts down


def default_principal_of(ctx: ServerRequestContext[Any, Any]) -> AccessToken | None:
    """The credentials of a call: the bearer token the HTTP transport verified, else ``None``.

    Reads the SDK's ``get_access_token()`` (set by its bearer-auth middleware, §1.6 of the
    protocol notes). Never reads the call's arguments or ``_meta``. Over stdio and in-memory
    there is no token, so protected capabilities are refused (fail closed) unless the host
    passes its own ``principal_of``.

    Example:
        >>> default_principal_of(ctx)  # over HTTP with "Authorization: Bearer alice-token"
        AccessToken(token='alice-token', client_id='demo', scopes=['todos:delete'], ...)
    """
    del ctx
    return get_access_token()


class StaticTokenVerifier(TokenVerifier):
    """A :class:`~mcp.server.auth.provider.TokenVerifier` over a fixed token table.

    For demos, tests and local tools; production deployments verify real tokens (JWT, token
    introspection) instead.

    Args:
        tokens: ``{bearer_token: AccessToken}``.

    Example:
        >>> StaticTokenVerifier({"alice-token": AccessToken(token="alice-token",
        ...     client_id="demo", scopes=["todos:delete"], subject="alice")})
    """

    def __init__(self, tokens: Mapping[str, AccessToken]) -> None:
        self._tokens = dict(tokens)

    async def verify_token(self, token: str) -> AccessToken | None:
        """The token's :class:`AccessToken`, or ``None`` (the SDK answers HTTP 401)."""
        return self._tokens.get(token)


# -- change feeds ---------------------------------------------------------------------------


class _SyncBus:
    """An in-process ``SubscriptionBus`` that can also deliver synchronously (keeps order)."""

    def __init__(self) -> None:
        self._listeners: dict[object, Callable[[ServerEvent], None]] = {}

    def emit(self, event: ServerEvent) -> None:
        for listener in list(self._listeners.values()):
            try:
                listener(event)
            except Exception:
                _log.exception("a subscriptions/listen listener raised")

    async def publish(self, event: ServerEvent) -> None:
        self.emit(event)
        await anyio.lowlevel.checkpoint()

    def subscribe(self, listener: Callable[[ServerEvent], None]) -> Callable[[], None]:
        token = object()
        self._listeners[token] = listener

        def unsubscribe() -> None:
            self._listeners.pop(token, None)

        return unsubscribe


class _LegacyPeer:
    """One handshake-era connection: its resource subscriptions and an ordered push queue."""

    __slots__ = ("closed", "connection", "draining", "queue", "uris")

    def __init__(self, connection: Any) -> None:
        self.connection = connection
        self.uris: set[str] = set()
        self.queue: deque[tuple[str, dict[str, Any] | None]] = deque()
        self.draining = False
        self.closed = False


class _Feed:
    """Turns one runtime's ``watch`` changes into MCP notifications for both eras."""

    def __init__(self, runtime: AgentRuntime[Any, Any]) -> None:
        self.bus = _SyncBus()
        self.listen = ListenHandler(self.bus)
        self.peers: dict[int, _LegacyPeer] = {}
        self.tools: dict[str, types.Tool] = {c.name: _tool(c) for c in runtime.messages.all()}
        self._resources = runtime.resources.names()
        self._tasks: set[asyncio.Task[None]] = set()
        self._unwatch: Callable[[], None] | None = None
        try:
            self._unwatch = runtime.watch(self._on_change)
        except AgentError:
            _log.warning("the host has no subscribe(); MCP clients will not be told about changes")

    def peer(self, connection: Any) -> _LegacyPeer:
        key = id(connection)
        peer = self.peers.get(key)
        if peer is None:
            peer = self.peers[key] = _LegacyPeer(connection)
            stack = getattr(connection, "exit_stack", None)
            if stack is not None:
                stack.callback(self._drop, key)
        return peer

    def _drop(self, key: int) -> None:
        peer = self.peers.pop(key, None)
        if peer is not None:
            peer.closed = True
            peer.queue.clear()

    def _on_change(self, change: Change) -> None:
        uris: list[str] = []
        if change.context:
            uris.append(CONTEXT_URI)
        uris.extend(
            RESOURCE_URI_PREFIX + name for name in self._resources if name in change.resources
        )
        if change.capabilities:
            self.bus.emit(ToolsListChanged())
        for uri in uris:
            self.bus.emit(ResourceUpdated(uri=uri))
        for peer in list(self.peers.values()):
            if peer.connection.protocol_version in MODERN_PROTOCOL_VERSIONS:
                continue
            if change.capabilities:
                peer.queue.append(("notifications/tools/list_changed", None))
            for uri in uris:
                if uri in peer.uris:
                    peer.queue.append(("notifications/resources/updated", {"uri": uri}))
            if peer.queue and not peer.draining:
                self._drain(peer)

    def _drain(self, peer: _LegacyPeer) -> None:
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            peer.queue.clear()
            return
        peer.draining = True

        async def pump() -> None:
            try:
                while peer.queue and not peer.closed:
                    method, params = peer.queue.popleft()
                    await peer.connection.notify(method, params)
            except Exception:
                _log.debug("a legacy MCP push failed", exc_info=True)
            finally:
                peer.draining = False

        task = loop.create_task(pump())
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    def close(self) -> None:
        if self._unwatch is not None:
            unwatch, self._unwatch = self._unwatch, None
            unwatch()
        self.listen.close()
        for task in list(self._tasks):
            task.cancel()
        self.peers.clear()


# -- the server -------------------------------------------------------------------------------


class FoldkitMCPServer(Server[Any]):
    """The low-level MCP ``Server`` built by :func:`mcp_server`.

    Differs from the SDK's only in advertising ``tools.listChanged`` and
    ``resources.listChanged`` to handshake-era clients on every transport (the SDK's HTTP app
    builds its initialization options without them; protocol notes §1.3).
    """

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
        adapter: _Adapter | None = getattr(self, "_foldkit_adapter", None)
        if adapter is not None:
            await adapter.abort_calls(grace)

    def close_feeds(self) -> None:
        """Stop watching every runtime this server has served (idempotent)."""
        adapter: _Adapter | None = getattr(self, "_foldkit_adapter", None)
        if adapter is not None:
            adapter.close()


def _connection_of(ctx: ServerRequestContext[Any, Any]) -> Any:
    # The SDK builds a ServerSession per request; the connection behind it is what lasts
    # (protocol notes §1.3, correction). It has no public accessor in mcp 2.3.
    return getattr(ctx.session, "_connection", None)


def _tool(cap: Capability) -> types.Tool:
    return types.Tool(
        name=cap.name,
        description=cap.description,
        input_schema=cap.input_schema,
        output_schema=OUTPUT_SCHEMA,
    )


def _text(text: str) -> list[types.ContentBlock]:
    return [types.TextContent(type="text", text=text)]


class _Adapter:
    """The handlers and per-runtime change feeds behind one :class:`FoldkitMCPServer`."""

    def __init__(self, target: object, principal_of: PrincipalOf | None) -> None:
        self.static: AgentRuntime[Any, Any] | None = None
        self.resolve: Resolve | None = None
        if isinstance(target, AgentRuntime):
            self.static = cast("AgentRuntime[Any, Any]", target)
        elif callable(target):
            self.resolve = cast("Resolve", target)
        else:
            raise TypeError(
                "mcp_server(target) takes an AgentRuntime or a resolve(request_context) callable"
            )
        self.principal_of: PrincipalOf = principal_of or default_principal_of
        self.feeds: dict[int, tuple[AgentRuntime[Any, Any], _Feed]] = {}
        self.schemas: dict[str, dict[str, Any]] = {}
        self.calls: dict[asyncio.Future[Any], asyncio.Event] = {}  # in flight -> its signal
        if self.static is not None:
            self.schemas = {c.name: c.input_schema for c in self.static.messages.all()}

    # runtime and connection bookkeeping

    async def runtime(self, ctx: ServerRequestContext[Any, Any]) -> AgentRuntime[Any, Any]:
        if self.static is not None:
            rt = self.static
        else:
            assert self.resolve is not None
            try:
                got: Any = self.resolve(ctx)
                if inspect.isawaitable(got):
                    got = await got
            except MCPError:
                raise
            except Exception as exc:
                _log.warning("resolve(request_context) raised", exc_info=True)
                raise MCPError(types.INTERNAL_ERROR, _NO_APP) from exc
            if not isinstance(got, AgentRuntime):
                _log.warning("resolve(request_context) did not return an AgentRuntime")
                raise MCPError(types.INTERNAL_ERROR, _NO_APP)
            rt = cast("AgentRuntime[Any, Any]", got)
        self.track(ctx, rt)
        return rt

    def feed(self, rt: AgentRuntime[Any, Any]) -> _Feed:
        entry = self.feeds.get(id(rt))
        if entry is None or entry[0] is not rt:
            entry = self.feeds[id(rt)] = (rt, _Feed(rt))
        return entry[1]

    def track(
        self, ctx: ServerRequestContext[Any, Any], rt: AgentRuntime[Any, Any]
    ) -> _LegacyPeer | None:
        feed = self.feed(rt)
        connection = _connection_of(ctx)
        if connection is None or ctx.session.protocol_version in MODERN_PROTOCOL_VERSIONS:
            return None
        if not getattr(connection, "has_standalone_channel", False):
            return None
        return feed.peer(connection)

    async def middleware(
        self, ctx: ServerRequestContext[Any, Any], call_next: CallNext
    ) -> HandlerResult:
        result = await call_next(ctx)
        if self.static is not None and ctx.method == "notifications/initialized":
            self.track(ctx, self.static)
        return result

    def _forget(self, task: asyncio.Future[Any]) -> None:
        self.calls.pop(task, None)

    async def abort_calls(self, grace: float) -> None:
        """Abort every call in flight (each answers that its outcome is unknown), then wait."""
        pending = set(self.calls)
        for signal in list(self.calls.values()):
            signal.set()
        if pending:
            await asyncio.wait(pending, timeout=grace)
        await anyio.lowlevel.checkpoint()  # let the handlers hand their answers to the SDK

    def close(self) -> None:
        for _rt, feed in list(self.feeds.values()):
            feed.close()
        self.feeds.clear()

    # handlers

    async def list_tools(
        self, ctx: ServerRequestContext[Any, Any], params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        rt = await self.runtime(ctx)
        tools = self.feed(rt).tools  # built once per runtime: a contract's tools never change
        return types.ListToolsResult(tools=[tools[c.name] for c in rt.messages.available()])

    async def call_tool(
        self, ctx: ServerRequestContext[Any, Any], params: types.CallToolRequestParams
    ) -> types.CallToolResult:
        rt = await self.runtime(ctx)
        try:
            credentials = self.principal_of(ctx)
            if inspect.isawaitable(credentials):
                credentials = await credentials
        except Exception:
            _log.warning("principal_of raised; calling with no credentials", exc_info=True)
            credentials = None
        signal = asyncio.Event()
        invocation = Invocation(transport=TRANSPORT, signal=signal, credentials=credentials)
        payload: Any = {} if params.arguments is None else params.arguments
        task = asyncio.ensure_future(rt.messages.dispatch_unknown(params.name, payload, invocation))
        self.calls[task] = signal
        task.add_done_callback(self._forget)
        try:
            result: DispatchResult | BaseException = await asyncio.shield(task)
        except asyncio.CancelledError:
            # notifications/cancelled (or the client went away): abort through the signal so the
            # runtime answers and audits it once, then let the SDK drop the response.
            signal.set()
            with anyio.CancelScope(shield=True):
                await asyncio.wait({task})
            if not task.cancelled():
                task.exception()  # retrieved, so asyncio does not warn about it
            raise
        except Exception as exc:
            result = exc
        return _result(result, params.name)

    async def list_resources(
        self, ctx: ServerRequestContext[Any, Any], params: types.PaginatedRequestParams | None
    ) -> types.ListResourcesResult:
        rt = await self.runtime(ctx)
        resources: list[types.Resource] = []
        if rt.definition.context is not None:
            resources.append(
                types.Resource(
                    uri=CONTEXT_URI,
                    name="context",
                    description="What the agent may see of the application's current state.",
                    mime_type="application/json",
                )
            )
        for name, res in rt.definition.resources.items():
            resources.append(
                types.Resource(
                    uri=RESOURCE_URI_PREFIX + name,
                    name=name,
                    description=res.description,
                    mime_type="application/json",
                )
            )
        return types.ListResourcesResult(resources=resources)

    async def read_resource(
        self, ctx: ServerRequestContext[Any, Any], params: types.ReadResourceRequestParams
    ) -> types.ReadResourceResult:
        rt = await self.runtime(ctx)
        uri = str(params.uri)
        value = _read(rt, uri)
        return types.ReadResourceResult(
            contents=[
                types.TextResourceContents(
                    uri=uri, mime_type="application/json", text=json.dumps(value, sort_keys=True)
                )
            ]
        )

    async def subscribe(
        self, ctx: ServerRequestContext[Any, Any], params: types.SubscribeRequestParams
    ) -> types.EmptyResult:
        rt = await self.runtime(ctx)
        uri = str(params.uri)
        _check_uri(rt, uri)
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

    def input_schema(self, name: str) -> dict[str, Any] | None:
        return self.schemas.get(name)


def _check_uri(rt: AgentRuntime[Any, Any], uri: str) -> None:
    if uri == CONTEXT_URI and rt.definition.context is not None:
        return
    if (
        uri.startswith(RESOURCE_URI_PREFIX)
        and uri[len(RESOURCE_URI_PREFIX) :] in rt.definition.resources
    ):
        return
    raise MCPError(
        types.INVALID_PARAMS,
        "There is no resource with this URI. List the resources and read one of those.",
        {"uri": uri[:300]},
    )


def _read(rt: AgentRuntime[Any, Any], uri: str) -> Any:
    _check_uri(rt, uri)
    try:
        if uri == CONTEXT_URI:
            return rt.context()
        return rt.resources.read(uri[len(RESOURCE_URI_PREFIX) :])
    except AgentError as err:
        raise MCPError(types.INVALID_PARAMS, err.message, {"uri": uri}) from err
    except Exception as exc:
        _log.warning("reading %s failed", uri, exc_info=True)
        raise MCPError(
            types.INTERNAL_ERROR, "The resource could not be read.", {"uri": uri}
        ) from exc


def _result(result: DispatchResult | BaseException, requested: str) -> types.CallToolResult:
    try:
        outcome = summarize(
            result, capability=requested if not isinstance(result, DispatchResult) else None
        )
    except Exception:
        _log.exception("summarizing a call to %r failed", requested)
        return types.CallToolResult(
            content=_text(_GENERIC_DEFECT), structured_content={"status": "defect"}, is_error=True
        )
    if outcome.kind == "defect":
        _log.error(
            "a call to %r failed unexpectedly",
            requested,
            exc_info=result if isinstance(result, BaseException) else None,
        )
        text = _GENERIC_DEFECT
        return types.CallToolResult(
            content=_text(text),
            structured_content={
                "status": "defect",
                "capability": outcome.capability,
                "message": text,
            },
            is_error=True,
        )
    if outcome.ok:
        body = json.dumps(outcome.data, sort_keys=True, default=str)
        return types.CallToolResult(
            content=_text(f"{outcome.text}\n{body}"),
            structured_content=outcome.data,
            is_error=False,
        )
    return types.CallToolResult(
        content=_text(outcome.text), structured_content=outcome.data, is_error=True
    )


def mcp_server(
    target: AgentRuntime[Any, Any] | Resolve,
    *,
    name: str,
    version: str,
    instructions: str | None = None,
    principal_of: PrincipalOf | None = None,
) -> FoldkitMCPServer:
    """Build a low-level MCP server for a bound runtime.

    Args:
        target: an :class:`~foldkit_agent.runtime.AgentRuntime`, or ``resolve(request_context)
            -> AgentRuntime`` (sync or async) to serve one application instance per caller or
            tenant. A resolved runtime should be long-lived: the server watches each runtime
            it has seen for change notifications until :meth:`FoldkitMCPServer.close_feeds`.
        name, version: the server's ``serverInfo``.
        instructions: optional text a client may show its model.
        principal_of: ``(request_context) -> credentials`` (sync or async) placed on
            ``Invocation.credentials`` for the runtime's principal provider. Default:
            :func:`default_principal_of` (the verified bearer token; ``None`` on stdio).
            Never derive it from the call's arguments or ``_meta``.

    Returns:
        A :class:`FoldkitMCPServer` (an ``mcp.server.Server``): pass it to ``mcp.Client`` for
        in-process use, to :func:`serve_stdio`, or use :func:`http_app`.

    Raises:
        TypeError: ``target`` is neither a runtime nor callable.

    Behaviour (protocol notes §1.1–1.4): tools are listed per request; every call goes through
    ``dispatch_unknown`` with ``transport="mcp"``; refusals are ``is_error`` results carrying
    the error JSON; defects are generic error results; cancelling a ``tools/call`` sets the
    invocation's signal (the SDK then sends no answer). Change notifications go to modern
    ``subscriptions/listen`` streams and to handshake-era connections.

    Example:
        >>> server = mcp_server(rt, name="todo", version="1.0")
        >>> async with mcp.Client(server) as client:
        ...     result = await client.call_tool("create_todo", {"title": "Milk"})
        >>> result.structured_content["status"]
        'completed'
    """
    adapter = _Adapter(target, principal_of)
    server = FoldkitMCPServer(
        name,
        version=version,
        instructions=instructions,
        get_tool_input_schema=adapter.input_schema,
        on_list_tools=adapter.list_tools,
        on_call_tool=adapter.call_tool,
        on_list_resources=adapter.list_resources,
        on_read_resource=adapter.read_resource,
        on_subscribe_resource=adapter.subscribe,
        on_unsubscribe_resource=adapter.unsubscribe,
        on_subscriptions_listen=adapter.listen,
    )
    server.middleware.append(adapter.middleware)
    server._foldkit_adapter = adapter  # type: ignore[attr-defined]  # pyright: ignore[reportAttributeAccessIssue]
    return server


async def serve_stdio(
    target: AgentRuntime[Any, Any] | Resolve,
    *,
    name: str,
    version: str,
    instructions: str | None = None,
    principal_of: PrincipalOf | None = None,
) -> None:
    """Serve MCP over this process's stdin/stdout until the client closes the pipe.

    Same arguments as :func:`mcp_server`. stdio authenticates nobody: with the default
    ``principal_of`` every call has ``credentials=None``, so capabilities guarded by
    ``authorize`` are refused (fail closed) unless the host passes a local ``principal_of``.

    Example:
        >>> async with examples.todo.runtime() as rt:
        ...     await serve_stdio(rt, name="todo", version="1.0")
    """
    from mcp.server.stdio import stdio_server

    server = mcp_server(
        target, name=name, version=version, instructions=instructions, principal_of=principal_of
    )
    try:
        with _claimed_stdio() as (wire_in, wire_out):
            lines = _StrictLines(anyio.wrap_file(wire_in))
            async with stdio_server(stdin=lines, stdout=anyio.wrap_file(wire_out)) as (  # pyright: ignore[reportArgumentType]
                read,
                write,
            ):
                lines.answer_with(write)
                await server.run(read, write, server.create_initialization_options())
    finally:
        server.close_feeds()


@contextmanager
def _claimed_stdio() -> Generator[tuple[BinaryIO, io.TextIOWrapper]]:
    """The process's stdin/stdout as the wire, with fds 0 and 1 diverted while serving.

    Stray reads see end of file and stray prints go to stderr, so nothing but protocol frames
    reaches the client; both descriptors are restored on exit.
    """
    wire_in_fd, wire_out_fd = os.dup(0), os.dup(1)
    saved_in, saved_out = os.dup(0), os.dup(1)
    null = os.open(os.devnull, os.O_RDONLY)
    try:
        os.dup2(null, 0)
        os.dup2(2, 1)
    finally:
        os.close(null)
    # closefd=False: a worker thread may still be blocked reading when serving ends.
    wire_in = os.fdopen(wire_in_fd, "rb", closefd=False)  # lines are decoded strictly
    wire_out = io.TextIOWrapper(os.fdopen(wire_out_fd, "wb", closefd=False), encoding="utf-8")
    try:
        yield wire_in, wire_out
    finally:
        with suppress(OSError, ValueError):
            wire_out.flush()
        os.dup2(saved_in, 0)
        os.dup2(saved_out, 1)
        os.close(saved_in)
        os.close(saved_out)


class _StrictLines:
    """stdin lines for the SDK's stdio transport, read as strictly as the HTTP bodies.

    Each line must be one JSON-RPC 2.0 message in strict JSON (``foldkit_agent.edge.wire``): no
    duplicate keys, ``NaN``, lone surrogates or deep nesting. Other lines never reach the SDK;
    they are answered with a JSON-RPC error (``-32700``/``-32600``) carrying the request's id
    when one can be read, in our own words.
    """

    def __init__(self, source: Any) -> None:
        self._source = source
        self._write: Any = None
        self._ready = anyio.Event()

    def answer_with(self, write: Any) -> None:
        self._write = write
        self._ready.set()

    def __aiter__(self) -> AsyncIterator[str]:
        return self._lines()

    async def _lines(self) -> AsyncIterator[str]:
        async for line in self._source:
            raw = cast(bytes, line)
            if not raw.strip():
                continue
            try:
                problem = jsonrpc_problem(loads_strict(raw))  # UTF-8 checked here too
            except WireError as err:
                problem = err
            if problem is None:
                yield raw.decode("utf-8")
                continue
            await self._refuse(raw.decode("utf-8", "replace"), problem)

    async def _refuse(self, text: str, problem: WireError) -> None:
        ident: Any = None
        with suppress(ValueError, RecursionError):
            loose: Any = json.loads(text)
            if isinstance(loose, dict):
                candidate = cast(dict[str, Any], loose).get("id")
                if isinstance(candidate, str | int) and not isinstance(candidate, bool):
                    ident = candidate
        code = jsonrpc_code(problem)
        await self._ready.wait()
        error = types.JSONRPCError(
            jsonrpc="2.0", id=ident, error=types.ErrorData(code=code, message=problem.text)
        )
        with suppress(anyio.ClosedResourceError, anyio.BrokenResourceError):
            await self._write.send(SessionMessage(error))


def http_app(
    target: AgentRuntime[Any, Any] | Resolve,
    *,
    name: str,
    version: str,
    instructions: str | None = None,
    principal_of: PrincipalOf | None = None,
    path: str = "/mcp",
    host: str = "127.0.0.1",
    token_verifier: TokenVerifier | None = None,
    auth: AuthSettings | None = None,
    max_body: int = DEFAULT_MAX_BODY,
    allowed_hosts: Iterable[str] | None = None,
) -> Starlette:
    """A Starlette app serving MCP over streamable HTTP at ``path`` (both protocol eras).

    Args:
        target, name, version, instructions, principal_of: as :func:`mcp_server`.
        path: the endpoint path.
        host: the host the app will be served on; for ``127.0.0.1``, ``localhost`` and ``::1``
            the SDK's DNS-rebinding protection is on (only loopback ``Host``/``Origin``
            accepted). For another host, name the hosts clients use in ``allowed_hosts``.
        allowed_hosts: for a non-loopback ``host``: the host names a ``Host`` (and any
            ``Origin``) header may carry, any port (others get 421/403); ``"*"`` accepts any
            (only behind a proxy that checks ``Host``). ``None`` leaves a non-loopback server
            without a ``Host`` check.
        token_verifier: when given, every request needs ``Authorization: Bearer <token>``;
            unknown tokens get HTTP 401 and the verified ``AccessToken`` becomes the call's
            credentials (protocol notes §1.6).
        auth: the SDK's ``AuthSettings`` (issuer, resource URL, required scopes); by default
            a resource server with no advertised metadata and no required scopes.
        max_body: the largest request body in bytes (default 4 MiB, the SDK's own default);
            larger bodies get HTTP 413 before anything is parsed. Every body is also parsed
            strictly (:func:`foldkit_agent.edge.wire.loads_strict`: duplicate keys, ``NaN``, lone
            surrogates and nesting over 100 levels are a JSON-RPC parse error, HTTP 400).

    Returns:
        A :class:`starlette.applications.Starlette` whose lifespan runs the MCP session
        manager (run that lifespan when you mount it inside another app).

    Example:
        >>> app = http_app(rt, name="todo", version="1.0", token_verifier=verifier)
        >>> uvicorn.run(app, host="127.0.0.1", port=8000)
    """
    server = mcp_server(
        target, name=name, version=version, instructions=instructions, principal_of=principal_of
    )
    if token_verifier is not None and auth is None:
        auth = AuthSettings(issuer_url="http://127.0.0.1", resource_server_url=None)  # pyright: ignore[reportArgumentType]
    app = server.streamable_http_app(
        streamable_http_path=path,
        host=host,
        auth=auth,
        token_verifier=token_verifier,
        max_request_body_size=max_body,
    )
    hosts = None if allowed_hosts is None else [*allowed_hosts, *LOOPBACK_HOSTS]
    app.add_middleware(JsonBodyGuard, max_body=max_body, allowed_hosts=hosts)
    inner = app.router.lifespan_context

    @asynccontextmanager
    async def lifespan(application: Starlette) -> AsyncGenerator[None]:
        async with inner(application):
            try:
                yield
            finally:
                # Calls still waiting (for a completion, say) answer "cancelled, outcome
                # unknown" before the SDK's task group is cancelled under them.
                with anyio.CancelScope(shield=True):
                    await server.abort_calls(_SHUTDOWN_GRACE)
                server.close_feeds()

    app.router.lifespan_context = lifespan
    app.state.mcp_server = server
    return app
