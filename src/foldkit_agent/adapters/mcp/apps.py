"""MCP Apps (``io.modelcontextprotocol/ui``): the contract's view as a ``ui://`` resource.

A contract declared with ``make(view=agent.view(...))`` is offered to MCP Apps hosts (Claude,
ChatGPT, VS Code, Goose, ext-apps' ``AppBridge``) as one HTML resource they render in a
sandboxed frame:

* ``resources/list`` and ``resources/read`` carry :data:`VIEW_URI` with the MIME type
  :data:`VIEW_MIME` and ``_meta.ui`` (``csp``: the origins the view may reach, none for the
  generated view; ``prefersBorder``);
* every tool carries ``_meta.ui.resourceUri`` (and the flat ``ui/resourceUri`` older hosts
  read), and an app-only capability ``_meta.ui.visibility == ["app"]``, so the host offers it
  to the person in the view and not to its model;
* the ``agent://context`` read carries ``_meta["foldkit/available"]``, the capabilities
  available now, so a view can tell which forms may be pressed.

The view calls tools through the host, which forwards them as ``tools/call``: a person's
click runs the same capability, through the same checks and the same audit, as the model's
call. The generated view marks its calls with ``_meta["foldkit/actor"] == "view"`` and the
audit records that actor; it is what the host forwarded, not an identity (the credentials are
the connection's, as for the model's calls), so it grants nothing.

Example::

    AppAgent = TodoAgent.make(context=..., messages=..., view=agent.view(title="Todos"))
    server = mcp_server(runtime, name="todo", version="1.0")   # lists ui://app/view.html
"""

from __future__ import annotations

import json
import re
from functools import cache
from importlib import resources
from typing import Any, Final

import mcp.types as types

from ...contract.declare import AgentDefinition, Capability
from ...contract.view import View

__all__ = [
    "ACTOR_META",
    "AGENT",
    "AVAILABLE_META",
    "VIEW",
    "VIEW_MIME",
    "VIEW_URI",
    "tool_meta",
    "view_contents",
    "view_resource",
]

VIEW_URI: Final = "ui://app/view.html"
"""The URI of the contract's view."""

VIEW_MIME: Final = "text/html;profile=mcp-app"
"""The MIME type MCP Apps hosts render (ext-apps' ``RESOURCE_MIME_TYPE``)."""

ACTOR_META: Final = "foldkit/actor"
"""The ``tools/call`` ``_meta`` key a view sets to say a person pressed it (``"view"``)."""

AVAILABLE_META: Final = "foldkit/available"
"""The ``_meta`` key of the context read that lists the capabilities available now."""

AGENT: Final = "agent"
"""The actor of a call no view marked: the model's (or any client's) call."""

VIEW: Final = "view"
"""The actor a view's call names: a person pressed it in the view."""

_BUNDLE: Final = "view.js"
_SLOT: Final = re.compile(r"\{\{(title|config|script)\}\}")


def tool_meta(view: View, cap: Capability) -> dict[str, Any]:
    """The ``_meta`` of ``cap``'s tool: the view it opens, and who may call it.

    Example:
        >>> tool_meta(agent.view(), cap)["ui"]
        {'resourceUri': 'ui://app/view.html'}
    """
    ui: dict[str, Any] = {"resourceUri": VIEW_URI}
    if cap.name in view.app_only:
        ui["visibility"] = ["app"]
    return {"ui": ui, "ui/resourceUri": VIEW_URI}


def _resource_meta(view: View) -> dict[str, Any]:
    csp: dict[str, Any] = {
        "connectDomains": list(view.connect_domains),
        "resourceDomains": list(view.resource_domains),
    }
    return {"ui": {"csp": csp, "prefersBorder": True}}


def view_resource(view: View) -> types.Resource:
    """The ``resources/list`` entry of the view."""
    return types.Resource(
        uri=VIEW_URI,
        name="view",
        title=view.title,
        description="The application's view, for a person, where the host renders apps.",
        mime_type=VIEW_MIME,
        _meta=_resource_meta(view),
    )


def view_contents(definition: AgentDefinition[Any, Any, Any]) -> types.TextResourceContents:
    """The ``resources/read`` contents of the view: the application's own HTML, or the
    generated one (the bundled ext-apps ``App`` with the capabilities' forms).

    Raises:
        ValueError: the contract declares no view.
    """
    view = definition.view
    if view is None:
        raise ValueError("the contract declares no view")
    html = view.html if view.html is not None else generated(definition)
    return types.TextResourceContents(
        uri=VIEW_URI, mime_type=VIEW_MIME, text=html, _meta=_resource_meta(view)
    )


def _inline(text: str) -> str:
    """``text`` safe inside a ``<script>`` element (no ``</script``, no comment opener)."""
    return text.replace("<", "\\u003c")


def generated(definition: AgentDefinition[Any, Any, Any]) -> str:
    """The generated view's document for ``definition`` (its view's title, every capability)."""
    view = definition.view
    title = None if view is None else view.title
    config = {
        "title": title,
        "context": definition.context is not None,
        "capabilities": [
            {
                "name": c.name,
                "title": c.title,
                "description": c.description,
                "input_schema": c.input_schema,
            }
            for c in definition.capabilities
        ],
    }
    values = {
        "title": _escape(title or "Application"),
        "config": _inline(json.dumps(config, sort_keys=True)),
        "script": _bundle(),
    }
    # one pass, so a placeholder inside a value (a description, the bundle) stays as text
    return _SLOT.sub(lambda m: values[m[1]], _page())


def _escape(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


@cache
def _page() -> str:
    return resources.files(__package__ or "").joinpath("view", "view.html").read_text("utf-8")


@cache
def _bundle() -> str:
    return resources.files(__package__ or "").joinpath("view", _BUNDLE).read_text("utf-8")
