"""MCP over this process's stdin/stdout: the claimed descriptors and a strict line reader."""

from __future__ import annotations

import io
import json
import os
from collections.abc import (
    AsyncIterator,
    Generator,
)
from contextlib import contextmanager, suppress
from typing import Any, BinaryIO, cast

import anyio
import mcp.types as types
from mcp.shared.message import SessionMessage

from ...edge.wire import (
    WireError,
    jsonrpc_code,
    jsonrpc_problem,
    loads_strict,
)
from .server import FoldkitMCPServer

__all__ = [
    "serve_stdio",
]


async def serve_stdio(server: FoldkitMCPServer) -> None:
    """Serve ``server`` over this process's stdin/stdout until the client closes the pipe.

    Args:
        server: what :func:`mcp_server` built (its ``listing``, ``progress_interval`` and
            ``credentials_of`` included); its feeds are closed when serving ends.

    stdio authenticates nobody: with the default ``credentials_of`` every call has
    ``credentials=None``, so capabilities guarded by ``authorize`` are refused (fail closed)
    unless the host passes a local ``credentials_of``
    (:class:`~foldkit_agent.adapters.mcp.LocalUser`). Each stdin line must be one strict
    JSON-RPC message; any other is answered with a JSON-RPC error and never reaches the SDK.

    Example:
        >>> async with examples.todo.runtime() as rt:
        ...     await serve_stdio(mcp_server(rt, name="todo", version="1.0"))
    """
    from mcp.server.stdio import stdio_server

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
