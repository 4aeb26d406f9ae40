"""How the console and the person's page render: one Jinja2 environment, one set of assets, one
way to render the live parts (the calls waiting for a person, the activity, the context, the
tools offered to agents).

Both pages are the same templates (``templates/``, autoescaped, every agent-supplied string
through the ``visible`` filter) and the same stylesheet and script (``static/``); they differ
in where their routes live (``base``) and which waiting calls they list.

Example::

    env = templates("/page")
    parts = render_parts(env, Shown(rt, approvals, feed))
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from importlib import resources
from typing import Any, Final, cast

import jinja2
from starlette.responses import Response

from ....contract.declare import Capability
from ....contract.visible import visible
from ....edge.activity import ActivityFeed
from ....errors import AgentError
from ....runtime.bound import AgentRuntime
from .views import ApprovalView, context_text, folded, outcome_words

__all__ = ["ASSETS", "HEADERS", "Shown", "asset", "asset_response", "render_parts", "templates"]

HEADERS: Final = {
    "Cache-Control": "no-store",
    "X-Content-Type-Options": "nosniff",
    "X-Frame-Options": "DENY",
    "Content-Security-Policy": (
        "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; "
        "img-src 'self' data:; form-action 'self'; frame-ancestors 'none'; base-uri 'none'"
    ),
    "Referrer-Policy": "no-referrer",
}
"""The pages' response headers: only their own script runs, and no other site may frame them
(no approve button can be clicked through another site's page)."""

ASSETS: Final = {"console.css": "text/css", "console.js": "text/javascript"}
"""The files under ``static/`` and their media types."""


def templates(base: str) -> jinja2.Environment:
    """The pages' templates, for a page whose routes live under ``base`` (``"/console"``,
    ``"/page"``): its assets are ``<base>/static/<file>``."""
    env = jinja2.Environment(
        loader=jinja2.PackageLoader("foldkit_agent.adapters.web.console", "templates"),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    cast(dict[str, Any], env.globals)["base"] = base
    cast(dict[str, Any], env.filters)["visible"] = _visible
    cast(dict[str, Any], env.filters)["said"] = outcome_words
    return env


def _visible(value: object) -> str:
    return visible(str(value))


def asset(name: str) -> bytes:
    """The bytes of ``static/<name>`` (one of :data:`ASSETS`)."""
    files = resources.files("foldkit_agent.adapters.web.console")
    return files.joinpath("static", name).read_bytes()


def asset_response(name: str) -> Response:
    """``GET static/<name>``: the file, or 404 for a name that is not one of :data:`ASSETS`."""
    media = ASSETS.get(name)
    if media is None:
        return Response("Not Found", 404)
    headers = {"Cache-Control": "no-cache", "X-Content-Type-Options": "nosniff"}
    return Response(asset(name), media_type=f"{media}; charset=utf-8", headers=headers)


@dataclass(frozen=True, slots=True)
class Shown:
    """What one rendering of the parts shows.

    Attributes:
        rt: the runtime whose context (and capabilities) are shown.
        approvals: the waiting calls, as their views.
        feed: the activity, or ``None`` where none is kept.
        tools: the capabilities offered to agents right now (shown only when given).
        recorded: the runtime keeps an audit log (else the activity says nothing is recorded).
    """

    rt: AgentRuntime[Any, Any]
    approvals: Sequence[ApprovalView]
    feed: ActivityFeed | None
    tools: Sequence[Capability] | None = None
    recorded: bool = field(default=True)


def render_parts(env: jinja2.Environment, shown: Shown) -> dict[str, Any]:
    """The live parts as HTML: ``{"count", "approvals": [{"key", "version", "html"}],
    "activity", "context", "tools"?}``; the page's script swaps them in."""
    rt = shown.rt
    titles = {c.name: c.title or c.name for c in rt.messages.all()}
    items, missed = shown.feed.since(0) if shown.feed is not None else ([], 0)
    try:
        context = rt.context()
        context_shown = None if context is None else context_text(context)
    except AgentError:
        context_shown = "The context could not be read right now."
    cards = env.get_template("approval.html")
    parts: dict[str, Any] = {
        "count": len(shown.approvals),
        "approvals": [
            {"key": a.key, "version": a.version, "html": cards.render(a=a)} for a in shown.approvals
        ],
        "activity": env.get_template("activity.html").render(
            rows=folded(items),
            missed=missed,
            recorded=shown.recorded and shown.feed is not None,
            titles=titles,
        ),
        "context": env.get_template("context.html").render(context=context_shown),
    }
    if shown.tools is not None:
        parts["tools"] = env.get_template("tools.html").render(tools=shown.tools)
    return parts
