"""Waiting for results: the per-runtime hubs that route observed Messages, Model changes and
source notifications to the invocations waiting on them (the machinery behind
``agent.Completion`` and ``agent.when``; the declarations live in
:mod:`foldkit_agent.contract.completion`).

A late result goes to nobody. When a call stops waiting without its result (timeout,
cancellation, a host failure), its waiter is *abandoned*, not forgotten: it stays in its place
in call order, so the first result that matches it is consumed by it and delivered to no other
call, even when ``correlate`` cannot tell two calls apart. At most :data:`MAX_ABANDONED`
abandoned waiters are kept per runtime (the oldest are dropped first).
"""

from __future__ import annotations

import asyncio
import itertools
import logging
from collections import OrderedDict, deque
from collections.abc import Callable, Hashable
from contextlib import suppress
from functools import partial
from typing import Any

from ..app.message import Message
from ..contract.calls import CallInfo, Invocation
from ..contract.completion import Completion, CorrelationKey, StateCompletion

__all__ = ["MAX_ABANDONED", "MessageHub", "StateHub", "Waiter"]

_log = logging.getLogger("foldkit_agent.runtime")

MAX_ABANDONED = 1024
"""How many abandoned waiters (calls that stopped waiting) a runtime keeps to absorb their late
results; beyond it the oldest is dropped, and its late result could reach a later call with an
indistinguishable correlation."""

_SEQUENCE = itertools.count()
_NOTHING: Any = object()


class Waiter:
    """One invocation waiting for its result. Resolved at most once.

    Attributes:
        seq: the order the call started waiting in (for matching in call order).
        state: ``"live"`` while the call waits; ``"abandoned"`` once it stopped waiting (a
            result matching it is consumed, not delivered); ``"gone"`` once forgotten.
    """

    __slots__ = ("call", "contract", "future", "key", "last", "request", "seq", "state", "tags")

    def __init__(self, contract: Any, request: Any, invocation: Invocation) -> None:
        self.contract = contract
        self.request = request
        self.call = CallInfo(invocation)
        self.future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self.key: Hashable = None
        self.seq = next(_SEQUENCE)
        self.state = "live"
        self.last: Any = _NOTHING  # the projected value a state predicate last saw
        self.tags: tuple[str, ...] = ()  # the result tags a Message hub indexed it under

    def settle(self, value: Any) -> None:
        if not self.future.done():
            self.future.set_result(value)

    def fail(self, exc: BaseException) -> None:
        if not self.future.done():
            self.future.set_exception(exc)


class _TagWaiters:
    """Waiters for one result tag: keyed ones indexed, predicate ones scanned in order.

    Made on the first wait for its tag and kept: the tags and correlations are the
    contract's (a closed set), so only a call's own bucket comes and goes with it.
    """

    __slots__ = ("keyed", "scanned")

    def __init__(self) -> None:
        # key -> waiters with that key, oldest first (almost always exactly one).
        self.keyed: dict[CorrelationKey, dict[Hashable, list[Waiter]]] = {}
        self.scanned: OrderedDict[int, Waiter] = OrderedDict()


class MessageHub:
    """Routes observed Messages to waiting invocations (one ``host.observe`` per runtime)."""

    def __init__(self) -> None:
        self._by_tag: dict[str, _TagWaiters] = {}
        self._abandoned: deque[Waiter] = deque()
        self._live = 0

    def add(self, waiter: Waiter) -> None:
        """Register ``waiter`` before its Message is sent.

        Raises:
            Exception: what a :class:`CorrelationKey`'s request function raised (nothing was
                registered).
        """
        contract: Completion = waiter.contract
        correlate = contract.correlate
        keyed = isinstance(correlate, CorrelationKey)
        if keyed:
            request_key = correlate.request_key
            waiter.key = (
                waiter.call.invocation.id
                if request_key is None
                else request_key(waiter.request, waiter.call)
            )
        success = contract.success.__message_tag__
        failure = contract.failure
        tags = waiter.tags = (success,) if failure is None else (success, failure.__message_tag__)
        for tag in tags:
            group = self._by_tag.get(tag)
            if group is None:
                group = self._by_tag[tag] = _TagWaiters()
            if keyed:
                group.keyed.setdefault(correlate, {}).setdefault(waiter.key, []).append(waiter)
            else:
                group.scanned[id(waiter)] = waiter
        self._live += 1

    def remove(self, waiter: Waiter) -> None:
        """Forget ``waiter`` entirely (it was resolved, or its result cannot arrive)."""
        if waiter.state == "live":
            self._live -= 1
        elif waiter.state == "abandoned":
            with suppress(ValueError):
                self._abandoned.remove(waiter)
        waiter.state = "gone"
        correlate = waiter.contract.correlate
        keyed = isinstance(correlate, CorrelationKey)
        for tag in waiter.tags:
            group = self._by_tag.get(tag)
            if group is None:
                continue
            if not keyed:
                group.scanned.pop(id(waiter), None)
                continue
            index = group.keyed.get(correlate)
            bucket = None if index is None else index.get(waiter.key)
            if index is None or bucket is None:
                continue
            if waiter in bucket:
                bucket.remove(waiter)
            if not bucket:
                del index[waiter.key]

    def abandon(self, waiter: Waiter) -> None:
        """The call stopped waiting: keep ``waiter`` in place to absorb its late result."""
        if waiter.state != "live":
            return
        waiter.state = "abandoned"
        self._live -= 1
        self._abandoned.append(waiter)
        while len(self._abandoned) > MAX_ABANDONED:
            self.remove(self._abandoned[0])

    def count(self) -> int:
        """Waiters of calls still waiting."""
        return self._live

    def abandoned(self) -> int:
        """Abandoned waiters kept to absorb late results (at most :data:`MAX_ABANDONED`)."""
        return len(self._abandoned)

    def on_message(self, message: Any) -> None:
        """Called by the host for every applied Message; settles at most one waiter.

        Among the waiters the Message matches, the one whose call started waiting first takes
        it; when that call was abandoned the Message goes to nobody.
        """
        tag = getattr(message, "__message_tag__", None)
        group = self._by_tag.get(tag) if tag is not None else None
        if group is None:
            return
        best: Waiter | None = None
        for correlation, index in list(group.keyed.items()):
            result_key = correlation.result_key
            try:
                key = (
                    getattr(message, correlation.result_field or "", None)
                    if result_key is None
                    else result_key(message)
                )
            except Exception:  # a broken key function must not break the host
                _log.warning("a correlate_key result function raised", exc_info=True)
                continue
            bucket = index.get(key)
            if bucket and (best is None or bucket[0].seq < best.seq):
                best = bucket[0]
        for waiter in list(group.scanned.values()):
            if best is not None and waiter.seq > best.seq:
                break
            if self._matches(waiter, message):
                best = waiter
                break
        if best is None:
            return
        abandoned = best.state == "abandoned"
        self.remove(best)
        if abandoned:
            return
        status = "completed" if type(message) is best.contract.success else "failed"
        if not best.future.done():  # as Waiter.settle, without its frame on every result
            best.future.set_result((status, message))

    def _matches(self, waiter: Waiter, message: Message) -> bool:
        correlate = waiter.contract.correlate
        if correlate is None:
            return True
        try:
            return bool(correlate(waiter.request, message, waiter.call))
        except Exception as exc:
            live = waiter.state == "live"
            self.remove(waiter)
            if live:  # an abandoned call has nobody awaiting it any more
                waiter.fail(exc)
            return False


class _StateGroup:
    """The waiters reading one projection or one source."""

    __slots__ = ("unsubscribe", "waiters")

    def __init__(self) -> None:
        self.waiters: dict[int, Waiter] = {}
        self.unsubscribe: Callable[[], None] | None = None


class StateHub:
    """Evaluates state conditions: on Model changes (one ``host.subscribe`` per runtime) for
    projections, on the source's own notifications for ``when(source=...)``.

    Waiters are grouped by projection (or source). A Model notification that leaves a
    projection's value as a waiter last saw it does not evaluate that waiter again; a source is
    re-evaluated on every notification, since it may mutate in place. Reading the value never
    raises into the host or the source: a projection or ``get()`` that raises fails that
    group's calls.
    """

    def __init__(self) -> None:
        self._groups: dict[int, _StateGroup] = {}
        self._sources: dict[int, Any] = {}

    def add(self, waiter: Waiter) -> None:
        """Register ``waiter`` before its Message is sent (subscribing to its source, if any).

        Raises:
            Exception: what the source's ``subscribe`` raised (nothing was registered).
        """
        contract: StateCompletion = waiter.contract
        key = _group_key(contract)
        group = self._groups.get(key)
        if group is None:
            group = self._groups[key] = _StateGroup()
            if contract.source is not None:
                self._sources[key] = contract.source
                try:
                    group.unsubscribe = contract.source.subscribe(partial(self._on_source, key))
                except BaseException:
                    del self._groups[key]
                    self._sources.pop(key, None)
                    raise
        group.waiters[id(waiter)] = waiter

    def remove(self, waiter: Waiter) -> None:
        key = _group_key(waiter.contract)
        group = self._groups.get(key)
        if group is None:
            return
        group.waiters.pop(id(waiter), None)
        if not group.waiters:
            del self._groups[key]
            self._sources.pop(key, None)
            if group.unsubscribe is not None:
                try:
                    group.unsubscribe()
                except Exception:
                    _log.warning("a state source's unsubscribe raised", exc_info=True)

    def count(self) -> int:
        return sum(len(g.waiters) for g in self._groups.values())

    def check(self, waiter: Waiter, model: Any) -> None:
        """Evaluate one waiter against ``model`` (the check when waiting starts)."""
        contract: StateCompletion = waiter.contract
        try:
            value = contract.read(model)
        except Exception as exc:
            self.remove(waiter)
            waiter.fail(exc)
            return
        self._evaluate(waiter, value)

    def on_model(self, model: Any) -> None:
        """The host's Model notification: re-evaluate projections whose value changed."""
        for key, group in list(self._groups.items()):
            if key in self._sources or not group.waiters:
                continue
            waiters = list(group.waiters.values())
            contract: StateCompletion = waiters[0].contract
            self._deliver(waiters, partial(contract.read, model), "projection")

    def _on_source(self, key: int, *_: Any) -> None:
        group = self._groups.get(key)
        source = self._sources.get(key)
        if group is not None and source is not None:
            self._deliver(list(group.waiters.values()), source.get, "state source")

    def _deliver(self, waiters: list[Waiter], read: Callable[[], Any], what: str) -> None:
        """Read one group's value once (``read()``) and evaluate each of its ``waiters`` on
        it; a read that raises fails them all (logged: it is the application's to fix)."""
        try:
            value = read()
        except Exception as exc:
            _log.warning("a completion's %s could not be read", what, exc_info=True)
            for waiter in waiters:
                self.remove(waiter)
                waiter.fail(exc)
            return
        for waiter in waiters:
            if waiter.last is not _NOTHING and waiter.last == value:
                continue  # this waiter already saw this value (only a projection's keep one)
            self._evaluate(waiter, value)

    def _evaluate(self, waiter: Waiter, value: Any) -> None:
        contract: StateCompletion = waiter.contract
        if contract.source is None:
            waiter.last = value
        try:
            holds = bool(contract.predicate(value, waiter.request))
        except Exception as exc:
            self.remove(waiter)
            waiter.fail(exc)
            return
        if holds:
            self.remove(waiter)
            waiter.settle(("completed", None))


def _group_key(contract: StateCompletion) -> int:
    return id(contract.source) if contract.source is not None else id(contract.projection)
