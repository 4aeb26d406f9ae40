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
from typing import Any, Generic, Never, Protocol, TypeAlias, overload, runtime_checkable

from typing_extensions import TypeVar

from ..app.message import Message
from ..app.projection import Projection
from ..errors import AgentContractError
from .calls import CallInfo

__all__ = [
    "DEFAULT_TIMEOUT",
    "MAX_TIMEOUT",
    "Completion",
    "CompletionContract",
    "CorrelationKey",
    "StateCompletion",
    "StateSource",
    "by_invocation_id",
    "correlate_key",
    "when",
]

R = TypeVar("R", default=Any)
"""The request a completion waits for: the variant's input (its Message when it has none)."""
S = TypeVar("S", bound=Message, default=Any)
"""The success Message class."""
F = TypeVar("F", bound=Message, default=Never)
"""The failure Message class (``Never`` without one)."""
V = TypeVar("V", default=Any)
"""The value a state completion's predicate reads."""
V_co = TypeVar("V_co", covariant=True, default=Any)

DEFAULT_TIMEOUT = 30.0
"""Seconds a completion contract waits by default, counted from the host dispatch call."""

MAX_TIMEOUT = 3600.0
"""The longest completion timeout a contract may declare, in seconds (one hour).

Waiting always has a deadline. A call held open longer than this outlives the request timeouts
of every protocol client we serve (MCP, A2A and browser clients give up within minutes), so a
larger value - ``float("inf")``, ``timedelta.max``, ``1e300`` - is a declaration mistake, not
a longer wait: complete sooner and let the agent read the state instead."""


def _seconds(timeout: float | timedelta | None) -> float:
    """``timeout`` in seconds; ``None`` is the default. Refuses what is not a finite number
    of seconds in ``(0, MAX_TIMEOUT]``."""
    if timeout is None:
        return DEFAULT_TIMEOUT
    if isinstance(timeout, timedelta):
        value = timeout.total_seconds()
    elif isinstance(timeout, int | float) and not isinstance(timeout, bool):  # pyright: ignore[reportUnnecessaryIsInstance]
        value = float(timeout)
    else:
        raise AgentContractError(
            f"a completion timeout is seconds (a number) or a timedelta, got {timeout!r}"
        )
    if not 0 < value <= MAX_TIMEOUT:  # also refuses NaN and infinities
        raise AgentContractError(
            f"a completion timeout must be more than 0 and at most {MAX_TIMEOUT:g} seconds "
            f"(waiting always has a deadline), got {timeout!r}"
        )
    return value


@dataclass(frozen=True, eq=False)
class CorrelationKey:
    """An indexable correlation: ``request_key(request, call) == result_key(result)``.

    Build it with :func:`correlate_key` or :func:`by_invocation_id`. A key function left
    ``None`` is a plain value the Message hub reads itself, with no call of ours per
    Message: the request key is then the invocation id, the result key ``result_field``.
    """

    request_key: Callable[[Any, CallInfo], Hashable] | None
    result_key: Callable[[Any], Hashable] | None
    result_field: str | None = None
    """The result Message field the key is read from, when known (checked at declaration)."""

    def __call__(self, request: Any, result: Any, call: CallInfo) -> bool:
        mine = call.invocation.id if self.request_key is None else self.request_key(request, call)
        if self.result_key is None:
            return mine == getattr(result, self.result_field or "", None)
        return mine == self.result_key(result)


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
    if not isinstance(result_field, str) or not result_field:  # pyright: ignore[reportUnnecessaryIsInstance]
        raise AgentContractError("by_invocation_id takes the name of a result Message field")
    return CorrelationKey(None, None, result_field)


@dataclass(frozen=True)
class Completion(Generic[R, S, F]):
    """Wait for a result Message after dispatching.

    Generic in the request ``R`` (the variant's input, inferred where the completion is
    written inline in ``variant(completion=...)``), the ``success`` class ``S`` and the
    ``failure`` class ``F``, so a type checker gives ``correlate`` its argument types::

        completion=agent.Completion(
            success=DeletedTodo, correlate=lambda req, res, call: req.id == res.id
        )

    Args:
        success: the Message class that means the work completed.
        failure: the Message class that means it failed (optional).
        correlate: ``(request, result, call) -> bool`` or a :class:`CorrelationKey`; without
            it the first ``success``/``failure`` Message observed wins, whoever caused it.
        timeout: seconds (``float``) or a :class:`~datetime.timedelta`; default 30 s, counted
            from the moment the host's ``dispatch`` is called.

    Raises:
        AgentContractError: a class is not a Message; the timeout is not a finite number of
            seconds in ``(0, MAX_TIMEOUT]``; a :func:`by_invocation_id` field is not declared
            on ``success`` (or ``failure``), so no result could ever match.
    """

    success: type[S]
    failure: type[F] | None = None
    correlate: Callable[[R, S | F, CallInfo], bool] | None = None
    timeout: float | timedelta | None = None
    seconds: float = field(init=False, repr=False)

    def __post_init__(self) -> None:
        for cls in (self.success, self.failure):
            if cls is not None and not (isinstance(cls, type) and issubclass(cls, Message)):  # pyright: ignore[reportUnnecessaryIsInstance]
                raise AgentContractError(f"Completion takes Message classes, got {cls!r}")
        correlate = self.correlate
        if isinstance(correlate, CorrelationKey) and correlate.result_field is not None:
            for cls in (self.success, self.failure):
                if cls is not None and correlate.result_field not in cls.model_fields:
                    raise AgentContractError(
                        f"by_invocation_id({correlate.result_field!r}): {cls.tag()} has no "
                        f"{correlate.result_field!r} field, so no result could ever match and "
                        "every call would wait out its timeout; declare the field and copy the "
                        "invocation id onto it in update"
                    )
        object.__setattr__(self, "seconds", _seconds(self.timeout))


@runtime_checkable
class StateSource(Protocol[V_co]):
    """A value outside the Model that a state completion can wait on (``when(source=...)``).

    ``get()`` returns the current value; ``subscribe(callback)`` calls ``callback`` (with any
    arguments, which are ignored) whenever the value may have changed and returns a function
    that unsubscribes. The value may be mutated in place, so every notification re-evaluates.
    """

    def get(self) -> V_co: ...

    def subscribe(self, callback: Callable[..., None], /) -> Callable[[], None]: ...


@dataclass(frozen=True)
class StateCompletion(Generic[V, R]):
    """Wait until ``predicate(value, request)`` holds. Build it with :func:`when`.

    Generic in the value ``V`` the predicate reads and the request ``R`` (the variant's
    input, inferred where ``when`` is written inline in ``variant(completion=...)``).

    Attributes:
        projection: the projection of the Model the value is read from, or ``None``.
        source: the :class:`StateSource` the value is read from instead, or ``None``.
    """

    projection: Projection | None
    predicate: Callable[[V, R], bool]
    timeout: float | timedelta | None = None
    source: StateSource[V] | None = None
    seconds: float = field(init=False, repr=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "seconds", _seconds(self.timeout))

    def read(self, model: Any) -> V:
        """The value the predicate is given: the source's ``get()`` or the projection of
        ``model``."""
        if self.source is not None:
            return self.source.get()
        assert self.projection is not None
        value: Any = self.projection.get(model)  # V is the projection's dict (see when)
        return value


@overload
def when(
    *,
    predicate: Callable[[dict[str, Any], R], bool],
    projection: Projection,
    timeout: float | timedelta | None = None,
) -> StateCompletion[dict[str, Any], R]: ...


@overload
def when(
    *,
    predicate: Callable[[V, R], bool],
    source: StateSource[V],
    timeout: float | timedelta | None = None,
) -> StateCompletion[V, R]: ...


def when(
    *,
    predicate: Callable[[Any, Any], bool],
    projection: Projection | None = None,
    source: StateSource | None = None,
    timeout: float | timedelta | None = None,
) -> StateCompletion:
    """Complete when a condition on the Model (or on an outside source) holds.

    ``predicate(value, request)`` gets the value and the request (the decoded input). The value
    is the projection's (a dict keyed by field name) or, with ``source=``, ``source.get()``.
    Waiting subscribes before the Message is sent and checks once more when waiting starts, so
    a condition already true completes at once. A projection is re-evaluated on every Model
    change that alters the projected value; a source on every notification (it may mutate in
    place). Completed means the condition holds, not that this call made it true.

    Typed for a checker: ``value`` is the projection's ``dict[str, Any]`` (or what
    ``source.get()`` returns) and ``request`` the variant's input, inferred when ``when`` is
    written inline in ``variant(completion=...)``.

    Args:
        predicate: ``(value, request) -> bool``; one that raises fails that call as a defect.
        projection: a projection of this application's Model (``bind`` then needs
            ``host.subscribe``).
        source: a :class:`StateSource` (``get()`` and ``subscribe(callback) -> unsubscribe``)
            for a value outside the Model; ``bind`` then needs nothing more of the host.
        timeout: as for :class:`Completion` (default 30 s, at most ``MAX_TIMEOUT``).

    Raises:
        AgentContractError: neither or both of ``projection`` and ``source``; a source without
            ``get``/``subscribe``; a bad timeout.

    Example:
        >>> when(projection=projection.pick(App.model.todos),
        ...      predicate=lambda v, req: any(t.title == req.title for t in v["todos"]))
        >>> when(source=saved_drafts, predicate=lambda drafts, req: req.id in drafts)
    """
    if (projection is None) == (source is None):
        raise AgentContractError("when takes exactly one of projection= or source=")
    if projection is not None and not isinstance(projection, Projection):  # pyright: ignore[reportUnnecessaryIsInstance]
        raise AgentContractError("when(projection=...) takes a projection")
    if source is not None and not (
        callable(getattr(source, "get", None)) and callable(getattr(source, "subscribe", None))
    ):
        raise AgentContractError(
            "when(source=...) takes an object with get() and subscribe(callback) -> unsubscribe"
        )
    if not callable(predicate):
        raise AgentContractError("when(predicate=...) takes (value, request) -> bool")
    return StateCompletion(
        projection=projection, predicate=predicate, timeout=timeout, source=source
    )


CompletionContract: TypeAlias = Completion | StateCompletion
"""What a variant's ``completion=`` takes: a result Message (:class:`Completion`) or a state
condition (:func:`when`)."""
