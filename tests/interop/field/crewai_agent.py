"""CrewAI: ``crewai-tools``' ``MCPServerAdapter`` (mcpadapt) lists the tools once, for an
``Agent`` in a one-task ``Crew``, run by a scripted ``BaseLLM`` that answers each turn with
the next call of the plan as a native tool call, then the final text.
Usage: ``python crewai_agent.py MCP_URL``."""

from __future__ import annotations

import json
from typing import Any

from crewai import Agent, Crew, Task
from crewai.llms.base_llm import BaseLLM
from crewai_tools import MCPServerAdapter
from plan import DONE, PLAN, PROMPT, report, url

OFFERED: list[list[str]] = []
SEEN: list[str] = []


def _name(tool: Any) -> str:
    return str(tool["function"]["name"] if "function" in tool else tool.get("name"))


class ScriptedLLM(BaseLLM):
    def supports_function_calling(self) -> bool:
        return True

    def call(self, messages: Any, tools: Any = None, **kwargs: Any) -> Any:
        offered = sorted(_name(t) for t in tools or [])
        OFFERED.append(offered)
        SEEN[:] = [str(m.get("content")) for m in messages if m.get("role") == "tool"]
        turn = len(OFFERED) - 1
        if turn >= len(PLAN):
            return DONE
        name, args = PLAN[turn]
        called = next((o for o in offered if o == name or o.endswith(f"_{name}")), name)
        function = {"name": called, "arguments": json.dumps(args)}
        return [{"id": f"call-{turn}", "type": "function", "function": function}]


def main() -> None:
    with MCPServerAdapter({"url": url(), "transport": "streamable-http"}) as tools:
        agent = Agent(
            role="todo keeper",
            goal=PROMPT,
            backstory="Keeps the todo list.",
            llm=ScriptedLLM(model="scripted"),
            tools=list(tools),
        )
        task = Task(description=PROMPT, expected_output=DONE, agent=agent)
        answer = Crew(agents=[agent], tasks=[task]).kickoff()
    names = [n for n, _ in PLAN]
    results = [{"tool": n, "error": False, "text": t} for n, t in zip(names, SEEN, strict=False)]
    report(OFFERED, results, str(answer))


main()
