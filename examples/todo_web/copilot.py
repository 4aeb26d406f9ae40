"""The todo list's copilot: a pydantic-ai ``Agent`` that ``serve --ag-ui`` runs over AG-UI.

    foldkit-agent serve examples.todo:runtime --ag-ui examples.todo_web.copilot:agent

The model is a stand-in, so this runs offline and the same every time: pydantic-ai's
``FunctionModel`` with :func:`scripted`, which understands a few sentences and calls the tools
it is offered, as a model would ("add Buy milk", "select todo-1", "toggle todo-1", "delete the
selected todo", "clear the selection"). It reads each tool's answer back as its reply. Swap
``FunctionModel(...)`` for a model name (``Agent("openai:gpt-5", ...)``) and nothing else
changes: the capabilities are the tools, the runtime checks every call.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any, cast

from pydantic_ai import Agent
from pydantic_ai.messages import ModelMessage, ToolReturnPart, UserPromptPart
from pydantic_ai.models.function import AgentInfo, DeltaToolCall, DeltaToolCalls, FunctionModel

__all__ = ["HELP", "agent", "scripted"]

HELP = (
    'I understand "add TITLE", "select ID", "toggle ID", "delete the selected todo" and '
    '"clear the selection".'
)
"""What the copilot answers to a sentence it does not understand."""

_BY_ID = {"select ": "select_todo", "toggle ": "toggle_todo"}


def _call(name: str, args: dict[str, Any]) -> DeltaToolCalls:
    return {0: DeltaToolCall(name=name, json_args=json.dumps(args))}


def _reply(answer: ToolReturnPart[Any]) -> str:
    content = answer.content
    if isinstance(content, dict) and "status" in content:
        return f"{answer.tool_name}: {content['status']}"
    return f"{answer.tool_name}: {content}"


async def scripted(
    messages: list[ModelMessage], info: AgentInfo
) -> AsyncIterator[str | DeltaToolCalls]:
    """A ``FunctionModel`` stream function: one tool call per sentence, then its answer."""
    parts: list[Any] = list(getattr(messages[-1], "parts", []))
    answers = [cast("ToolReturnPart[Any]", p) for p in parts if isinstance(p, ToolReturnPart)]
    if answers:
        yield _reply(answers[0])
        return
    said = next((str(p.content) for p in reversed(parts) if isinstance(p, UserPromptPart)), "")
    said = said.strip()
    offered = {t.name for t in info.function_tools}
    lowered = said.lower()
    if lowered.startswith("add ") and "create_todo" in offered:
        yield _call("create_todo", {"title": said[len("add ") :].strip()})
        return
    for prefix, name in _BY_ID.items():
        if lowered.startswith(prefix) and name in offered:
            yield _call(name, {"id": said[len(prefix) :].strip()})
            return
    if lowered.startswith("delete") and "delete_todo" in offered:
        yield _call("delete_todo", {})
    elif lowered.startswith("clear") and "clear_selection" in offered:
        yield _call("clear_selection", {})
    else:
        yield HELP


agent: Agent[Any, str] = Agent(
    FunctionModel(stream_function=scripted),
    instructions="You manage the user's todo list with the tools you are given.",
)
"""The copilot ``serve --ag-ui examples.todo_web.copilot:agent`` runs."""
