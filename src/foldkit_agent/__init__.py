"""foldkit-agent: let an AI agent drive an Elm-architecture application through its Messages.

Declare once what an agent may see (a projection of the Model) and do (an opt-in subset of
the Messages); bind that contract to the running application; serve it over MCP, A2A, WebMCP
or Agent Native. See ``docs/`` and ``examples/todo``.

    from foldkit_agent import agent, projection, surface
    from foldkit_agent.message import Message, message_union
"""

from __future__ import annotations

from . import agent, errors, projection, surface
from .errors import (
    AgentAuthorizationError,
    AgentCancelledError,
    AgentCapabilityUnavailableError,
    AgentCompletionTimeoutError,
    AgentContractError,
    AgentError,
    AgentHostError,
    AgentInvalidInputError,
    AgentResourceError,
    AgentUnknownCapabilityError,
    InputRejected,
)
from .host import Host, SupportsHost
from .message import Message, MessageUnion, message_union
from .program import Program

__version__ = "0.1.0"

__all__ = [
    "AgentAuthorizationError",
    "AgentCancelledError",
    "AgentCapabilityUnavailableError",
    "AgentCompletionTimeoutError",
    "AgentContractError",
    "AgentError",
    "AgentHostError",
    "AgentInvalidInputError",
    "AgentResourceError",
    "AgentUnknownCapabilityError",
    "Host",
    "InputRejected",
    "Message",
    "MessageUnion",
    "Program",
    "SupportsHost",
    "__version__",
    "agent",
    "errors",
    "message_union",
    "projection",
    "surface",
]
