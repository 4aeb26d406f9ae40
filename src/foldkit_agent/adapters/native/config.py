"""The ``mcp.config.json`` entry pointing an Agent Native app at our MCP server (no TypeScript)."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from .codegen import NativeGenerationError, check_url

__all__ = [
    "mcp_config",
]

_SERVER_ID = re.compile(r"[A-Za-z0-9_-]{1,64}")


def mcp_config(
    *,
    url: str,
    name: str,
    headers: Mapping[str, str] | None = None,
    description: str | None = None,
) -> dict[str, Any]:
    """The ``mcp.config.json`` document that connects an Agent Native app to our MCP server.

    Args:
        url: the streamable-HTTP MCP endpoint (``foldkit-agent serve ... --mcp http`` serves
            ``http://HOST:PORT/mcp``).
        name: the server id; Agent Native shows the tools as ``mcp__<name>__<tool>``.
            ``[A-Za-z0-9_-]{1,64}``.
        headers: extra HTTP headers (say ``{"Authorization": "Bearer ..."}``). Agent Native
            does not expand placeholders in this file; keep secrets in its ``MCP_SERVERS``
            environment variable (same shape) instead of committing them.
        description: a note for people reading the configuration.

    Returns:
        ``{"servers": {name: {"type": "http", "url": url, "headers"?: ..., "description"?:
        ...}}}`` — the shape both ``mcp.config.json`` and ``MCP_SERVERS`` accept
        (``@agent-native/core`` 0.133.3, ``dist/mcp-client/config.js``).

    Raises:
        ValueError: a bad ``url`` or ``name``.

    Example:
        >>> mcp_config(url="http://127.0.0.1:8000/mcp", name="todo")
        {'servers': {'todo': {'type': 'http', 'url': 'http://127.0.0.1:8000/mcp'}}}
    """
    try:
        checked = check_url(url)
    except NativeGenerationError as err:
        raise ValueError(str(err).replace("--url", "url")) from None
    if _SERVER_ID.fullmatch(name) is None:
        raise ValueError(f"the server name must match [A-Za-z0-9_-]{{1,64}}, got {name!r}")
    entry: dict[str, Any] = {"type": "http", "url": checked}
    if headers:
        entry["headers"] = {str(k): str(v) for k, v in headers.items()}
    if description:
        entry["description"] = description
    return {"servers": {name: entry}}
