"""mcp-use: ``MCPAgent`` with an ``MCPClient`` for the server (it lists the tools once, when
the agent initializes) and a scripted LangChain chat model (scripted_chat.py), the kind of
model mcp-use takes. Usage: ``python mcp_use_agent.py MCP_URL``."""

from __future__ import annotations

import asyncio

from langchain_core.messages import ToolMessage
from mcp_use import MCPAgent, MCPClient
from plan import PROMPT, report, url
from scripted_chat import OFFERED, scripted_chat_model


async def main() -> None:
    client = MCPClient(config={"mcpServers": {"todos": {"url": url()}}})
    agent = MCPAgent(llm=scripted_chat_model(), client=client, max_steps=10)
    try:
        answer = await agent.run(PROMPT)
        results = [
            {"tool": m.name, "error": m.status == "error", "text": str(m.content)}
            for m in agent.get_conversation_history()
            if isinstance(m, ToolMessage)
        ]
    finally:
        await client.close_all_sessions()
    report(OFFERED, results, str(answer))


asyncio.run(main())
