"""Shared helpers for the MCP tests: connect in either era and count change notifications."""

from __future__ import annotations

import socket
from collections.abc import AsyncGenerator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any

import anyio
import httpx2
import mcp.types as types
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.server import Server
from mcp.server.subscriptions import ResourceUpdated, ToolsListChanged
from mcp_types.version import LATEST_HANDSHAKE_VERSION

from tests.support.mcp_cart import Marked

MARKER = "agent://resources/marker"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@dataclass
class Notes:
    """What a client heard, in order, up to the marker sentinel."""

    tools: int = 0
    updated: list[str] = field(default_factory=list[str])
    marker: anyio.Event = field(default_factory=anyio.Event)

    def tool_list_changed(self) -> None:
        self.tools += 1

    def resource_updated(self, uri: str) -> None:
        self.updated.append(uri)
        if uri == MARKER:
            self.marker.set()

    async def until_marker(self, cart: Any) -> None:
        """Send the sentinel and wait until it (and everything before it) arrived."""
        self.marker = anyio.Event()
        cart.dispatch(Marked())
        with anyio.fail_after(5):
            await self.marker.wait()


@asynccontextmanager
async def over_http(app: Any, mode: str) -> AsyncGenerator[Client]:
    """An official ``Client`` in ``mode`` for ``app`` (an ``http_app``) on a loopback port."""
    from tests.support.serving import served

    async with served(app) as origin:
        http = httpx2.AsyncClient(timeout=10)
        wire = streamable_http_client(f"{origin}/mcp", http_client=http)
        async with Client(wire, mode=mode) as client:
            yield client


@asynccontextmanager
async def connected(target: Any, mode: str) -> AsyncGenerator[tuple[Client, Notes]]:
    """A Client for ``target`` (a server, or a zero-argument factory of a transport)."""
    server = target if isinstance(target, Server) else target()
    notes = Notes()
    if mode == "legacy":

        async def on_message(message: Any) -> None:
            root = getattr(message, "root", message)
            if isinstance(root, types.ToolListChangedNotification):
                notes.tool_list_changed()
            elif isinstance(root, types.ResourceUpdatedNotification):
                notes.resource_updated(str(root.params.uri))

        async with Client(server, mode="legacy", message_handler=on_message) as client:
            await client.subscribe_resource(MARKER)
            yield client, notes
        return
    async with Client(server, mode=mode) as client:
        async with client.listen(tools_list_changed=True, resource_subscriptions=[MARKER]) as sub:

            async def pump() -> None:
                async for event in sub:
                    if isinstance(event, ToolsListChanged):
                        notes.tool_list_changed()
                    elif isinstance(event, ResourceUpdated):
                        notes.resource_updated(event.uri)

            async with anyio.create_task_group() as tg:
                tg.start_soon(pump)
                yield client, notes
                tg.cancel_scope.cancel()


INITIALIZE: dict[str, Any] = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": LATEST_HANDSHAKE_VERSION,
        "capabilities": {},
        "clientInfo": {"name": "limits", "version": "1"},
    },
}
"""A handshake-era ``initialize`` request body: POSTed without ``Mcp-Session-Id``, it opens a
session."""
