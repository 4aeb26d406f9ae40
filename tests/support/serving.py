"""Serve an ASGI app on a pre-bound loopback port, on the test's own event loop; or run
``foldkit-agent serve`` as a real subprocess (:func:`serve_process`).

The socket is bound (and listening) before the server starts, so the URL is usable at once:
connections wait in the backlog until uvicorn accepts them, and no test sleeps for startup.
It is the same path ``foldkit-agent serve`` takes (``bind_socket`` + ``run_http``), lifespans
included.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import resource
import signal
import sys
from collections.abc import AsyncIterator, Callable, Mapping
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any

import anyio

from foldkit_agent.cli.serve import bind_socket, run_http
from tests.support.paths import ROOT


@asynccontextmanager
async def served(app: Any) -> AsyncIterator[str]:
    """Yield ``http://127.0.0.1:<port>`` while ``app`` is served; stop it on exit."""
    async with served_built(lambda _origin: app) as origin:
        yield origin


@asynccontextmanager
async def served_built(build: Callable[[str], Any]) -> AsyncIterator[str]:
    """As :func:`served`, for an app that must know its own origin (the A2A card's interface
    URLs): ``build(origin)`` is called once the port is bound."""
    sock = bind_socket("127.0.0.1", 0)
    origin = f"http://127.0.0.1:{sock.getsockname()[1]}"
    app = build(origin)
    async with anyio.create_task_group() as tg:
        tg.start_soon(lambda: run_http(app, sock=sock))
        try:
            yield origin
        finally:
            tg.cancel_scope.cancel()
    sock.close()


class Lines(list[str]):
    """Lines of a process's standard error, gathered as they come; ``wait_for`` one."""

    def __init__(self) -> None:
        super().__init__()
        self._grew = anyio.Event()

    def add(self, line: str) -> None:
        self.append(line)
        self._grew.set()
        self._grew = anyio.Event()

    async def wait_for(self, text: str) -> str:
        """The first line containing ``text``, once it has been written."""
        return (await self.wait_for_many(text, 1))[0]

    async def wait_for_many(self, text: str, count: int) -> list[str]:
        """The first ``count`` lines containing ``text``, once they have been written."""
        while True:
            found = [line for line in self if text in line]
            if len(found) >= count:
                return found[:count]
            await self._grew.wait()


@asynccontextmanager
async def serve_process(
    target: str,
    *args: str,
    open_files: int | None = None,
    stderr: Lines | None = None,
    process: list[asyncio.subprocess.Process] | None = None,
) -> AsyncIterator[str]:
    """Run ``foldkit-agent serve TARGET ARGS --port 0`` as a subprocess; yield its origin
    (read from its first "serving ..." line), and SIGTERM it on exit.

    ``open_files`` caps the process's file descriptors (``RLIMIT_NOFILE``); ``stderr``, when
    given, receives each line the process writes to standard error after its first, as it
    comes (it is read either way, so a chatty server never blocks on a full pipe).
    ``process``, when given, receives the subprocess (to send it signals).
    """

    def limit() -> None:
        if open_files is not None:
            resource.setrlimit(resource.RLIMIT_NOFILE, (open_files, open_files))

    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "foldkit_agent.cli",
        "serve",
        target,
        *args,
        "--port",
        "0",
        cwd=ROOT,
        stderr=asyncio.subprocess.PIPE,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
        preexec_fn=limit,
    )
    assert proc.stderr is not None
    err = proc.stderr
    if process is not None:
        process.append(proc)

    async def collect() -> None:
        while line := await err.readline():
            if stderr is not None:
                stderr.add(line.decode(errors="replace").rstrip("\n"))

    try:
        with anyio.fail_after(30):
            line = (await err.readline()).decode()
        assert line.startswith("serving "), line
        found = re.search(r"http://[^/\s]+", line)
        assert found is not None, line
        async with anyio.create_task_group() as tg:
            tg.start_soon(collect)
            yield found.group(0)
            tg.cancel_scope.cancel()
    finally:
        if proc.returncode is None:  # a test may have stopped it with a signal of its own
            proc.terminate()
        with anyio.fail_after(15):
            rest = await err.read()  # the process ends once its pipes are read to the end
            await proc.wait()
        for line in rest.decode(errors="replace").splitlines() if stderr is not None else ():
            stderr.add(line)


@dataclass
class Served:
    """A ``foldkit-agent serve`` subprocess (:func:`serving`) and what it said on stderr."""

    proc: asyncio.subprocess.Process
    origin: str
    said: list[str] = field(default_factory=list[str])

    async def line(self, pattern: str) -> str:
        """The next line on the server's stderr matching ``pattern`` (waits up to 30 s)."""
        assert self.proc.stderr is not None
        with anyio.fail_after(30):
            while True:
                raw = await self.proc.stderr.readline()
                assert raw, f"the server exited without saying {pattern!r}: {self.said}"
                text = raw.decode()
                self.said.append(text)
                if re.search(pattern, text):
                    return text

    async def kill(self) -> None:
        """SIGKILL: the process ends at once, none of its shutdown runs."""
        self.proc.send_signal(signal.SIGKILL)
        with anyio.fail_after(15):
            assert await self.proc.wait() == -signal.SIGKILL


@asynccontextmanager
async def serving(
    *args: str,
    env: Mapping[str, str] | None = None,
    target: str = "examples.todo:runtime",
    port: int = 0,
) -> AsyncIterator[Served]:
    """Run ``foldkit-agent serve TARGET ARGS --port PORT`` (0: a free one) with ``env`` added
    to the environment; yield it once its first line says where it serves; SIGTERM it on exit
    if still running."""
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "foldkit_agent.cli", "serve", target, *args, "--port", str(port),
        cwd=ROOT,
        stderr=asyncio.subprocess.PIPE,
        env={**os.environ, "PYTHONUNBUFFERED": "1", **(env or {})},
    )  # fmt: skip
    running = Served(proc, "")
    try:
        first = await running.line(r".")
        assert first.startswith("serving "), first
        found = re.search(r"http://[^/\s]+", first)
        assert found is not None, first
        running.origin = found.group(0)
        yield running
    finally:
        if proc.returncode is None:
            proc.terminate()
            with anyio.fail_after(15):
                await proc.wait()


@dataclass
class Heard:
    """How many ``tools/list_changed`` an MCP client heard, and an event set at each."""

    tools: int = 0
    changed: anyio.Event = field(default_factory=anyio.Event)

    def tools_changed(self) -> None:
        self.tools += 1
        self.changed.set()

    async def next_change(self) -> None:
        """Wait (up to 15 s) for the next ``tools/list_changed`` after the last one waited."""
        with anyio.fail_after(15):
            await self.changed.wait()
        self.changed = anyio.Event()


@asynccontextmanager
async def mcp_client(
    url: str, token: str | None = None, *, mode: str = "auto", heard: Heard | None = None
) -> AsyncIterator[Any]:
    """The official MCP client on ``url`` (streamable HTTP) in ``mode`` (``"legacy"``: the
    handshake era; ``"auto"``: the 2026 era), sending ``token`` if given. With ``heard`` it
    listens for ``tools/list_changed`` (on the legacy session's stream, or a 2026-era
    ``subscriptions/listen``) and counts them there."""
    import httpx2
    import mcp.types as types
    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client
    from mcp.server.subscriptions import ToolsListChanged

    headers = {} if token is None else {"Authorization": f"Bearer {token}"}
    http = httpx2.AsyncClient(headers=headers, timeout=10)
    wire = streamable_http_client(url, http_client=http)

    async def on_message(message: Any) -> None:
        root = getattr(message, "root", message)
        if heard is not None and isinstance(root, types.ToolListChangedNotification):
            heard.tools_changed()

    if mode == "legacy" or heard is None:
        async with Client(wire, mode=mode, message_handler=on_message) as client:
            yield client
        return
    async with Client(wire, mode=mode) as client:
        async with client.listen(tools_list_changed=True) as sub:

            async def pump() -> None:
                async for event in sub:
                    if isinstance(event, ToolsListChanged):
                        heard.tools_changed()

            async with anyio.create_task_group() as tg:
                tg.start_soon(pump)
                yield client
                tg.cancel_scope.cancel()


async def todos_of(client: Any) -> list[dict[str, Any]]:
    """The todos in the context an MCP client of the todo app reads."""
    read = await client.read_resource("agent://context")
    return json.loads(read.contents[0].text)["todos"]


@asynccontextmanager
async def a2a_client(origin: str, token: str | None = None) -> AsyncIterator[Any]:
    """The official A2A SDK client (non-streaming) of the server at ``origin``, from its
    public card, sending ``token`` if given."""
    import httpx

    from tests.support.a2a_lab import card_client

    headers = {} if token is None else {"Authorization": f"Bearer {token}"}
    async with (
        httpx.AsyncClient(headers=headers, timeout=30) as http,
        card_client(http, origin) as client,
    ):
        yield client
