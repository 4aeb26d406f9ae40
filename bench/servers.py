"""Servers for the HTTP load scenario, each run in its own process.

    python -m bench.servers ours
    python -m bench.servers fastmcp

Both serve one tool, ``increment`` (``{"by": int}``, extra fields refused), that validates its
input and dispatches the same Message into the same Program, and a ``count`` tool (ours: the
``agent://context`` resource) reporting how many Messages were applied. Each binds a free
loopback port and prints ``PORT <n>`` once the socket listens (connections made before the
server runs wait in the backlog).
"""

from __future__ import annotations

import asyncio
import socket
import sys
from typing import Any

import uvicorn
from pydantic import BaseModel, ConfigDict, ValidationError

from foldkit_agent import Message, Program, agent, message_union, projection, surface

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


def listen() -> socket.socket:
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)  # as foldkit-agent serve does
    sock.bind(("127.0.0.1", 0))
    sock.listen(1024)
    return sock


async def serve(app: Any) -> None:
    sock = listen()
    print(f"PORT {sock.getsockname()[1]}", flush=True)
    await uvicorn.Server(uvicorn.Config(app, log_level="error", lifespan="on")).serve(
        sockets=[sock]
    )


async def ours() -> None:
    from foldkit_agent.adapters.mcp import http_app

    async with Program(init=Model(), update=update).run() as running:
        rt = agent.bind(definition=Contract, host=running.host)
        await serve(http_app(rt, name="bench", version="1"))


async def fastmcp_server() -> None:
    from fastmcp import FastMCP
    from fastmcp.exceptions import ToolError

    async with Program(init=Model(), update=update).run() as running:
        mcp = FastMCP("bench")

        @mcp.tool(name="increment", description="Add")
        def increment(by: int) -> dict[str, Any]:  # pyright: ignore[reportUnusedFunction]
            try:
                message = Incremented.model_validate(IncrementInput(by=by).model_dump())
            except ValidationError as exc:
                raise ToolError("invalid input") from exc
            running.host.dispatch(message)
            return {"status": "dispatched"}

        @mcp.tool(name="count", description="How many were applied")
        def count() -> dict[str, int]:  # pyright: ignore[reportUnusedFunction]
            return {"count": running.model().count}

        await serve(mcp.http_app(path="/mcp"))


def main() -> None:
    asyncio.run(ours() if sys.argv[1] == "ours" else fastmcp_server())


if __name__ == "__main__":
    main()
