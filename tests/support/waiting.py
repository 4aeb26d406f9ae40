"""Callers that hold calls waiting for a person on a served app, for the per-caller caps.

:class:`HeldPerson` is an MCP elicitation callback that keeps every question open until
released (then declines, so nothing is sent). :func:`holding_mcp` opens the official MCP
client for one token in one era, starts ``count`` calls of a ``confirm`` capability and yields
once every one of them is waiting for that person: over the handshake era each holds its
``tools/call`` request open (an elicitation on its stream), over the 2026 era each is parked on
the server while the client holds its ``InputRequiredResult``.

Example::

    async with holding_mcp(f"{origin}/mcp", "alice-token", "legacy", 16) as alice:
        ...  # 16 of alice's delete_todo calls wait for a person
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import anyio
import httpx2
import mcp.types as types
from mcp import Client
from mcp.client.streamable_http import streamable_http_client


class HeldPerson:
    """The person at an MCP client who never answers until :meth:`release` (then declines)."""

    def __init__(self) -> None:
        self.asked = 0
        self._released = anyio.Event()
        self._grew = anyio.Event()

    async def __call__(self, _context: Any, params: Any) -> types.ElicitResult:
        assert isinstance(params, types.ElicitRequestFormParams)
        self.asked += 1
        self._grew.set()
        await self._released.wait()
        return types.ElicitResult(action="decline")

    async def asked_at_least(self, count: int) -> None:
        """Wait (up to 30 s) until ``count`` questions are open."""
        with anyio.fail_after(30):
            while self.asked < count:
                self._grew = anyio.Event()
                await self._grew.wait()

    def release(self) -> None:
        self._released.set()


def mcp_client(url: str, token: str, mode: str, person: Any = None) -> Client:
    """The official MCP client on ``url`` with ``token``, in ``mode`` (``"legacy"``: the
    handshake era; ``"auto"``: the 2026 era), with ``person`` as its elicitation callback."""
    http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"}, timeout=60)
    transport = streamable_http_client(url, http_client=http)
    if person is None:
        return Client(transport, mode=mode)
    return Client(transport, mode=mode, elicitation_callback=person)


@asynccontextmanager
async def holding_mcp(
    url: str,
    token: str,
    mode: str,
    count: int,
    capability: str = "delete_todo",
    arguments: dict[str, Any] | None = None,
) -> AsyncIterator[tuple[Client, HeldPerson]]:
    """Yield ``(client, person)`` once ``count`` calls of ``capability`` wait for ``person``;
    on exit the person declines them all and every call has answered."""
    person = HeldPerson()
    async with mcp_client(url, token, mode, person) as client:
        async with anyio.create_task_group() as tg:
            for _ in range(count):
                tg.start_soon(client.call_tool, capability, arguments or {})
            await person.asked_at_least(count)
            try:
                yield client, person
            finally:
                person.release()
