"""What every network adapter shares before a request reaches a runtime."""

from __future__ import annotations

from .wire import (
    DEFAULT_MAX_DEPTH,
    LOOPBACK_HOSTS,
    JsonBodyGuard,
    WireError,
    is_json_content_type,
    jsonrpc_code,
    jsonrpc_problem,
    loads_strict,
)

__all__ = [
    "DEFAULT_MAX_DEPTH",
    "LOOPBACK_HOSTS",
    "JsonBodyGuard",
    "WireError",
    "is_json_content_type",
    "jsonrpc_code",
    "jsonrpc_problem",
    "loads_strict",
]
