"""The A2A adapter (the official ``a2a-sdk``): see :mod:`.app`."""

from __future__ import annotations

from .app import (
    CARD_PATH,
    DEFAULT_MAX_BODY,
    EXTENSION_URI,
    JSONRPC_PATH,
    REST_PREFIX,
    A2ACaller,
    BearerTokenBackend,
    CapabilityExecutor,
    CredentialsRequiredError,
    RuntimeTarget,
    a2a_app,
    build_agent_card,
    integers_from_doubles,
)

__all__ = [
    "CARD_PATH",
    "DEFAULT_MAX_BODY",
    "EXTENSION_URI",
    "JSONRPC_PATH",
    "REST_PREFIX",
    "A2ACaller",
    "BearerTokenBackend",
    "CapabilityExecutor",
    "CredentialsRequiredError",
    "RuntimeTarget",
    "a2a_app",
    "build_agent_card",
    "integers_from_doubles",
]
