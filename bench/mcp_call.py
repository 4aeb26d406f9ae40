"""MCP: tools/call round trip and tools/list size, in-memory, ours vs FastMCP 4 vs the floor.

    python -m bench.mcp_call

Every server is driven by the same official ``mcp.Client`` over its in-memory transport
(default mode: the 2026-07-28 era), in alternating batches in one process:

* **ours**: ``mcp_server(runtime)``; ``set_quantity`` goes through ``dispatch_unknown`` (strict
  decoding, audit off) and dispatches ``SetQuantity`` on a running Program.
* **FastMCP 4**: a hand-written ``@mcp.tool`` with the same typed parameters (pydantic
  validation) that builds the same ``SetQuantity`` and dispatches it on the same host.
* **floor**: the SDK's low-level ``Server`` with a no-op tool.

tools/list: ours with 10/100/1,000 capabilities vs the low-level server returning the same
number of precomputed tools.
"""

from __future__ import annotations

import asyncio
import platform
from typing import Any

import mcp.types as types
from mcp import Client
from mcp.server import Server
from pydantic import BaseModel

from foldkit_agent import Program, agent
from foldkit_agent.adapters.mcp import OUTPUT_SCHEMA, mcp_server
from foldkit_agent.message import Message, message_union

from .harness import compare, us


class Model(BaseModel, frozen=True):
    count: int = 0


class SetQuantity(Message):
    item_id: str
    qty: int


def update(model: Model, msg: Message) -> Model:
    return model


ARGS = {"item_id": "sku-1", "qty": 2}
NOOP = types.Tool(name="noop", description="Does nothing", input_schema={"type": "object"})


def floor_server(tools: list[types.Tool]) -> Server[Any]:
    async def list_tools(ctx: Any, params: Any) -> types.ListToolsResult:
        return types.ListToolsResult(tools=tools)

    async def call_tool(ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        return types.CallToolResult(content=[types.TextContent(type="text", text="ok")])

    return Server("floor", version="1", on_list_tools=list_tools, on_call_tool=call_tool)


def fastmcp_server(host: Any) -> Any:
    from fastmcp import FastMCP

    fm = FastMCP("fastmcp")

    @fm.tool(name="set_quantity", description="Set a quantity")
    async def set_quantity(item_id: str, qty: int) -> dict[str, Any]:  # pyright: ignore[reportUnusedFunction]
        message = SetQuantity(item_id=item_id, qty=qty)
        host.dispatch(message)
        return {"status": "dispatched", "message": message.encode()}

    return fm


class _FakeCtx:
    """Just enough of a request context for calling the handler directly (no connection)."""

    session: Any = None
    method = "tools/list"
    meta = None


def many(n: int) -> tuple[Any, list[types.Tool]]:
    classes = [
        type(f"Set{i}", (Message,), {"__annotations__": {"qty": int}, "__module__": __name__})
        for i in range(n)
    ]
    union = message_union(*classes)
    definition = agent.make(
        messages=agent.expose(union, {c: f"Set value {i}" for i, c in enumerate(classes)})
    )
    tools = [
        types.Tool(
            name=c.name,
            description=c.description,
            input_schema=c.input_schema,
            output_schema=OUTPUT_SCHEMA,
        )
        for c in definition.capabilities
    ]
    return definition, tools


async def main() -> None:
    rows: list[tuple[str, str, str, str, str]] = []
    async with Program(init=Model(), update=update).run() as running:
        host = running.host
        rt = agent.bind(
            definition=agent.make(
                messages=agent.expose(message_union(SetQuantity), {SetQuantity: "Set a quantity"})
            ),
            host=host,
        )
        ours_server = mcp_server(rt, name="ours", version="1")
        fm = fastmcp_server(host)
        async with (
            Client(ours_server) as ours,
            Client(floor_server([NOOP])) as floor,
        ):
            from fastmcp import Client as FastClient

            async with FastClient(fm) as fast:

                async def call_ours() -> None:
                    r = await ours.call_tool("set_quantity", ARGS)
                    assert not r.is_error

                async def call_fast() -> None:
                    r = await fast.call_tool("set_quantity", ARGS)
                    assert not r.is_error

                async def call_floor() -> None:
                    await floor.call_tool("noop", {})

                vs_fast = await compare(call_ours, call_fast, batch=50, rounds=30, warmup=200)
                vs_floor = await compare(call_ours, call_floor, batch=50, rounds=30, warmup=200)
            rows.append(
                (
                    "tools/call vs FastMCP 4",
                    f"{us(vs_fast.ours_p50)} / {us(vs_fast.ours_p90)}",
                    f"{us(vs_fast.base_p50)} / {us(vs_fast.base_p90)}",
                    f"{vs_fast.ratio:.2f}x",
                    "<= 1.0x",
                )
            )
            rows.append(
                (
                    "tools/call vs floor (no-op tool)",
                    f"{us(vs_floor.ours_p50)} / {us(vs_floor.ours_p90)}",
                    f"{us(vs_floor.base_p50)} / {us(vs_floor.base_p90)}",
                    f"{vs_floor.ratio:.2f}x",
                    "",
                )
            )
        for n in (10, 100, 1000):
            definition, tools = many(n)
            big = agent.bind(definition=definition, host=host)
            async with (
                Client(mcp_server(big, name="ours", version="1")) as ours,
                Client(floor_server(tools)) as floor,
            ):

                async def list_ours() -> None:
                    assert len((await ours.list_tools()).tools) == n  # noqa: B023

                async def list_floor() -> None:
                    assert len((await floor.list_tools()).tools) == n  # noqa: B023

                rounds, batch = (20, 20) if n < 1000 else (10, 5)
                cmp = await compare(list_ours, list_floor, batch=batch, rounds=rounds, warmup=5)
            server = mcp_server(big, name="ours", version="1")
            handler = server.get_request_handler("tools/list")
            assert handler is not None
            ctx: Any = _FakeCtx()

            async def serve_ours() -> None:
                result = await handler.handler(ctx, None)  # noqa: B023
                result.model_dump(by_alias=True, mode="json", exclude_none=True)

            async def serve_floor() -> None:
                result = types.ListToolsResult(tools=tools)  # noqa: B023
                result.model_dump(by_alias=True, mode="json", exclude_none=True)

            side = await compare(serve_ours, serve_floor, batch=5, rounds=10, warmup=3)
            rows.append(
                (
                    f"tools/list server side (handler + JSON), {n:,}",
                    f"{us(side.ours_p50)} / {us(side.ours_p90)}",
                    f"{us(side.base_p50)} / {us(side.base_p90)}",
                    f"{side.ratio:.2f}x",
                    "",
                )
            )
            rows.append(
                (
                    f"tools/list, {n:,} capabilities",
                    f"{us(cmp.ours_p50)} / {us(cmp.ours_p90)}",
                    f"{us(cmp.base_p50)} / {us(cmp.base_p90)}",
                    f"{cmp.ratio:.2f}x",
                    "<= 5 ms" if n == 1000 else "",
                )
            )
    print(
        f"Python {platform.python_version()}, {platform.system()}; in-memory mcp.Client, modern era"
    )
    print("| scenario | ours p50 / p90 | baseline p50 / p90 | ratio (p50) | target |")
    print("| --- | ---: | ---: | ---: | ---: |")
    for row in rows:
        print("| " + " | ".join(row) + " |")


if __name__ == "__main__":
    asyncio.run(main())
