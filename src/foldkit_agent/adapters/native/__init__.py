"""The Agent Native adapter: generated actions and the MCP config entry.

Modules: :mod:`.codegen` (``actions/<name>.ts`` rendering and writing), :mod:`.config`
(:func:`mcp_config`), :mod:`.endpoint` (:func:`native_app`, the HTTP side the actions call).
"""

from __future__ import annotations

from .codegen import (
    CALLER_HEADER,
    GENERATED_MARKER,
    ORG_HEADER,
    TOKEN_ENV,
    URL_ENV,
    ActionsWritten,
    NativeGenerationError,
    contract_hash,
    is_generated,
    render_action,
    render_actions,
    write_actions,
)
from .config import mcp_config
from .endpoint import NativeCaller, native_app, native_caller

__all__ = [
    "CALLER_HEADER",
    "GENERATED_MARKER",
    "ORG_HEADER",
    "TOKEN_ENV",
    "URL_ENV",
    "ActionsWritten",
    "NativeCaller",
    "NativeGenerationError",
    "contract_hash",
    "is_generated",
    "mcp_config",
    "native_app",
    "native_caller",
    "render_action",
    "render_actions",
    "write_actions",
]
