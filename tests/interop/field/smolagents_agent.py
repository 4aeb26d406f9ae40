"""smolagents: ``ToolCollection.from_mcp`` (mcpadapt) lists the tools once, and a
``ToolCallingAgent`` runs them with a scripted ``Model`` that answers each step with the next
call of the plan, then ``final_answer``. Usage: ``python smolagents_agent.py MCP_URL``."""

from __future__ import annotations

from typing import Any

from plan import DONE, PLAN, PROMPT, report, url
from smolagents import ToolCallingAgent, ToolCollection
from smolagents.memory import ActionStep
from smolagents.models import (
    ChatMessage,
    ChatMessageToolCall,
    ChatMessageToolCallFunction,
    MessageRole,
    Model,
)

OFFERED: list[list[str]] = []


class ScriptedModel(Model):
    def generate(
        self,
        messages: list[Any],
        stop_sequences: list[str] | None = None,
        response_format: dict[str, str] | None = None,
        tools_to_call_from: list[Any] | None = None,
        **kwargs: Any,
    ) -> ChatMessage:
        OFFERED.append(sorted(t.name for t in tools_to_call_from or [] if t.name != "final_answer"))
        turn = len(OFFERED) - 1
        name, args = PLAN[turn] if turn < len(PLAN) else ("final_answer", {"answer": DONE})
        call = ChatMessageToolCall(
            id=f"call-{turn}",
            type="function",
            function=ChatMessageToolCallFunction(name=name, arguments=args),
        )
        return ChatMessage(role=MessageRole.ASSISTANT, content="", tool_calls=[call])


def main() -> None:
    server = {"url": url(), "transport": "streamable-http"}
    with ToolCollection.from_mcp(server, trust_remote_code=True) as tools:
        agent = ToolCallingAgent(tools=[*tools.tools], model=ScriptedModel(), max_steps=5)
        answer = agent.run(PROMPT)
        results: list[dict[str, Any]] = []
        for step in agent.memory.steps:
            if isinstance(step, ActionStep) and step.tool_calls:
                for call in step.tool_calls:
                    if call.name != "final_answer":
                        # smolagents keeps no isError: a refusal is only its text
                        error = step.error is not None
                        text = str(step.error) if error else str(step.observations)
                        results.append({"tool": call.name, "error": error, "text": text})
    report(OFFERED, results, str(answer))


main()
