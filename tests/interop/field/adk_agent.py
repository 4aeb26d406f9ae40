"""Google ADK: an ``LlmAgent`` with ``McpToolset`` over streamable HTTP, run by ADK's
``InMemoryRunner`` with a scripted model (a ``BaseLlm`` that answers each turn with the next
function call of the plan and records the tools ADK offered it).
Usage: ``python adk_agent.py MCP_URL``."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator
from typing import Any

from google.adk.agents import LlmAgent
from google.adk.models.base_llm import BaseLlm
from google.adk.models.llm_request import LlmRequest
from google.adk.models.llm_response import LlmResponse
from google.adk.runners import InMemoryRunner
from google.adk.tools.mcp_tool import McpToolset
from google.adk.tools.mcp_tool.mcp_session_manager import StreamableHTTPConnectionParams
from google.genai import types
from plan import DONE, PLAN, PROMPT, report, url

OFFERED: list[list[str]] = []


class ScriptedLlm(BaseLlm):
    """Each turn: the next call of the plan, then the final text."""

    async def generate_content_async(
        self, llm_request: LlmRequest, stream: bool = False
    ) -> AsyncGenerator[LlmResponse]:
        OFFERED.append(sorted(llm_request.tools_dict))
        turn = len(OFFERED) - 1
        if turn < len(PLAN):
            name, args = PLAN[turn]
            part = types.Part(function_call=types.FunctionCall(name=name, args=args))
        else:
            part = types.Part(text=DONE)
        yield LlmResponse(content=types.Content(role="model", parts=[part]))


async def main() -> None:
    toolset = McpToolset(connection_params=StreamableHTTPConnectionParams(url=url()))
    agent = LlmAgent(name="todos", model=ScriptedLlm(model="scripted"), tools=[toolset])
    runner = InMemoryRunner(agent=agent, app_name="field")
    session = await runner.session_service.create_session(app_name="field", user_id="u")
    results: list[dict[str, Any]] = []
    text = ""
    prompt = types.Content(role="user", parts=[types.Part(text=PROMPT)])
    async for event in runner.run_async(user_id="u", session_id=session.id, new_message=prompt):
        for part in (event.content.parts or []) if event.content else []:
            if part.function_response is not None:
                answer: dict[str, Any] = part.function_response.response or {}
                results.append(
                    {
                        "tool": part.function_response.name,
                        "error": bool(answer.get("isError") or answer.get("error")),
                        "text": str(answer),
                    }
                )
            elif part.text:
                text = part.text
    await toolset.close()
    report(OFFERED, results, text)


asyncio.run(main())
