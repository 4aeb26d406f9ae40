"""What an agent may see and do, declared once. Nothing here runs a call: that is
:mod:`foldkit_agent.runtime`.

``__all__`` is the contract's public surface; the ``agent`` namespace and the front door
re-export it whole. Names, strict decoding and schema export are used from their modules
(:mod:`.names`, :mod:`.decode`, :mod:`.schema`, :mod:`.numbers`)."""

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
    CompletionContract,
    CorrelationKey,
    StateCompletion,
    StateSource,
    by_invocation_id,
    correlate_key,
    when,
)
from .declare import (
    AgentDefinition,
    Capability,
    ExposedMessages,
    Resource,
    Wiring,
    expose,
    expose_subset,
    make,
    resource,
)
from .presentation import TITLE_MAX, Hints, Presentation, PresentationOptions
from .variant import ActionVariant, Variant, action, variant
from .view import View, view

__all__ = [
    "DEFAULT_APPROVAL_TIMEOUT",
    "DEFAULT_TIMEOUT",
    "MAX_TIMEOUT",
    "TITLE_MAX",
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
    "CompletionContract",
    "Confirm",
    "CorrelationKey",
    "Deny",
    "ExposedMessages",
    "Hints",
    "Invocation",
    "InvocationContext",
    "Presentation",
    "PresentationOptions",
    "Resource",
    "StateCompletion",
    "StateSource",
    "Variant",
    "View",
    "Wiring",
    "action",
    "by_invocation_id",
    "correlate_key",
    "expose",
    "expose_subset",
    "make",
    "new_invocation_id",
    "resource",
    "variant",
    "view",
    "when",
]
