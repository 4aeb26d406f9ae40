"""What an MCP client reads: the context, the contract's resources and its view.

``agent://context`` (the context projection), ``agent://resources/<name>`` (each
``agent.resource``) as JSON, and, for a contract with a view, ``ui://app/view.html``
(:mod:`.apps`). An unknown URI is a JSON-RPC error (``INVALID_PARAMS``) naming it; a
projection that fails is a generic error, its text logged and never sent.
"""

from __future__ import annotations

import json
import logging
from typing import Any

import mcp.types as types
from mcp import MCPError

from ...errors import AgentError
from ...runtime.bound import AgentRuntime
from .apps import AVAILABLE_META, VIEW_URI, view_contents, view_resource
from .shapes import CONTEXT_URI, RESOURCE_URI_PREFIX

__all__ = ["check_uri", "listed", "read"]

_log = logging.getLogger("foldkit_agent.adapters.mcp")


def listed(rt: AgentRuntime[Any, Any]) -> types.ListResourcesResult:
    """The ``resources/list`` answer for ``rt``'s contract."""
    definition = rt.definition
    found: list[types.Resource] = []
    if definition.context is not None:
        found.append(
            types.Resource(
                uri=CONTEXT_URI,
                name="context",
                description="What the agent may see of the application's current state.",
                mime_type="application/json",
            )
        )
    for name, res in definition.resources.items():
        found.append(
            types.Resource(
                uri=RESOURCE_URI_PREFIX + name,
                name=name,
                description=res.description,
                mime_type="application/json",
            )
        )
    if definition.view is not None:
        found.append(view_resource(definition.view))
    return types.ListResourcesResult(resources=found)


def check_uri(rt: AgentRuntime[Any, Any], uri: str) -> None:
    """Nothing if ``uri`` names something ``rt``'s contract serves, else ``INVALID_PARAMS``."""
    definition = rt.definition
    if uri == CONTEXT_URI and definition.context is not None:
        return
    if uri == VIEW_URI and definition.view is not None:
        return
    if (
        uri.startswith(RESOURCE_URI_PREFIX)
        and uri[len(RESOURCE_URI_PREFIX) :] in definition.resources
    ):
        return
    raise MCPError(
        types.INVALID_PARAMS,
        "There is no resource with this URI. List the resources and read one of those.",
        {"uri": uri[:300]},
    )


def read(rt: AgentRuntime[Any, Any], uri: str) -> types.ReadResourceResult:
    """The ``resources/read`` answer for ``uri``.

    Raises:
        MCPError: ``INVALID_PARAMS`` for a URI the contract does not serve or a resource the
            runtime refuses; ``INTERNAL_ERROR`` when a projection fails.
    """
    check_uri(rt, uri)
    if uri == VIEW_URI:
        return types.ReadResourceResult(contents=[view_contents(rt.definition)])
    try:
        if uri == CONTEXT_URI:
            value = rt.context()
        else:
            value = rt.resources.read(uri[len(RESOURCE_URI_PREFIX) :])
    except AgentError as err:
        raise MCPError(types.INVALID_PARAMS, err.message, {"uri": uri}) from err
    except Exception as exc:
        _log.warning("reading %s failed", uri, exc_info=True)
        raise MCPError(
            types.INTERNAL_ERROR, "The resource could not be read.", {"uri": uri}
        ) from exc
    meta: dict[str, Any] | None = None
    if uri == CONTEXT_URI and rt.definition.view is not None:
        meta = {AVAILABLE_META: [c.name for c in rt.messages.available()]}
    text = json.dumps(value, sort_keys=True)
    return types.ReadResourceResult(
        contents=[
            types.TextResourceContents(uri=uri, mime_type="application/json", text=text, _meta=meta)
        ]
    )
