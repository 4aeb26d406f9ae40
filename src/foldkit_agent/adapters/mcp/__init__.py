"""The MCP adapter (the official ``mcp`` SDK): see :mod:`.server`.

Modules: :mod:`.server` (:func:`mcp_server` and its handlers), :mod:`.shapes` (URIs, the
output schema, tools), :mod:`.feed` (change feeds for both protocol eras), :mod:`.stdio`
(:func:`serve_stdio`), :mod:`.local` (:class:`LocalUser`, a stdio call's credentials),
:mod:`.http` (:func:`http_app`, :class:`StaticTokenVerifier`),
:mod:`.listing` (the ``listing`` modes: ``"available"``, ``"all"``, ``"catalog"``).
"""

from __future__ import annotations

from ...errors import needs_extra

with needs_extra(__name__):  # a missing library is answered with the extra to install
    from .http import DEFAULT_MAX_BODY, StaticTokenVerifier, http_app
    from .listing import CALL_CAPABILITY, LIST_CAPABILITIES, LISTINGS, UNAVAILABLE_NOTE, Listing
    from .local import LocalUser, parse_local_user
    from .server import (
        CredentialsOf,
        FoldkitMCPServer,
        Resolve,
        Target,
        default_credentials_of,
        mcp_server,
    )
    from .shapes import CONTEXT_URI, OUTPUT_SCHEMA, RESOURCE_URI_PREFIX
    from .stdio import serve_stdio

__all__ = [
    "CALL_CAPABILITY",
    "CONTEXT_URI",
    "DEFAULT_MAX_BODY",
    "LISTINGS",
    "LIST_CAPABILITIES",
    "OUTPUT_SCHEMA",
    "RESOURCE_URI_PREFIX",
    "UNAVAILABLE_NOTE",
    "CredentialsOf",
    "FoldkitMCPServer",
    "Listing",
    "LocalUser",
    "Resolve",
    "StaticTokenVerifier",
    "Target",
    "default_credentials_of",
    "http_app",
    "mcp_server",
    "parse_local_user",
    "serve_stdio",
]
