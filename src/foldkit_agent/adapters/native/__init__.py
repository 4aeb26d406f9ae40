"""The Agent Native adapter: generated actions and the MCP config entry."""

from __future__ import annotations

from .actions import (
    CALLER_HEADER,
    GENERATED_MARKER,
    ORG_HEADER,
    TOKEN_ENV,
    URL_ENV,
    ActionsWritten,
    NativeCaller,
    NativeGenerationError,
    contract_hash,
    is_generated,
    mcp_config,
    native_app,
    native_caller,
    render_action,
    render_actions,
    write_actions,
)

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
