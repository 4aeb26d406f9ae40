"""Waiting for results: the per-runtime hubs that route observed Messages and Model changes
to the invocations waiting on them (the machinery behind ``agent.Completion`` and
``agent.when``; the declarations live in :mod:`foldkit_agent.contract.completion`)."""

from __future__ import annotations

import asyncio
from collections import OrderedDict
from collections.abc import Hashable
from contextlib import suppress
from typing import Any

from ..app.message import Message
from ..app.projection import Projection
from ..contract.calls import CallInfo, Invocation
from ..contract.completion import Completion, CorrelationKey, StateCompletion


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
