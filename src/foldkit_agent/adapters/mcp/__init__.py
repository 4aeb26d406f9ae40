"""The MCP adapter (the official ``mcp`` SDK): see :mod:`.server`."""

from __future__ import annotations

from .server import (
    CONTEXT_URI,
    DEFAULT_MAX_BODY,
    OUTPUT_SCHEMA,
    RESOURCE_URI_PREFIX,
    FoldkitMCPServer,
    PrincipalOf,
    Resolve,
    StaticTokenVerifier,
    Target,
    default_principal_of,
    http_app,
    mcp_server,
    serve_stdio,
)

__all__ = [
    "CONTEXT_URI",
    "DEFAULT_MAX_BODY",
    "OUTPUT_SCHEMA",
    "RESOURCE_URI_PREFIX",
    "FoldkitMCPServer",
    "PrincipalOf",
    "Resolve",
    "StaticTokenVerifier",
    "Target",
    "default_principal_of",
    "http_app",
    "mcp_server",
    "serve_stdio",
]
