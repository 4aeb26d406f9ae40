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

import asyncio
from collections import OrderedDict
from collections.abc import Callable, Hashable
from contextlib import suppress
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any

from .errors import AgentContractError
from .invocation import CallInfo, Invocation
from .message import Message
from .projection import Projection

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


# ---------------------------------------------------------------------------------------------
# WAITING (runtime internals)
# ---------------------------------------------------------------------------------------------


class Waiter:
    """One invocation waiting for its result. Resolved at most once."""

    __slots__ = ("call", "contract", "future", "key", "request")

    def __init__(self, contract: Any, request: Any, invocation: Invocation) -> None:
        self.contract = contract
        self.request = request
        self.call = CallInfo(invocation)
        self.future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self.key: Hashable = None

    def settle(self, value: Any) -> None:
        if not self.future.done():
            self.future.set_result(value)

    def fail(self, exc: BaseException) -> None:
        if not self.future.done():
            self.future.set_exception(exc)


class _TagWaiters:
    """Waiters for one result tag: keyed ones indexed, predicate ones scanned in order."""

    __slots__ = ("keyed", "scanned")

    def __init__(self) -> None:
        # key -> waiters with that key, oldest first (almost always exactly one).
        self.keyed: dict[CorrelationKey, dict[Hashable, list[Waiter]]] = {}
        self.scanned: OrderedDict[int, Waiter] = OrderedDict()

    def empty(self) -> bool:
        return not self.keyed and not self.scanned


class MessageHub:
    """Routes observed Messages to waiting invocations (one ``host.observe`` per runtime)."""

    def __init__(self) -> None:
        self._by_tag: dict[str, _TagWaiters] = {}

    def add(self, waiter: Waiter) -> None:
        contract: Completion = waiter.contract
        correlate = contract.correlate
        for cls in (contract.success, contract.failure):
            if cls is None:
                continue
            group = self._by_tag.setdefault(cls.tag(), _TagWaiters())
            if isinstance(correlate, CorrelationKey):
                if waiter.key is None:
                    waiter.key = correlate.request_key(waiter.request, waiter.call)
                group.keyed.setdefault(correlate, {}).setdefault(waiter.key, []).append(waiter)
            else:
                group.scanned[id(waiter)] = waiter

    def remove(self, waiter: Waiter) -> None:
        contract: Completion = waiter.contract
        correlate = contract.correlate
        for cls in (contract.success, contract.failure):
            if cls is None:
                continue
            tag = cls.tag()
            group = self._by_tag.get(tag)
            if group is None:
                continue
            if isinstance(correlate, CorrelationKey):
                index = group.keyed.get(correlate)
                if index is not None:
                    bucket = index.get(waiter.key)
                    if bucket is not None:
                        with suppress(ValueError):
                            bucket.remove(waiter)
                        if not bucket:
                            del index[waiter.key]
                    if not index:
                        del group.keyed[correlate]
            else:
                group.scanned.pop(id(waiter), None)
            if group.empty():
                del self._by_tag[tag]

    def count(self) -> int:
        ids: set[int] = set()
        for group in self._by_tag.values():
            ids.update(group.scanned)
            for index in group.keyed.values():
                for bucket in index.values():
                    ids.update(id(w) for w in bucket)
        return len(ids)

    def on_message(self, message: Any) -> None:
        """Called by the host for every applied Message; settles at most one waiter."""
        tag = getattr(message, "__message_tag__", None)
        group = self._by_tag.get(tag) if tag is not None else None
        if group is None:
            return
        for correlation, index in list(group.keyed.items()):
            try:
                key = correlation.result_key(message)
            except Exception:  # a broken key function must not break the host
                continue
            bucket = index.get(key)
            if bucket:
                self._resolve(bucket[0], message)
                return
        for waiter in list(group.scanned.values()):
            correlate = waiter.contract.correlate
            if correlate is not None:
                try:
                    matched = bool(correlate(waiter.request, message, waiter.call))
                except Exception as exc:
                    self.remove(waiter)
                    waiter.fail(exc)
                    continue
                if not matched:
                    continue
            self._resolve(waiter, message)
            return

    def _resolve(self, waiter: Waiter, message: Message) -> None:
        self.remove(waiter)
        status = "completed" if type(message) is waiter.contract.success else "failed"
        waiter.settle((status, message))


class StateHub:
    """Evaluates state conditions on Model changes (one ``host.subscribe`` per runtime).

    Waiters are grouped by projection; a notification that leaves a projection's value
    unchanged evaluates none of its predicates.
    """

    def __init__(self) -> None:
        self._groups: dict[int, tuple[Projection, dict[int, Waiter]]] = {}
        self._last: dict[int, dict[str, Any]] = {}

    def add(self, waiter: Waiter) -> None:
        projection: Projection = waiter.contract.projection
        self._groups.setdefault(id(projection), (projection, {}))[1][id(waiter)] = waiter

    def remove(self, waiter: Waiter) -> None:
        key = id(waiter.contract.projection)
        group = self._groups.get(key)
        if group is None:
            return
        group[1].pop(id(waiter), None)
        if not group[1]:
            del self._groups[key]
            self._last.pop(key, None)

    def count(self) -> int:
        return sum(len(g[1]) for g in self._groups.values())

    def check(self, waiter: Waiter, model: Any) -> None:
        """Evaluate one waiter against ``model`` (the check when waiting starts)."""
        contract: StateCompletion = waiter.contract
        value = contract.projection.get(model)
        if id(contract.projection) in self._groups:
            self._last[id(contract.projection)] = value
        self._evaluate(waiter, value)

    def on_model(self, model: Any) -> None:
        for key, (projection, waiters) in list(self._groups.items()):
            value = projection.get(model)
            last = self._last.get(key)
            if last is not None and _same(last, value):
                continue
            self._last[key] = value
            for waiter in list(waiters.values()):
                self._evaluate(waiter, value)

    def _evaluate(self, waiter: Waiter, value: dict[str, Any]) -> None:
        contract: StateCompletion = waiter.contract
        try:
            holds = bool(contract.predicate(value, waiter.request))
        except Exception as exc:
            self.remove(waiter)
            waiter.fail(exc)
            return
        if holds:
            self.remove(waiter)
            waiter.settle(("completed", None))


def _same(a: dict[str, Any], b: dict[str, Any]) -> bool:
    if a.keys() != b.keys():
        return False
    return all(a[k] is b[k] or a[k] == b[k] for k in a)
