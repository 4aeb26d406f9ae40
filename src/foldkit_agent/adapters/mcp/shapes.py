"""What an MCP client sees of a contract: resource URIs, the shared output schema, the tools."""

from __future__ import annotations

from typing import Any, Final

import mcp.types as types

from ...contract.declare import Capability, Hints

__all__ = [
    "CONTEXT_URI",
    "OUTPUT_SCHEMA",
    "RESOURCE_URI_PREFIX",
    "tool",
    "tool_annotations",
]

CONTEXT_URI: Final = "agent://context"
"""The URI of the context projection resource."""

RESOURCE_URI_PREFIX: Final = "agent://resources/"
"""``agent://resources/<name>`` is the URI of the contract's resource ``<name>``."""


OUTPUT_SCHEMA: Final[dict[str, Any]] = {
    "type": "object",
    "properties": {
        "status": {
            "type": "string",
            "enum": ["dispatched", "completed", "failed", "refused", "unknown", "defect"],
            "description": "dispatched or completed on success; otherwise why not",
        },
        "capability": {"anyOf": [{"type": "string"}, {"type": "null"}]},
        "invocation_id": {"type": "string"},
        "message": {
            "anyOf": [{"type": "object"}, {"type": "string"}],
            "description": "On success the Message applied; on an error the explanation",
        },
        "result": {"type": "object", "description": "The Message that completed the call"},
        "_tag": {"type": "string", "description": "On an error: the error's tag"},
    },
    "required": ["status"],
}
"""The output schema of every tool. It covers the structured content of a success
(``{"status", "capability", "invocation_id", "message", "result"?}``) and of an error result
(the error's JSON plus ``"status"``), since some clients check both against it."""


def tool_annotations(title: str | None, hints: Hints) -> types.ToolAnnotations:
    """The MCP ``ToolAnnotations`` of a title and hints; undeclared (``None``) ones are left out.

    ``title`` is repeated here for clients of protocol 2025-03-26, which read only
    ``annotations.title``. A hint left out is read by clients as its cautious default
    (``destructiveHint: true``, ``openWorldHint: true``).

    Example:
        >>> tool_annotations("Select todo", Hints(destructive=False)).destructive_hint
        False
    """
    values: dict[str, Any] = {
        "title": title,
        "read_only_hint": hints.read_only,
        "destructive_hint": hints.destructive,
        "idempotent_hint": hints.idempotent,
        "open_world_hint": hints.open_world,
    }
    return types.ToolAnnotations(**{k: v for k, v in values.items() if v is not None})


def tool(cap: Capability, meta: dict[str, Any] | None = None) -> types.Tool:
    """The MCP tool of one capability: name, title, description (with when it is available,
    if declared: ``Capability.listed_description``), schemas and annotations; ``meta`` its
    ``_meta`` (the view it opens, :func:`.apps.tool_meta`), if any."""
    fields: dict[str, Any] = {
        "name": cap.name,
        "description": cap.listed_description,
        "input_schema": cap.input_schema,
        "output_schema": OUTPUT_SCHEMA,
        "annotations": tool_annotations(cap.title, cap.hints),
    }
    if cap.title is not None:
        fields["title"] = cap.title
    if meta is not None:
        fields["_meta"] = meta
    return types.Tool(**fields)
