"""The page's change feed: ``GET events`` as server-sent events.

``ready`` once connected (with the names available now), then ``change`` whenever
availability, the context or a resource changed, ``approvals`` (this page session's calls
waiting for the person) whenever that list changed, ``ended`` ``{"id"}`` when one of its
parked calls has answered (read the answer from ``GET calls/<id>``), and, where the surface
follows an activity feed, ``activity`` ``{}`` when something new happened. Runtime changes may be
pushed from any thread; they are merged, so a slow page sees one event for a burst of changes.
"""

from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any, TypeVar

import anyio
from sse_starlette import EventSourceResponse, ServerSentEvent
from starlette.responses import Response

from ...edge.activity import ActivityFeed
from ...errors import AgentError
from ...runtime.bound import AgentRuntime, Change
from .checks import rejected

__all__ = ["ChangeFeed", "PageFeeds", "unless_shutdown"]

T = TypeVar("T")


async def unless_shutdown(wait: Callable[[], Awaitable[T]], shutdown: anyio.Event) -> T | None:
    """What ``wait()`` returns, or ``None`` once ``shutdown`` is set first (the server is
    stopping: an event stream then ends its response cleanly instead of being cut)."""
    got: list[T] = []
    async with anyio.create_task_group() as tg:

        async def read() -> None:
            got.append(await wait())
            tg.cancel_scope.cancel()

        async def stop() -> None:
            await shutdown.wait()
            tg.cancel_scope.cancel()

        tg.start_soon(read)
        tg.start_soon(stop)
    return got[0] if got else None


async def _boxed(waiting: Awaitable[T]) -> tuple[T]:
    """What ``waiting`` gives, in a box (so a ``None`` it gives is not a shutdown)."""
    return (await waiting,)


class ChangeFeed:
    """Merges runtime changes for one event stream; safe to push from any thread."""

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self._loop = loop
        self._thread = threading.get_ident()
        self._approvals = False
        self._ended: list[str] = []
        self._caps = False
        self._ctx = False
        self._res: set[str] = set()
        self._ready = asyncio.Event()

    def push(self, change: Change) -> None:
        if threading.get_ident() == self._thread:
            self._merge(change)
        else:
            self._loop.call_soon_threadsafe(self._merge, change)

    def _merge(self, change: Change) -> None:
        self._caps |= change.capabilities
        self._ctx |= change.context
        self._res |= change.resources
        self._ready.set()

    def approvals_changed(self, ended: str | None = None) -> None:
        """The session's waiting approvals changed (called on the event loop); ``ended``: the
        id of its call that has just answered."""
        self._approvals = True
        if ended is not None:
            self._ended.append(ended)
        self._ready.set()

    def take_approvals(self) -> tuple[bool, list[str]]:
        """Whether the approvals changed since last asked, and the calls ended meanwhile."""
        changed, self._approvals = self._approvals, False
        ended, self._ended = self._ended, []
        return changed, ended

    async def next(self) -> Change:
        await self._ready.wait()
        self._ready.clear()
        change = Change(self._caps, self._ctx, frozenset(self._res))
        self._caps, self._ctx, self._res = False, False, set()
        return change


class PageFeeds:
    """The open event streams of a surface, by page session (``None``: no session).

    Args:
        ping: seconds between keep-alive comments on each stream.
    """

    def __init__(self, ping: float) -> None:
        self.ping = ping
        self._streams: dict[str | None, set[ChangeFeed]] = {}

    def announce(self, owner: str | None, ended: str | None = None) -> None:
        """Tell ``owner``'s streams that its waiting approvals changed (``ended``: the id of
        its call that has just answered)."""
        for feed in list(self._streams.get(owner, ())):
            feed.approvals_changed(ended)

    def stream(
        self,
        rt: AgentRuntime[Any, Any],
        owner: str | None,
        waiting: Callable[[], list[dict[str, Any]]],
        activity: ActivityFeed | None = None,
    ) -> Response:
        """The ``events`` response for ``owner``, reading ``rt``'s changes, ``waiting()``
        (its approvals) and ``activity``; 501 when the application cannot report changes."""
        feed = ChangeFeed(asyncio.get_running_loop())
        try:
            unwatch = rt.watch(feed.push)
        except AgentError:
            return rejected(501, "no-events", "This application cannot report changes.")
        listeners = self._streams.setdefault(owner, set())
        listeners.add(feed)

        def unsubscribe() -> None:
            unwatch()
            listeners.discard(feed)
            if not listeners:
                self._streams.pop(owner, None)

        def available() -> list[str]:
            return [c.name for c in rt.messages.available()]

        shutdown = anyio.Event()  # set by sse-starlette when the server shuts down

        async def next_change() -> Change | None:
            """The next change, or ``None`` when the activity grew first."""
            if activity is None:
                return await feed.next()
            waits: list[asyncio.Future[Any]] = [
                asyncio.ensure_future(feed.next()),
                asyncio.ensure_future(activity.wait(activity.last_seq)),
            ]
            try:
                await asyncio.wait(waits, return_when=asyncio.FIRST_COMPLETED)
            finally:
                for w in waits:
                    w.cancel()
            return waits[0].result() if waits[0].done() and not waits[0].cancelled() else None

        async def events() -> AsyncIterator[ServerSentEvent]:
            try:
                yield ServerSentEvent(json.dumps({"available": available()}), event="ready")
                while True:
                    got = await unless_shutdown(lambda: _boxed(next_change()), shutdown)
                    if got is None:  # shutting down: end the response cleanly
                        return
                    change = got[0]
                    if change is None:
                        yield ServerSentEvent("{}", event="activity")
                        continue
                    changed, ended = feed.take_approvals()
                    if changed:
                        yield ServerSentEvent(
                            json.dumps({"approvals": waiting()}), event="approvals"
                        )
                        for key in ended:
                            yield ServerSentEvent(json.dumps({"id": key}), event="ended")
                        if not (change.capabilities or change.context or change.resources):
                            continue
                    data = {
                        "capabilities": change.capabilities,
                        "context": change.context,
                        "resources": sorted(change.resources),
                        "available": available(),
                    }
                    yield ServerSentEvent(json.dumps(data), event="change")
            finally:
                unsubscribe()

        return EventSourceResponse(
            events(),
            ping=self.ping,
            headers={"Cache-Control": "no-store"},
            shutdown_event=shutdown,
            shutdown_grace_period=1.0,
        )
