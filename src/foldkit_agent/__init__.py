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

from . import agent, errors, projection, surface
from .agent import AgentBuilder
from .app.host import Host, SupportsHost, Unsubscribe
from .app.message import Message, MessageUnion, message_union
from .app.program import Command, Program, Running
from .app.projection import Projection
from .app.surface import Action, Application, FieldRef, MessageSet
from .audit.jsonl import JsonlAuditSink
from .audit.log import (
    REDACTED,
    AuditEntry,
    AuditLog,
    AuditSink,
    AuditSinkError,
    AuditTicket,
    audit_log,
)
from .audit.postgres import PostgresAuditSink
from .audit.sqlite import SqliteAuditSink
from .contract.approval import Approval, ApprovalRequest, ApprovalsFull, Approver
from .contract.calls import (
    AuthorizationRequest,
    CallInfo,
    Deny,
    Invocation,
    InvocationContext,
    new_invocation_id,
)
from .contract.completion import (
    DEFAULT_TIMEOUT,
    MAX_TIMEOUT,
    Completion,
    CorrelationKey,
    StateCompletion,
    StateSource,
)
from .contract.declare import (
    ActionVariant,
    AgentDefinition,
    Capability,
    ExposedMessages,
    Hints,
    Resource,
    Variant,
    Wiring,
)
from .errors import (
    AgentApprovalError,
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
    InputIssue,
    InputRejected,
)
from .runtime.bound import AgentRuntime, Change, PrincipalProvider, bind
from .runtime.drain import Drained, drain, drain_timeout
from .runtime.outcome import DEFECT_TEXT, Outcome, OutcomeKind, defect, summarize
from .runtime.results import CompletionOutcome, DispatchResult

if TYPE_CHECKING:
    from .edge.tenants import Tenants


def __getattr__(name: str) -> Any:
    # Tenants lives in edge/, which needs the web extra (starlette): imported on first use.
    if name == "Tenants":
        from .edge.tenants import Tenants

        return Tenants
    raise AttributeError(f"module 'foldkit_agent' has no attribute {name!r}")


__version__ = "0.1.0"

__all__ = [
    "DEFAULT_TIMEOUT",
    "DEFECT_TEXT",
    "MAX_TIMEOUT",
    "REDACTED",
    "Action",
    "ActionVariant",
    "AgentApprovalError",
    "AgentAuthorizationError",
    "AgentBuilder",
    "AgentCancelledError",
    "AgentCapabilityUnavailableError",
    "AgentCompletionTimeoutError",
    "AgentContractError",
    "AgentDefinition",
    "AgentError",
    "AgentHostError",
    "AgentInvalidInputError",
    "AgentResourceError",
    "AgentRuntime",
    "AgentUnknownCapabilityError",
    "Application",
    "Approval",
    "ApprovalRequest",
    "ApprovalsFull",
    "Approver",
    "AuditEntry",
    "AuditLog",
    "AuditSink",
    "AuditSinkError",
    "AuditTicket",
    "AuthorizationRequest",
    "CallInfo",
    "Capability",
    "Change",
    "Command",
    "Completion",
    "CompletionOutcome",
    "CorrelationKey",
    "Deny",
    "DispatchResult",
    "Drained",
    "ExposedMessages",
    "FieldRef",
    "Hints",
    "Host",
    "InputIssue",
    "InputRejected",
    "Invocation",
    "InvocationContext",
    "JsonlAuditSink",
    "Message",
    "MessageSet",
    "MessageUnion",
    "Outcome",
    "OutcomeKind",
    "PostgresAuditSink",
    "PrincipalProvider",
    "Program",
    "Projection",
    "Resource",
    "Running",
    "SqliteAuditSink",
    "StateCompletion",
    "StateSource",
    "SupportsHost",
    "Tenants",
    "Unsubscribe",
    "Variant",
    "Wiring",
    "__version__",
    "agent",
    "audit_log",
    "bind",
    "defect",
    "drain",
    "drain_timeout",
    "errors",
    "message_union",
    "new_invocation_id",
    "projection",
    "summarize",
    "surface",
]
