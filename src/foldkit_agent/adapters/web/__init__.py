"""The web adapters: the JSON surface a page calls, and the WebMCP bridge.

Modules: :mod:`.surface` (:func:`agent_surface`, assembling the JSON routes), :mod:`.routes`
(their handlers), :mod:`.sessions` (who calls: service caller, page session or anonymous),
:mod:`.approvals` (the person approving in the page), :mod:`.feed` (the ``events`` stream),
:mod:`.results` (the answers' shapes), :mod:`.csrf` (session-bound CSRF tokens),
:mod:`.checks` (how the routes pass the edge guard: their rules, the service token or
session + CSRF step, refusals in the surface's shape), :mod:`.webmcp` (the bridge script and
the app serving a page with it), :mod:`.page` (that page, for the person: requests, activity,
context), :mod:`.decision` (a person's answer as posted), :mod:`.signin` (people signing in),
:mod:`.console` (the console), :mod:`.activity` (the activity feed as server-sent events for a
page).
"""

from __future__ import annotations

from ...errors import needs_extra

with needs_extra(__name__):  # a missing library is answered with the extra to install
    from . import surface
    from .activity import activity_endpoint
    from .surface import *  # noqa: F403  (its __all__ is this package's too)
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
    "activity_endpoint",
    "bridge_script",
    "mount",
    "script_tag",
    "webmcp_app",
    "webmcp_surface",
]
__all__ += surface.__all__
