"""LlamaIndex: ``McpToolSpec`` lists the tools once (``to_tool_list_async``), and a
``FunctionAgent`` runs them with ``MockFunctionCallingLLM`` whose response generator answers
each turn with the next call of the plan. Usage: ``python llamaindex_agent.py MCP_URL``."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any

from llama_index.core.agent.workflow import FunctionAgent, ToolCallResult
from llama_index.core.base.llms.types import ChatMessage, MessageRole, ToolCallBlock
from llama_index.core.llms.mock import MockFunctionCallingLLM
from llama_index.tools.mcp import BasicMCPClient, McpToolSpec
from plan import DONE, PLAN, PROMPT, report, url

OFFERED: list[list[str]] = []


def respond(messages: Sequence[ChatMessage], **kwargs: Any) -> ChatMessage:
    OFFERED.append(sorted(t.metadata.name for t in kwargs.get("tools") or []))
    turn = sum(1 for m in messages if m.role == MessageRole.TOOL)
    if turn < len(PLAN):
        name, args = PLAN[turn]
        call = ToolCallBlock(tool_call_id=f"call-{turn}", tool_name=name, tool_kwargs=args)
        return ChatMessage(role=MessageRole.ASSISTANT, blocks=[call])
    return ChatMessage(role=MessageRole.ASSISTANT, content=DONE)


async def main() -> None:
    tools = await McpToolSpec(client=BasicMCPClient(url())).to_tool_list_async()
    llm = MockFunctionCallingLLM(response_generator=respond)
    agent = FunctionAgent(tools=tools, llm=llm)
    handler = agent.run(user_msg=PROMPT)
    results: list[dict[str, Any]] = []
    async for event in handler.stream_events():
        if isinstance(event, ToolCallResult):
            # LlamaIndex keeps no isError: a refusal is only its text
            output = event.tool_output
            results.append(
                {"tool": event.tool_name, "error": output.is_error, "text": str(output.content)}
            )
    answer = await handler
    report(OFFERED, results, str(answer))


asyncio.run(main())
