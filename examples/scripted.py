"""A scripted LangChain chat model for the docs' examples, so they run without an API key.

``chat_model(("create_todo", {"title": "Milk"}), reply="Added milk.")`` answers the first
model call with those tool calls and the next one with ``reply``, as a real model would after
reading the tools' results. Replace it with ``ChatOpenAI(...)`` (or any chat model that
supports tool calling) and nothing else changes.
"""

from __future__ import annotations

from typing import Any

from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage


class ScriptedChatModel(GenericFakeChatModel):
    """A :class:`GenericFakeChatModel` that accepts ``bind_tools`` (its script is fixed)."""

    def bind_tools(self, tools: Any, **kwargs: Any) -> ScriptedChatModel:
        return self


def chat_model(*calls: tuple[str, dict[str, Any]], reply: str = "Done.") -> ScriptedChatModel:
    """A model whose first answer calls ``calls`` (tool name, arguments) and second is ``reply``."""
    tool_calls = [{"name": n, "args": a, "id": f"call-{i}"} for i, (n, a) in enumerate(calls)]
    return ScriptedChatModel(
        messages=iter([AIMessage("", tool_calls=tool_calls), AIMessage(reply)])
    )
