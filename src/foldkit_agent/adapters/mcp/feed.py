"""Change feeds: one runtime's ``watch`` changes as MCP notifications, for both protocol eras.

Modern-era clients hold a ``subscriptions/listen`` stream (fed through an in-process bus);
handshake-era connections (stdio and HTTP) get ``notifications/tools/list_changed`` and
``notifications/resources/updated`` pushed in order, only for the URIs they subscribed to.
"""

from __future__ import annotations

import asyncio
import logging
from collections import deque
from collections.abc import (
    Callable,
)
from typing import Any

import anyio
import mcp.types as types
from mcp.server.connection import Connection
from mcp.server.subscriptions import (
    ListenHandler,
    ResourceUpdated,
    ServerEvent,
    ToolsListChanged,
)
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

from ...errors import AgentError
from ...runtime.bound import AgentRuntime, Change
from .apps import tool_meta
from .listing import Catalog, Listing, unavailable_tool
from .shapes import CONTEXT_URI, RESOURCE_URI_PREFIX, tool

__all__ = []

_log = logging.getLogger("foldkit_agent.adapters.mcp")


class _SyncBus:
    """An in-process ``SubscriptionBus`` that can also deliver synchronously (keeps order).

    Attributes:
        listeners: the ``subscriptions/listen`` streams' listeners (empty: nobody to tell).
    """

    def __init__(self) -> None:
        self.listeners: dict[object, Callable[[ServerEvent], None]] = {}

    def emit(self, event: ServerEvent) -> None:
        for listener in list(self.listeners.values()):
            try:
                listener(event)
            except Exception:
                _log.exception("a subscriptions/listen listener raised")

    async def publish(self, event: ServerEvent) -> None:
        self.emit(event)
        await anyio.lowlevel.checkpoint()

    def subscribe(self, listener: Callable[[ServerEvent], None]) -> Callable[[], None]:
        token = object()
        self.listeners[token] = listener

        def unsubscribe() -> None:
            self.listeners.pop(token, None)

        return unsubscribe


class LegacyPeer:
    """One handshake-era connection: its resource subscriptions and an ordered push queue."""

    __slots__ = ("closed", "connection", "draining", "queue", "uris")

    def __init__(self, connection: Connection) -> None:
        self.connection = connection
        self.uris: set[str] = set()
        self.queue: deque[tuple[str, dict[str, Any] | None]] = deque()
        self.draining = False
        self.closed = False


class Feed:
    """Turns one runtime's ``watch`` changes into MCP notifications for both eras."""

    def __init__(self, runtime: AgentRuntime[Any, Any], listing: Listing = "available") -> None:
        self.bus = _SyncBus()
        self.listen = ListenHandler(self.bus)
        self.peers: dict[int, LegacyPeer] = {}
        self.listing: Listing = listing
        caps = runtime.messages.all()
        view = runtime.definition.view
        self.tools: dict[str, types.Tool] = {
            c.name: tool(c, None if view is None else tool_meta(view, c)) for c in caps
        }
        self.unavailable: dict[str, types.Tool] = (
            {n: unavailable_tool(t) for n, t in self.tools.items()} if listing == "all" else {}
        )
        self.catalog: Catalog | None = Catalog(caps) if listing == "catalog" else None
        # protocol version -> (tools/list's wire result, that result encoded as the SDK writes
        # it), for the availability set of now: emptied when it changes (_on_change, called
        # synchronously from the host's model notification), never filled without a watch
        self.listed: dict[str, tuple[dict[str, Any], bytes]] = {}
        self.watching = False
        self._resources = runtime.resources.names()
        self._tasks: set[asyncio.Task[None]] = set()
        self._unwatch: Callable[[], None] | None = None
        try:
            self._unwatch = runtime.watch(self._on_change)
            self.watching = True
        except AgentError:
            _log.warning("the host has no subscribe(); MCP clients will not be told about changes")

    def peer(self, connection: Connection) -> LegacyPeer:
        key = id(connection)
        peer = self.peers.get(key)
        if peer is None:
            peer = self.peers[key] = LegacyPeer(connection)
            connection.exit_stack.callback(self._drop, key)
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
        for name in self._resources:
            if name in change.resources:
                uris.append(RESOURCE_URI_PREFIX + name)
        # the catalog's two tools never change, whatever becomes available
        tools_changed = change.capabilities and self.catalog is None
        if change.capabilities:
            self.listed.clear()
        if self.bus.listeners:  # no event is built for no listener
            if tools_changed:
                self.bus.emit(ToolsListChanged())
            for uri in uris:
                self.bus.emit(ResourceUpdated(uri=uri))
        for peer in list(self.peers.values()):
            if peer.connection.protocol_version in MODERN_PROTOCOL_VERSIONS:
                continue
            if tools_changed:
                peer.queue.append(("notifications/tools/list_changed", None))
            for uri in uris:
                if uri in peer.uris:
                    peer.queue.append(("notifications/resources/updated", {"uri": uri}))
            if peer.queue and not peer.draining:
                self._drain(peer)

    def _drain(self, peer: LegacyPeer) -> None:
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
        self.watching = False
        self.listed.clear()
        if self._unwatch is not None:
            unwatch, self._unwatch = self._unwatch, None
            unwatch()
        self.listen.close()
        for task in list(self._tasks):
            task.cancel()
        self.peers.clear()
