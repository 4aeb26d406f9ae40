"""``serve --audit SPEC [--audit-durable]``: persist the served runtime's audit entries."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator
from contextlib import asynccontextmanager
from typing import Any

import anyio

from ...audit.forward import AuditSink
from ...audit.log import AuditLog, audit_log
from ...audit.postgres import PostgresAuditSink
from ...audit.sqlite import SqliteAuditSink
from ...runtime.bound import AgentRuntime
from ...runtime.idempotency import DEFAULT_KEY_TTL, IdempotencyKeys
from ..loading import TargetError

__all__ = ["AUDIT_HELP", "attach_audit", "audited", "keep_keys", "open_sink"]

AUDIT_HELP = (
    "Store every audit entry: sqlite:PATH, jsonl:PATH or postgres:DSN (a postgresql:// URI "
    "works as is)"
)


def open_sink(spec: str, *, durable: bool) -> AuditSink:
    """The sink an ``--audit`` value names.

    Args:
        spec: ``sqlite:PATH``, ``jsonl:PATH``, ``postgres:DSN`` or ``postgresql://...``.
        durable: hold each answer until its entry is stored.

    Raises:
        ValueError: an unknown kind or an empty path/DSN (the message says the accepted forms).
        AuditSinkError: the store cannot be opened.

    Example:
        >>> open_sink("sqlite:audit.db", durable=True)
    """
    if spec.startswith(("postgresql://", "postgres://")):
        kind, target = "postgres", spec
    else:
        kind, _, target = spec.partition(":")
    if not target:
        raise ValueError(f"--audit takes sqlite:PATH, jsonl:PATH or postgres:DSN, got {spec!r}")
    if kind == "sqlite":
        from ...audit.sqlite import SqliteAuditSink

        return SqliteAuditSink(target, durable=durable)
    if kind == "jsonl":
        from ...audit.jsonl import JsonlAuditSink

        return JsonlAuditSink(target, durable=durable)
    if kind in ("postgres", "postgresql"):
        from ...audit.postgres import PostgresAuditSink

        return PostgresAuditSink(target, durable=durable)
    raise ValueError(f"--audit takes sqlite:PATH, jsonl:PATH or postgres:DSN, got {spec!r}")


def attach_audit(rt: AgentRuntime[Any, Any], sink: AuditSink) -> AuditLog:
    """Send ``rt``'s audit entries to ``sink``: through its own log when it has one (keeping
    its principal and input choices), else through a new default log.

    Raises:
        ValueError: the runtime's log already has a sink of its own.
    """
    if rt.audit is None:
        rt.audit = audit_log(sink=sink)
    else:
        rt.audit.use_sink(sink)
    return rt.audit


def keep_keys(
    rt: AgentRuntime[Any, Any], sink: AuditSink | None, ttl: float, namespace: str = ""
) -> None:
    """Keep ``rt``'s idempotency keys for ``ttl`` seconds, under ``namespace`` (a tenant):
    in ``sink``'s database when it is SQLite or PostgreSQL (every worker and restart sees
    them), else in the process."""
    if isinstance(sink, SqliteAuditSink | PostgresAuditSink):
        rt.idempotency = IdempotencyKeys(sink.idempotency_keys(), ttl=ttl, namespace=namespace)
    elif ttl != rt.idempotency.ttl or namespace:
        rt.idempotency = IdempotencyKeys(rt.idempotency.store, ttl=ttl, namespace=namespace)


@asynccontextmanager
async def audited(
    rt: AgentRuntime[Any, Any],
    sink: AuditSink | None,
    keys_ttl: float = DEFAULT_KEY_TTL,
    *,
    namespace: str = "",
) -> AsyncGenerator[None]:
    """Send ``rt``'s entries to ``sink`` while inside; flush and close it afterwards. The
    idempotency keys are kept for ``keys_ttl`` seconds, with ``sink`` (:func:`keep_keys`).

    Raises:
        TargetError: the runtime's log already has a sink of its own.
    """
    keep_keys(rt, sink, keys_ttl, namespace)
    if sink is None:
        yield
        return
    try:
        log = attach_audit(rt, sink)
    except ValueError as err:
        raise TargetError(f"--audit: {err}") from None
    try:
        yield
    finally:
        with anyio.CancelScope(shield=True):
            await asyncio.to_thread(log.close, 10.0)
