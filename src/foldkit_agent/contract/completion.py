"""Completion contracts: a call resolves on the fact, not on receipt.

Two kinds:

* :class:`Completion` waits for a result *Message* (``success`` / ``failure``) correlated with
  the request. The runtime registers the waiter before it dispatches, so a result produced
  while the host is still handling the request is never missed.
* :func:`when` waits for a *state condition*: a predicate over a projection of the Model.

Correlating ``10,000`` overlapping calls stays cheap when the correlation is a key
(:func:`correlate_key`, :func:`by_invocation_id`): a result is matched by dictionary lookup.
An arbitrary ``correlate`` callable is still supported and is tried in arrival order.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any

from ..app.message import Message
from ..app.projection import Projection
from ..errors import AgentContractError
from .calls import CallInfo

__all__ = [
    "DEFAULT_TIMEOUT",
    "Completion",
    "CorrelationKey",
    "StateCompletion",
    "by_invocation_id",
    "correlate_key",
    "when",
]

DEFAULT_TIMEOUT = 30.0
"""Seconds a completion contract waits by default, counted from the host dispatch call."""


def _seconds(timeout: float | timedelta | None) -> float:
    if timeout is None:
        return DEFAULT_TIMEOUT
    value = timeout.total_seconds() if isinstance(timeout, timedelta) else float(timeout)
    if not value > 0:
        raise AgentContractError(f"a completion timeout must be positive, got {timeout!r}")
    return value


@dataclass(frozen=True, eq=False)
class CorrelationKey:
    """An indexable correlation: ``request_key(request, call) == result_key(result)``.

    Build it with :func:`correlate_key` or :func:`by_invocation_id`.
    """

    request_key: Callable[[Any, CallInfo], Hashable]
    result_key: Callable[[Any], Hashable]

    def __call__(self, request: Any, result: Any, call: CallInfo) -> bool:
        return self.request_key(request, call) == self.result_key(result)


def correlate_key(
    *,
    request: Callable[[Any, CallInfo], Hashable],
    result: Callable[[Any], Hashable],
) -> CorrelationKey:
    """A correlation by equal keys, matched in O(1) however many calls are pending.

    Example:
        >>> correlate_key(request=lambda req, call: req.id, result=lambda res: res.id)
        CorrelationKey(...)
    """
    return CorrelationKey(request, result)


def by_invocation_id(result_field: str) -> CorrelationKey:
    """Correlate on the invocation id carried onto the result Message's ``result_field``.

    Pair it with a ``to_message`` that puts ``ctx.invocation.id`` on the request, and an
    ``update`` that copies it onto the result::

        completion=agent.Completion(
            success=SavedTodo, correlate=agent.by_invocation_id("request_id")
        )
    """
    return CorrelationKey(
        lambda _req, call: call.invocation.id, lambda res: getattr(res, result_field, None)
    )


@dataclass(frozen=True)
class Completion:
    """Wait for a result Message after dispatching.

    Args:
        success: the Message class that means the work completed.
        failure: the Message class that means it failed (optional).
        correlate: ``(request, result, call) -> bool`` or a :class:`CorrelationKey`; without
            it the first ``success``/``failure`` Message observed wins, whoever caused it.
        timeout: seconds (``float``) or a :class:`~datetime.timedelta`; default 30 s, counted
            from the moment the host's ``dispatch`` is called.

    Raises:
        AgentContractError: a class is not a Message, or the timeout is not positive.
    """

    success: type[Message]
    failure: type[Message] | None = None
    correlate: Callable[[Any, Any, CallInfo], bool] | None = None
    timeout: float | timedelta | None = None
    seconds: float = field(init=False, repr=False)

    def __post_init__(self) -> None:
        for cls in (self.success, self.failure):
            if cls is not None and not (isinstance(cls, type) and issubclass(cls, Message)):  # pyright: ignore[reportUnnecessaryIsInstance]
                raise AgentContractError(f"Completion takes Message classes, got {cls!r}")
        object.__setattr__(self, "seconds", _seconds(self.timeout))


@dataclass(frozen=True)
class StateCompletion:
    """Wait until ``predicate(projection value, request)`` holds. Build it with :func:`when`."""

    projection: Projection
    predicate: Callable[[Any, Any], bool]
    timeout: float | timedelta | None = None
    seconds: float = field(init=False, repr=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "seconds", _seconds(self.timeout))


def when(
    *,
    projection: Projection,
    predicate: Callable[[Any, Any], bool],
    timeout: float | timedelta | None = None,
) -> StateCompletion:
    """Complete when a condition on the Model holds.

    ``predicate(value, request)`` gets the projection's value (a dict keyed by field name)
    and the request (the decoded input). It is checked once right after dispatch, so a
    condition already true completes at once, and again on every Model change that alters the
    projected value. Completed means the condition holds, not that this call made it true.

    Example:
        >>> when(projection=projection.pick(App.model.todos),
        ...      predicate=lambda v, req: any(t.title == req.title for t in v["todos"]))
    """
    if not isinstance(projection, Projection):  # pyright: ignore[reportUnnecessaryIsInstance]
        raise AgentContractError("when(projection=...) takes a projection")
    return StateCompletion(projection=projection, predicate=predicate, timeout=timeout)
