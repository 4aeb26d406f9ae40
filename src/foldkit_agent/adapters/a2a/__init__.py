"""The A2A adapter (the official ``a2a-sdk``): see :mod:`.app`.

Modules: :mod:`.card` (the Agent Card, skills and the skill extension), :mod:`.executor` (one
capability per task), :mod:`.handler` (the SDK's request handler with our checks before it),
:mod:`.request` (the skill and input a message names), :mod:`.errors` (error answers in our
words), :mod:`.auth` (bearer tokens and the caller), :mod:`.app` (:func:`a2a_app`, assembling
them).
"""

from __future__ import annotations

from ...errors import needs_extra

with needs_extra(__name__):  # a missing library is answered with the extra to install
    from ...contract.numbers import integers_from_doubles
    from .app import DEFAULT_MAX_BODY, RuntimeTarget, a2a_app
    from .auth import (
        A2ACaller,
        BearerTokenBackend,
        CredentialsRequiredError,
        VerifiedBearerBackend,
    )
    from .card import (
        CARD_PATH,
        EXTENSION_URI,
        JSONRPC_PATH,
        KEY_FIELD,
        REST_PREFIX,
        build_agent_card,
        oauth_scheme,
    )
    from .database import ForeignTaskError, SqlTaskStore
    from .executor import CapabilityExecutor
    from .tasks import BoundedTaskStore

__all__ = [
    "CARD_PATH",
    "DEFAULT_MAX_BODY",
    "EXTENSION_URI",
    "JSONRPC_PATH",
    "KEY_FIELD",
    "REST_PREFIX",
    "A2ACaller",
    "BearerTokenBackend",
    "BoundedTaskStore",
    "CapabilityExecutor",
    "CredentialsRequiredError",
    "ForeignTaskError",
    "RuntimeTarget",
    "SqlTaskStore",
    "VerifiedBearerBackend",
    "a2a_app",
    "build_agent_card",
    "integers_from_doubles",
    "oauth_scheme",
]
