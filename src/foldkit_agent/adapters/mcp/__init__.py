"""The MCP adapter (the official ``mcp`` SDK): see :mod:`.server`.

Modules: :mod:`.server` (:func:`mcp_server` and its handlers), :mod:`.shapes` (URIs, the
output schema, tools), :mod:`.feed` (change feeds for both protocol eras), :mod:`.stdio`
(:func:`serve_stdio`), :mod:`.local` (:class:`LocalUser`, a stdio call's credentials),
:mod:`.http` (:func:`http_app`, :class:`StaticTokenVerifier`).
"""

from __future__ import annotations

from .http import DEFAULT_MAX_BODY, StaticTokenVerifier, http_app
from .local import LocalUser, parse_local_user
from .server import (
    FoldkitMCPServer,
    PrincipalOf,
    Resolve,
    Target,
    default_principal_of,
    mcp_server,
)
from .shapes import CONTEXT_URI, OUTPUT_SCHEMA, RESOURCE_URI_PREFIX
from .stdio import serve_stdio

__all__ = [
    "CONTEXT_URI",
    "DEFAULT_MAX_BODY",
    "OUTPUT_SCHEMA",
    "RESOURCE_URI_PREFIX",
    "FoldkitMCPServer",
    "LocalUser",
    "PrincipalOf",
    "Resolve",
    "StaticTokenVerifier",
    "Target",
    "default_principal_of",
    "http_app",
    "mcp_server",
    "parse_local_user",
    "serve_stdio",
]
