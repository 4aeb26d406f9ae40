"""Servers for the HTTP load scenarios, each run in its own process (:func:`start`).

    foldkit-agent serve bench.servers:runtime --mcp http --port 0   # ours
    python -m bench.servers fastmcp [--tools N]
    python -m bench.servers floor
    python -m bench.servers starlette

Every server answers ``tools/call`` of ``increment`` (``{"by": int}``) at ``/mcp``:

* **ours**: ``foldkit-agent serve`` on :func:`runtime`: the capability ``increment`` (strict
  decoding, undeclared fields refused) dispatches ``Incremented`` into a running Program;
  ``agent://context`` reports how many were applied. ``tools_10``/``tools_100``/``tools_1000``
  serve that many capabilities instead (for ``tools/list``).
* **fastmcp**: FastMCP 4, an async ``@mcp.tool`` that validates the same input with pydantic
  (``strict_input_validation``, extra fields refused by the model) and dispatches the same
  Message into the same Program; ``count`` reports how many were applied. Its app is
  ``http_app(path="/mcp")`` with FastMCP's defaults (``stateless_http`` and ``json_response``
  off): a 2026-07-28 request is stateless whatever ``stateless_http`` says, and ours answers a
  call with no mid-call notifications as JSON through the same SDK path.
* **floor**: the ``mcp`` SDK's low-level ``Server`` with a no-op tool and no validation of its
  own, through ``streamable_http_app`` as ours builds it (the SDK floor).
* **starlette**: a bare Starlette route that parses the JSON-RPC body and answers a JSON
  result echoing the arguments (the stack floor).

The three that are not ours run through :func:`foldkit_agent.cli.serve.run_http` on a socket
from ``bind_socket``, under ``anyio.run`` as ``serve`` runs: the same uvicorn protocol class,
event loop, connection limits, one worker and log level (no access log), ``TCP_NODELAY``. Each
prints ``serving MCP at http://...`` on standard error once its socket listens, as ``serve``
does.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import re
import shutil
import sys
from collections.abc import AsyncIterator, Callable, Sequence
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
from pydantic import BaseModel, ConfigDict, ValidationError

from foldkit_agent import AgentRuntime, Message, Program, agent, message_union, projection, surface

ROOT = Path(__file__).resolve().parent.parent

# MODEL


class Model(BaseModel, frozen=True):
    count: int = 0


# MESSAGE


class Incremented(Message):
    by: int


class Nothing(Message):
    pass


Msg = message_union(Incremented, Nothing)
App = surface.application(model=Model, message=Msg)


# UPDATE


def update(model: Model, msg: Message) -> Model:
    if isinstance(msg, Incremented):
        return Model(count=model.count + msg.by)
    return model


Contract = agent.make(
    context=projection.pick(App.model.count),
    messages=agent.expose(Msg, {Incremented: agent.variant(name="increment", description="Add")}),
)


class IncrementInput(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)
    by: int


# OURS: runtime factories for `foldkit-agent serve bench.servers:<name> --mcp http`


@asynccontextmanager
async def runtime() -> AsyncIterator[AgentRuntime[Any, Any]]:
    """The bench contract (``increment``) bound to a running Program."""
    async with Program(init=Model(), update=update).run() as running:
        yield agent.bind(definition=Contract, host=running.host)


def setters(n: int) -> Any:
    """A contract of ``n`` capabilities ``set_0`` .. (``{"qty": int}`` each)."""
    classes = [
        type(f"Set{i}", (Message,), {"__annotations__": {"qty": int}, "__module__": __name__})
        for i in range(n)
    ]
    return agent.make(
        messages=agent.expose(
            message_union(*classes), {c: f"Set value {i}" for i, c in enumerate(classes)}
        )
    )


def listing(n: int) -> Callable[[], AbstractAsyncContextManager[AgentRuntime[Any, Any]]]:
    """A runtime factory serving :func:`setters` ``(n)`` on a running Program."""

    @asynccontextmanager
    async def factory() -> AsyncIterator[AgentRuntime[Any, Any]]:
        async with Program(init=Model(), update=update).run() as running:
            yield agent.bind(definition=setters(n), host=running.host)

    return factory


tools_10 = listing(10)
tools_100 = listing(100)
tools_1000 = listing(1000)


# THE OTHERS


def fastmcp_app(running: Any, tools: int | None) -> Any:
    from fastmcp import FastMCP
    from fastmcp.exceptions import ToolError

    mcp = FastMCP("bench", strict_input_validation=True)
    if tools is not None:
        for i in range(tools):

            async def set_value(qty: int) -> dict[str, Any]:
                return {"status": "dispatched", "qty": qty}

            mcp.tool(set_value, name=f"set_{i}", description=f"Set value {i}")
        return mcp.http_app(path="/mcp")

    @mcp.tool(name="increment", description="Add")
    async def increment(by: int) -> dict[str, Any]:  # pyright: ignore[reportUnusedFunction]
        try:
            message = Incremented.model_validate(IncrementInput(by=by).model_dump())
        except ValidationError as exc:
            raise ToolError("invalid input") from exc
        running.host.dispatch(message)
        return {"status": "dispatched"}

    @mcp.tool(name="count", description="How many were applied")
    async def count() -> dict[str, int]:  # pyright: ignore[reportUnusedFunction]
        return {"count": running.model().count}

    return mcp.http_app(path="/mcp")


def floor_app() -> Any:
    import mcp.types as types
    from mcp.server import Server
    from mcp.server.transport_security import TransportSecuritySettings

    tool = types.Tool(
        name="increment",
        description="Add",
        input_schema={"type": "object", "properties": {"by": {"type": "integer"}}},
    )

    async def list_tools(ctx: Any, params: Any) -> types.ListToolsResult:
        return types.ListToolsResult(tools=[tool])

    async def call_tool(ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        return types.CallToolResult(content=[types.TextContent(type="text", text="ok")])

    server = Server("floor", version="1", on_list_tools=list_tools, on_call_tool=call_tool)
    return server.streamable_http_app(
        streamable_http_path="/mcp",
        transport_security=TransportSecuritySettings(enable_dns_rebinding_protection=False),
    )


def starlette_app() -> Any:
    from starlette.applications import Starlette
    from starlette.requests import Request
    from starlette.responses import JSONResponse
    from starlette.routing import Route

    async def echo(request: Request) -> JSONResponse:
        body = await request.json()
        arguments = body.get("params", {}).get("arguments", {})
        return JSONResponse(
            {
                "jsonrpc": "2.0",
                "id": body.get("id"),
                "result": {"content": [{"type": "text", "text": "ok"}], "echo": arguments},
            }
        )

    return Starlette(routes=[Route("/mcp", echo, methods=["POST"])])


async def serve_other(kind: str, tools: int | None) -> None:
    """Serve ``kind`` the way ``foldkit-agent serve`` serves ours (see the module docstring)."""
    from foldkit_agent.cli.serve import bind_socket, run_http

    async with Program(init=Model(), update=update).run() as running:
        if kind == "fastmcp":
            app = fastmcp_app(running, tools)
        elif kind == "floor":
            app = floor_app()
        else:
            app = starlette_app()
        sock = bind_socket("127.0.0.1", 0)
        print(f"serving MCP at http://127.0.0.1:{sock.getsockname()[1]}/mcp", file=sys.stderr)
        sys.stderr.flush()
        await run_http(app, sock=sock)


# STARTING ONE


KINDS = ("ours", "fastmcp", "floor", "starlette")


@dataclass(frozen=True)
class Served:
    """A running server process: its kind, ``/mcp`` URL and process id."""

    kind: str
    url: str
    pid: int


def can_pin(cpu: int | None) -> bool:
    """Whether ``cpu`` names a CPU of this machine and ``taskset`` is here to pin to it."""
    return cpu is not None and shutil.which("taskset") is not None and (os.cpu_count() or 1) > cpu


def pinned(cpu: int | None, argv: Sequence[str]) -> list[str]:
    """``argv`` run on CPU ``cpu`` with ``taskset`` (unpinned when it cannot be, see
    :func:`can_pin`)."""
    return ["taskset", "-c", str(cpu), *argv] if can_pin(cpu) else list(argv)


BEFORE_ENV = "BENCH_BEFORE_SRC"
"""For an A/B: the ``src`` directory of another checkout, served as kind ``before`` (ours,
that checkout's code: ``git archive <commit> src | tar -x -C DIR``, then ``DIR/src``)."""


def command(kind: str, tools: int | None = None) -> list[str]:
    """The command line that serves ``kind`` (with ``tools`` capabilities for tools/list)."""
    if kind in ("ours", "before"):
        target = "bench.servers:runtime" if tools is None else f"bench.servers:tools_{tools}"
        return [sys.executable, "-m", "foldkit_agent.cli", "serve", target]
    if kind not in KINDS:
        raise ValueError(f"unknown server kind {kind!r}: one of {', '.join(KINDS)}")
    extra = [] if tools is None else ["--tools", str(tools)]
    return [sys.executable, "-m", "bench.servers", kind, *extra]


async def pin(pid: int, cpu: int | None) -> None:
    """Move every thread of process ``pid`` to CPU ``cpu`` (``taskset -a -p``); threads it
    starts later inherit it. Nothing when it cannot be (:func:`can_pin`)."""
    if not can_pin(cpu):
        return
    argv = ["taskset", "-a", "-p", "-c", str(cpu), str(pid)]
    proc = await asyncio.create_subprocess_exec(*argv, stdout=asyncio.subprocess.DEVNULL)
    if await proc.wait() != 0:
        raise RuntimeError(f"could not pin process {pid} to CPU {cpu}")


@asynccontextmanager
async def start_many(
    specs: Sequence[tuple[str, int | None]], cpu: int | None = 0
) -> AsyncIterator[list[Served]]:
    """Run one server process per ``(kind, tools)`` in ``specs``; yield them, in order.

    They start side by side on every core (start-up is not measured), then each is pinned to
    ``cpu`` once it listens; every one is terminated on exit.
    """
    procs: list[asyncio.subprocess.Process] = []
    try:
        for kind, tools in specs:
            argv = command(kind, tools)
            path = str(ROOT)
            if kind in ("ours", "before"):
                argv += ["--mcp", "http", "--port", "0"]
            if kind == "before":  # that checkout's foldkit_agent before this one's
                path = os.pathsep.join([os.environ[BEFORE_ENV], path])
            procs.append(
                await asyncio.create_subprocess_exec(
                    *argv,
                    cwd=ROOT,
                    stderr=asyncio.subprocess.PIPE,
                    env={**os.environ, "PYTHONPATH": path, "PYTHONUNBUFFERED": "1"},
                )
            )
        served: list[Served] = []
        for (kind, _), proc in zip(specs, procs, strict=True):
            assert proc.stderr is not None
            seen = ""
            found = None
            with anyio.fail_after(120):
                while found is None and (line := (await proc.stderr.readline()).decode()):
                    seen += line
                    found = re.search(r"serving MCP at (http://\S+/mcp)", line)
            if found is None:
                raise RuntimeError(f"the {kind} server did not start:\n{seen}")
            await pin(proc.pid, cpu)
            served.append(Served(kind, found.group(1), proc.pid))
        async with anyio.create_task_group() as tg:
            for proc in procs:  # a server that logs never blocks on a full pipe
                tg.start_soon(_drain, proc)
            yield served
            tg.cancel_scope.cancel()
    finally:
        for proc in procs:
            if proc.returncode is None:
                proc.terminate()
        with anyio.fail_after(30):
            for proc in procs:
                await proc.wait()


async def _drain(proc: asyncio.subprocess.Process) -> None:
    assert proc.stderr is not None
    while await proc.stderr.readline():
        pass


@asynccontextmanager
async def start(kind: str, tools: int | None = None, cpu: int | None = 0) -> AsyncIterator[str]:
    """Run server ``kind`` in its own process (pinned to ``cpu``); yield its ``/mcp`` URL."""
    async with start_many([(kind, tools)], cpu) as (served,):
        yield served.url


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.servers")
    parser.add_argument("kind", choices=KINDS[1:])
    parser.add_argument("--tools", type=int, default=None, help="serve N tools (tools/list)")
    args = parser.parse_args(argv)
    anyio.run(serve_other, args.kind, args.tools)


if __name__ == "__main__":
    main()
