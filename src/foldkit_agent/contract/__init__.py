"""What an agent may see and do, declared once. Nothing here runs a call: that is
:mod:`foldkit_agent.runtime`."""

from __future__ import annotations

from .approval import (
    DEFAULT_APPROVAL_TIMEOUT,
    Approval,
    ApprovalRequest,
    ApprovalsFull,
    Approver,
    Confirm,
)
from .calls import (
    AuthorizationRequest,
    CallInfo,
    Deny,
    Invocation,
    InvocationContext,
    new_invocation_id,
)
from .completion import (
    DEFAULT_TIMEOUT,
    MAX_TIMEOUT,
    Completion,
    CorrelationKey,
    StateCompletion,
    StateSource,
    by_invocation_id,
    correlate_key,
    when,
)
from .declare import (
    ActionVariant,
    AgentDefinition,
    Capability,
    ExposedMessages,
    Hints,
    Resource,
    Variant,
    Wiring,
    action,
    expose,
    expose_subset,
    make,
    resource,
    variant,
)
from .names import (
    NAME_PATTERN,
    default_name,
    is_valid_name,
)
from .numbers import integers_from_doubles
from .schema import (
    InputDecoder,
    RecursiveSchemaError,
    json_schema,
    schema_of_type,
)

__all__ = [
    "DEFAULT_APPROVAL_TIMEOUT",
    "DEFAULT_TIMEOUT",
    "MAX_TIMEOUT",
    "NAME_PATTERN",
    "ActionVariant",
    "AgentDefinition",
    "Approval",
    "ApprovalRequest",
    "ApprovalsFull",
    "Approver",
    "AuthorizationRequest",
    "CallInfo",
    "Capability",
    "Completion",
    "Confirm",
    "CorrelationKey",
    "Deny",
    "ExposedMessages",
    "Hints",
    "InputDecoder",
    "Invocation",
    "InvocationContext",
    "RecursiveSchemaError",
    "Resource",
    "StateCompletion",
    "StateSource",
    "Variant",
    "Wiring",
    "action",
    "by_invocation_id",
    "correlate_key",
    "default_name",
    "expose",
    "expose_subset",
    "integers_from_doubles",
    "is_valid_name",
    "json_schema",
    "make",
    "new_invocation_id",
    "resource",
    "schema_of_type",
    "variant",
    "when",
]
