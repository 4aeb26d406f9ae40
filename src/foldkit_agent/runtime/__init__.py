"""The bound contract: :func:`bind`, checked dispatch, waiting on completions, the change
feed and the one outcome shape every adapter maps from.

``Invocation`` is declared in :mod:`foldkit_agent.contract.calls` (hooks receive it) and
re-exported here."""

from __future__ import annotations

from ..contract.calls import (
    Invocation,
    new_invocation_id,
)
from .bound import (
    AgentRuntime,
    Change,
    PrincipalProvider,
    bind,
)
from .drain import Drained, drain, drain_timeout
from .idempotency import DEFAULT_KEY_TTL, IDEMPOTENCY_HEADER, IDEMPOTENCY_META, IdempotencyKeys
from .outcome import (
    Outcome,
    OutcomeKind,
    summarize,
)
from .results import (
    CompletionOutcome,
    DispatchResult,
)

__all__ = [
    "DEFAULT_KEY_TTL",
    "IDEMPOTENCY_HEADER",
    "IDEMPOTENCY_META",
    "AgentRuntime",
    "Change",
    "CompletionOutcome",
    "DispatchResult",
    "Drained",
    "IdempotencyKeys",
    "Invocation",
    "Outcome",
    "OutcomeKind",
    "PrincipalProvider",
    "bind",
    "drain",
    "drain_timeout",
    "new_invocation_id",
    "summarize",
]
