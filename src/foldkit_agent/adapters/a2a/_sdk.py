"""Every private part of ``a2a-sdk`` (1.3) the A2A adapter reaches, in one place.

Each is covered by ``tests/adapters/a2a/test_sdk.py``, which fails when an SDK upgrade moves
it; nothing else in :mod:`foldkit_agent.adapters.a2a` reads an SDK attribute that starts with
an underscore or depends on the SDK's log wording.
"""

from __future__ import annotations

import asyncio
from typing import Any, cast

from a2a.server.request_handlers import DefaultRequestHandler

__all__ = ["CLIENT_ERROR_RECORDS", "DUPLICATE_RECORDS", "unfinished_tasks"]


def unfinished_tasks(handler: DefaultRequestHandler) -> list[asyncio.Event]:
    """The "finished" events of the handler's active tasks that have not finished yet.

    Each event is set once the SDK has consumed the task's last event (so a request waiting
    on that task can write its answer). The registry of active tasks
    (``handler._active_task_registry._active_tasks``, each ``ActiveTask._is_finished``) has
    no public accessor in a2a-sdk 1.3, hence the guarded private reads: anything missing
    reads as "no task".

    Example:
        >>> await asyncio.wait([asyncio.ensure_future(e.wait()) for e in unfinished_tasks(h)])
    """
    registry = getattr(handler, "_active_task_registry", None)
    active: Any = getattr(registry, "_active_tasks", None)
    if not isinstance(active, dict):
        return []
    events = [getattr(t, "_is_finished", None) for t in cast(dict[str, Any], active).values()]
    return [e for e in events if isinstance(e, asyncio.Event) and not e.is_set()]


CLIENT_ERROR_RECORDS: dict[str, tuple[str, ...]] = {
    # logger name -> message templates that describe a client's mistake, not a defect
    "a2a.server.routes.jsonrpc_dispatcher": ("Request Error (ID: %s)",),
    "a2a.utils.error_handlers": ("Request error: ", "Parse error: "),
}
"""The SDK's log records (logger name -> message-template prefixes) that report a client's
mistake; :func:`~foldkit_agent.adapters.a2a.errors.install_log_filter` demotes them."""

DUPLICATE_RECORDS: dict[str, tuple[str, ...]] = {
    # followed by one of the records above for the same request: dropped
    "a2a.server.routes.jsonrpc_dispatcher": (
        "Failed to parse request params",
        "Failed to validate base JSON-RPC request",
    ),
    "a2a.utils.version_validator": ("Version mismatch",),
}
"""The SDK's log records that always precede one of :data:`CLIENT_ERROR_RECORDS` for the same
request; the filter drops them."""
