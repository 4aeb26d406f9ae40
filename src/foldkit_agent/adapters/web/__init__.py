"""The web adapters: the JSON surface a page calls, and the WebMCP bridge.

Modules: :mod:`.surface` (:func:`agent_surface`, the JSON routes), :mod:`.csrf` (session-bound
CSRF tokens), :mod:`.checks` (how the routes pass the edge guard: their rules, the service token
or session + CSRF step, refusals in the surface's shape), :mod:`.webmcp` (the bridge script and
the page), :mod:`.activity` (the activity feed as server-sent events for a page).
"""

from __future__ import annotations

from .activity import activity_endpoint
from .csrf import CSRF_HEADER, SESSION_COOKIE, CsrfTokens
from .surface import (
    DEFAULT_ALLOWED_HOSTS,
    DEFAULT_MAX_BODY,
    PRINCIPAL_HEADER,
    Resolve,
    SurfaceTarget,
    agent_surface,
    call_tool_result,
    service_caller,
)
from .webmcp import (
    BRIDGE_FILE,
    bridge_script,
    mount,
    script_tag,
    webmcp_app,
    webmcp_surface,
)

__all__ = [
    "BRIDGE_FILE",
    "CSRF_HEADER",
    "DEFAULT_ALLOWED_HOSTS",
    "DEFAULT_MAX_BODY",
    "PRINCIPAL_HEADER",
    "SESSION_COOKIE",
    "CsrfTokens",
    "Resolve",
    "SurfaceTarget",
    "activity_endpoint",
    "agent_surface",
    "bridge_script",
    "call_tool_result",
    "mount",
    "script_tag",
    "service_caller",
    "webmcp_app",
    "webmcp_surface",
]
