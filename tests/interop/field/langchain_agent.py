"""LangChain: ``langchain-mcp-adapters``' ``MultiServerMCPClient`` lists the tools once, and
``create_agent`` runs them with a scripted chat model (scripted_chat.py).
Usage: ``python langchain_agent.py MCP_URL``."""

from __future__ import annotations

import asyncio

from langchain.agents import create_agent
from langchain_core.messages import ToolMessage
from langchain_mcp_adapters.client import MultiServerMCPClient
from plan import PROMPT, report, url
from scripted_chat import OFFERED, scripted_chat_model


async def main() -> None:
    client = MultiServerMCPClient({"todos": {"url": url(), "transport": "streamable_http"}})
    agent = create_agent(scripted_chat_model(), await client.get_tools())
    run = await agent.ainvoke({"messages": [{"role": "user", "content": PROMPT}]})
    results = [
        {"tool": m.name, "error": m.status == "error", "text": str(m.content)}
        for m in run["messages"]
        if isinstance(m, ToolMessage)
    ]
    report(OFFERED, results, str(run["messages"][-1].content))


asyncio.run(main())
