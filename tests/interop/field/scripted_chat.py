"""The scripted LangChain chat model of the LangChain and mcp-use runs (mcp-use takes a
LangChain model): LangChain's ``GenericFakeChatModel`` answering each turn with the next call
of the plan, then the final text, and recording the tools the agent binds it to."""

from __future__ import annotations

from typing import Any

from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage
from plan import DONE, PLAN

OFFERED: list[list[str]] = []
"""The tool names the agent offered the model, one list per turn."""


class ScriptedChatModel(GenericFakeChatModel):
    """The fake model, able to be bound to tools (the agent binds them every turn)."""

    def bind_tools(self, tools: Any, **kwargs: Any) -> Any:
        OFFERED.append(sorted(t.name for t in tools))
        return self


def scripted_chat_model() -> ScriptedChatModel:
    script = [
        AIMessage(content="", tool_calls=[{"name": n, "args": a, "id": f"call-{i}"}])
        for i, (n, a) in enumerate(PLAN)
    ]
    return ScriptedChatModel(messages=iter([*script, AIMessage(content=DONE)]))
