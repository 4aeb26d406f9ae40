"""What an MCP client sees of a contract: resource URIs, the shared output schema, the tools."""

from __future__ import annotations

from typing import Any, Final

import mcp.types as types

from ...contract.declare import Capability

__all__ = [
    "CONTEXT_URI",
    "OUTPUT_SCHEMA",
    "RESOURCE_URI_PREFIX",
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


def tool(cap: Capability) -> types.Tool:
    return types.Tool(
        name=cap.name,
        description=cap.description,
        input_schema=cap.input_schema,
        output_schema=OUTPUT_SCHEMA,
    )
