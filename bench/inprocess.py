"""Scenario 9: one tool call through the pydantic-ai toolset vs the same call over MCP in memory.

    python -m bench.inprocess

Both sides call ``set_quantity`` on the same bound runtime (audit in memory) over the same
running Program, in alternating batches:

* **ours**: ``FoldkitToolset.call_tool`` as pydantic-ai's tool manager calls it (the tool
  listed by ``get_tools`` for a run context, a context naming the tool call, the arguments as
  the model sent them);
* **baseline**: the official ``mcp.Client`` over its in-memory transport to
  ``mcp_server(runtime)``, ``call_tool("set_quantity", ...)``: what an in-process agent pays
  when it reaches the same application through MCP instead.

A second row times a whole pydantic-ai run of one tool call (a ``FunctionModel`` asking for it,
then answering) through the toolset, to show what the agent loop itself costs around it.
"""

from __future__ import annotations

import asyncio
from dataclasses import replace

from mcp import Client
from pydantic_ai import Agent, RunContext
from pydantic_ai.messages import ModelMessage, ModelRequest, ModelResponse, TextPart, ToolCallPart
from pydantic_ai.models.function import AgentInfo, FunctionModel
from pydantic_ai.models.test import TestModel
from pydantic_ai.usage import RunUsage

from foldkit_agent import Program, agent, message_union
from foldkit_agent.adapters.mcp import mcp_server
from foldkit_agent.adapters.pydantic_ai import toolset

from .harness import Row, compare, us
from .mcp_call import ARGS, Model, SetQuantity, update


def one_call(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
    last = messages[-1]
    if isinstance(last, ModelRequest) and any(p.part_kind == "tool-return" for p in last.parts):
        return ModelResponse(parts=[TextPart("done")])
    return ModelResponse(parts=[ToolCallPart("set_quantity", ARGS)])


async def run() -> list[Row]:
    """Scenario 9 as result rows (see the module docstring)."""
    async with Program(init=Model(), update=update).run() as running:
        rt = agent.bind(
            definition=agent.make(
                messages=agent.expose(message_union(SetQuantity), {SetQuantity: "Set a quantity"})
            ),
            host=running.host,
            audit=agent.audit_log(capacity=1000),
        )
        tools = toolset(rt)
        ctx: RunContext[None] = RunContext(deps=None, model=TestModel(), usage=RunUsage())
        tool = (await tools.get_tools(ctx))["set_quantity"]
        ctx = replace(ctx, tool_name="set_quantity", tool_call_id="call-1")  # as in a run step
        copilot = Agent(FunctionModel(one_call), toolsets=[tools])

        async def through_toolset() -> None:
            out = await tools.call_tool("set_quantity", dict(ARGS), ctx, tool)
            assert out["status"] == "dispatched"

        async def whole_run() -> None:
            assert (await copilot.run("set it")).output == "done"

        async with Client(mcp_server(rt, name="bench", version="1")) as client:

            async def over_mcp() -> None:
                result = await client.call_tool("set_quantity", ARGS)
                assert not result.is_error

            vs_mcp = await compare(through_toolset, over_mcp, batch=50, rounds=30, warmup=200)
            run_vs_mcp = await compare(whole_run, over_mcp, batch=10, rounds=20, warmup=20)
    return [
        Row(
            "9. in-process tool call",
            "pydantic-ai toolset call_tool vs the same call over MCP in memory (mcp.Client)",
            f"p50 {us(vs_mcp.ours_p50)}, p90 {us(vs_mcp.ours_p90)}",
            f"p50 {us(vs_mcp.base_p50)}, p90 {us(vs_mcp.base_p90)}",
            vs_mcp.ratio,
            "< 1.0×",
            vs_mcp.ratio < 1.0,
        ),
        Row(
            "9. in-process tool call",
            "a whole pydantic-ai run of one tool call (FunctionModel) vs the MCP call alone",
            f"p50 {us(run_vs_mcp.ours_p50)}",
            f"p50 {us(run_vs_mcp.base_p50)}",
            run_vs_mcp.ratio,
            "reported",
            None,
        ),
    ]


async def main() -> None:
    for row in await run():
        print(row)


if __name__ == "__main__":
    asyncio.run(main())
