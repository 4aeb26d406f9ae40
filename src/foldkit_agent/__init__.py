"""foldkit-agent: let an AI agent drive an Elm-architecture application through its Messages.

Declare once what an agent may see (a projection of the Model) and do (an opt-in subset of
the Messages); bind that contract to the running application; serve it over MCP, A2A, WebMCP
or Agent Native. This module is the one front door: every public name is importable from it,
and the ``agent``, ``projection`` and ``surface`` namespaces hold the declaration functions::

    from foldkit_agent import Message, Program, agent, message_union, projection, surface

The protocol adapters need their extras and live in :mod:`foldkit_agent.adapters`. See
``docs/architecture.md`` for the parts and ``docs/guide.md`` for the contract.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from . import agent, app, errors, projection, surface
from .agent import *  # noqa: F403
from .app import *  # noqa: F403
from .runtime.outcome import DEFECT_TEXT, defect

if TYPE_CHECKING:
    from .edge.callers import CallerLimits
    from .edge.calls import CallsInFlight
    from .edge.options import HttpOptions
    from .edge.tenants import Tenants


def __getattr__(name: str) -> Any:
    # Tenants, the HTTP adapters' options and the calls in flight they share live in edge/,
    # which needs the web extra (starlette): imported on first use.
    if name in ("CallerLimits", "CallsInFlight", "HttpOptions", "Tenants"):
        from . import edge

        return getattr(edge, name)
    raise AttributeError(f"module 'foldkit_agent' has no attribute {name!r}")


__version__ = "0.1.0"

# What only the front door adds, then the application substrate's types and the agent
# namespace's names (the contract, audit, errors and runtime parts).
__all__: list[str] = [
    "DEFECT_TEXT",
    "CallerLimits",
    "CallsInFlight",
    "HttpOptions",
    "Tenants",
    "__version__",
    "agent",
    "defect",
    "errors",
    "projection",
    "surface",
]
__all__ += app.__all__
__all__ += agent.__all__
