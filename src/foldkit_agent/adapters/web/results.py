"""What the surface answers: an outcome as a ``CallToolResult``, a capability as a page tool."""

from __future__ import annotations

from typing import Any

from ...contract.declare import Capability
from ...runtime.outcome import Outcome

__all__ = ["call_tool_result", "page_tool"]


def call_tool_result(outcome: Outcome) -> dict[str, Any]:
    """Map an :class:`~foldkit_agent.runtime.Outcome` to the MCP ``CallToolResult`` JSON shape.

    Returns:
        ``{"content": [{"type": "text", "text": outcome.text}], "structuredContent":
        outcome.data, "isError": not outcome.ok}`` — the shape MCP's ``tools/call`` returns
        (MCP spec 2025-06-18, "Tool Result") and the shape WebMCP polyfills accept from
        ``execute``.

    Example:
        >>> call_tool_result(await rt.call("no_such_capability", {}))["isError"]
        True
    """
    return {
        "content": [{"type": "text", "text": outcome.text}],
        "structuredContent": outcome.data,
        "isError": not outcome.ok,
    }


def page_tool(cap: Capability) -> dict[str, Any]:
    """One capability as the page registers it with WebMCP's ``registerTool`` (DESIGN §10).

    Returns:
        ``{"name", "title"?, "description", "inputSchema", "annotations": {"readOnlyHint"}}``;
        ``title`` only when the capability has one. WebMCP's tool annotations carry only
        ``readOnlyHint`` of the four behaviour hints, so the others stay with MCP and A2A.

    Example:
        >>> page_tool(AppAgent.by_name["select_todo"])["annotations"]
        {'readOnlyHint': False}
    """
    tool: dict[str, Any] = {"name": cap.name}
    if cap.title is not None:
        tool["title"] = cap.title
    tool["description"] = cap.description
    tool["inputSchema"] = cap.input_schema
    tool["annotations"] = {"readOnlyHint": cap.hints.read_only}
    return tool
