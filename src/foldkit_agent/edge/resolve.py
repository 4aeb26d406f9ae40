"""Finding the runtime that serves a request, and auditing a request the edge refused.

Every adapter serves a *target*: one bound :class:`~foldkit_agent.runtime.AgentRuntime`, or
``resolve(ctx)`` returning the runtime for the request (sync or async), where ``ctx`` is what
the adapter's protocol knows of the request (MCP's ``ServerRequestContext``, A2A's
``ServerCallContext``, the surface's Starlette ``Request``). :func:`resolve_runtime` is the one
way to turn a target into a runtime; :func:`check_target` the one way to vet a target when an
adapter is built.

Example:
    >>> rt = await resolve_runtime(target, request)
"""

from __future__ import annotations

import inspect
import logging
from collections.abc import Callable
from typing import Any, TypeVar, cast

from ..contract.calls import Invocation, new_invocation_id
from ..errors import (
    AgentAuthorizationError,
    AgentCapabilityUnavailableError,
    AgentError,
    AgentInvalidInputError,
)
from ..runtime.bound import AgentRuntime
from .tenants import NoTenantError, TenantsFullError
from .wire import WireError

__all__ = [
    "RuntimeUnavailableError",
    "Target",
    "audit_refusal",
    "audit_refused_call",
    "awaited",
    "check_target",
    "principal_for_record",
    "resolve_runtime",
    "static_runtime",
]

_log = logging.getLogger("foldkit_agent.edge")

C = TypeVar("C")

Target = AgentRuntime[Any, Any] | Callable[[C], Any]
"""An :class:`AgentRuntime`, or ``resolve(ctx) -> AgentRuntime | Awaitable[AgentRuntime]``."""

UNAVAILABLE_TEXT = "The application for this caller is not available right now."


class RuntimeUnavailableError(Exception):
    """``resolve(ctx)`` raised or returned something other than an :class:`AgentRuntime`.

    The cause (``__cause__``) has been logged; the text is safe to show a caller.
    """

    def __init__(self) -> None:
        super().__init__(UNAVAILABLE_TEXT)


async def awaited(value: Any) -> Any:
    """``value``, awaited first when it is awaitable: what a hook that may be sync or async
    returned."""
    if inspect.isawaitable(value):
        return await value
    return value


def check_target(target: object, adapter: str) -> None:
    """Raise ``TypeError`` unless ``target`` is a runtime or a callable ``resolve(ctx)``.

    Example:
        >>> check_target(42, "a2a_app")
        Traceback (most recent call last):
        TypeError: a2a_app takes an AgentRuntime or a resolve(ctx) callable, not int
    """
    if not isinstance(target, AgentRuntime) and not callable(target):
        raise TypeError(
            f"{adapter} takes an AgentRuntime or a resolve(ctx) callable, "
            f"not {type(target).__name__}"
        )


def static_runtime(target: object) -> AgentRuntime[Any, Any] | None:
    """The runtime itself when ``target`` is one, else ``None`` (it is resolved per request)."""
    return cast("AgentRuntime[Any, Any]", target) if isinstance(target, AgentRuntime) else None


async def resolve_runtime(
    target: Any, ctx: Any, *, passthrough: tuple[type[BaseException], ...] = ()
) -> AgentRuntime[Any, Any]:
    """The runtime serving the request ``ctx``.

    Args:
        target: a runtime (returned as it is) or ``resolve(ctx)`` (sync or async).
        ctx: the adapter's view of the request, handed to ``resolve``.
        passthrough: exception types ``resolve`` may raise to answer the caller itself (MCP's
            ``MCPError``, say); they propagate unchanged.

    Raises:
        RuntimeUnavailableError: ``resolve`` raised anything else, or returned something that
            is not an :class:`AgentRuntime` (logged as a warning with its traceback; an
            expected refusal, an :class:`~foldkit_agent.errors.AgentError`,
            :class:`~foldkit_agent.edge.tenants.NoTenantError` or ``TenantsFullError``, is
            logged in one line at INFO, as the caller's doing).
    """
    if isinstance(target, AgentRuntime):
        return cast("AgentRuntime[Any, Any]", target)
    try:
        got: Any = await awaited(target(ctx))
    except passthrough:
        raise
    except _REFUSALS as exc:  # the request's doing, not a fault: one line, no traceback
        _log.info("resolve(ctx) refused the request: %s: %s", type(exc).__name__, exc)
        raise RuntimeUnavailableError from exc
    except Exception as exc:
        _log.warning("resolve(ctx) raised", exc_info=True)
        raise RuntimeUnavailableError from exc
    if not isinstance(got, AgentRuntime):
        _log.warning("resolve(ctx) returned %s, not an AgentRuntime", type(got).__name__)
        raise RuntimeUnavailableError
    return cast("AgentRuntime[Any, Any]", got)


_REFUSALS = (AgentError, NoTenantError, TenantsFullError)
"""What ``resolve(ctx)`` raises to refuse a request (no tenant, another tenant's token...)."""

_LIMIT_CODES = frozenset({"caller-limit", "server-limit", "rate-limited"})
_INPUT_CODES = frozenset(
    {"content-type", "too-large", "malformed", "invalid-request", "invalid-params"}
)


def audit_refusal(
    runtime: AgentRuntime[Any, Any],
    *,
    capability: str,
    transport: str,
    err: WireError,
    invocation_id: str | None = None,
    principal: Any = None,
) -> None:
    """Write the audit entry of a request the edge refused although it named ``capability``.

    Decision ``"refused"``, no input (none was accepted), the ``principal`` given (``None``
    where none was established; see :func:`principal_for_record`) and ``invocation_id`` when
    the request already has one (A2A: its task id), else a new one. The outcome is
    :class:`~foldkit_agent.errors.AgentInvalidInputError`'s tag for
    a body refused at steps 4 and 5 (type, size, strict JSON),
    :class:`~foldkit_agent.errors.AgentCapabilityUnavailableError`'s for a caller or the server
    at a cap (:class:`~foldkit_agent.edge.callers.Slots`), else
    :class:`~foldkit_agent.errors.AgentAuthorizationError`'s (host, origin, credentials).
    Does nothing when the runtime keeps no audit log.
    """
    audit = runtime.audit
    if audit is None:
        return
    cap = runtime.definition.by_name.get(capability)
    outcome = (
        AgentInvalidInputError.tag
        if err.code in _INPUT_CODES
        else AgentCapabilityUnavailableError.tag
        if err.code in _LIMIT_CODES
        else AgentAuthorizationError.tag
    )
    audit.note(
        invocation_id=invocation_id or new_invocation_id(),
        transport=transport,
        capability=capability[:200],
        tag=cap.tag if cap is not None else None,
        principal=principal if audit.records_principal else None,
        decision="refused",
        outcome=outcome,
        input=None,
    )


async def audit_refused_call(
    runtime: AgentRuntime[Any, Any], invocation: Invocation, capability: str, err: WireError
) -> None:
    """:func:`audit_refusal` of a request whose caller is known: under ``invocation``'s id and
    transport, with the principal its credentials give (:func:`principal_for_record`).

    Example:
        >>> inv = Invocation(transport="mcp", credentials=token)
        >>> await audit_refused_call(rt, inv, "create_todo", WireError(429, "rate-limited", "..."))
    """
    audit_refusal(
        runtime,
        capability=capability,
        transport=invocation.transport,
        err=err,
        invocation_id=invocation.id,
        principal=await principal_for_record(runtime, invocation),
    )


async def principal_for_record(runtime: AgentRuntime[Any, Any], invocation: Invocation) -> Any:
    """The principal of ``invocation`` for the audit entry of a refusal only, or ``None``.

    Asks the runtime's principal provider only when its audit log records principals; a
    provider that raises records no principal (logged in one line) and changes nothing else:
    the request stays refused.
    """
    provider = runtime.principal_provider
    audit = runtime.audit
    if provider is None or audit is None or not audit.records_principal:
        return None
    try:
        return await awaited(provider(invocation))
    except Exception as exc:
        _log.warning("principal provider failed for a refused request: %s", type(exc).__name__)
        return None
