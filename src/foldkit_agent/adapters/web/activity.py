"""The activity feed as server-sent events for a page.

:func:`activity_endpoint` turns an :class:`~foldkit_agent.edge.ActivityFeed` into a Starlette
endpoint: ``GET`` it with ``EventSource`` and receive ``activity`` events
``{"items": [<ActivityItem.to_json()>, ...], "missed": n}`` — first the last ``history`` items,
then each new batch as it happens. ``missed`` counts items the reader never got (evicted from
the feed's ring before it read them, or left out of the first batch).

Who may read it is the application's decision, made twice: its guard (put the route behind
:class:`~foldkit_agent.edge.EdgeGuard` with ``Rules(origin="page", body=False)`` and a session
step, so that another site's page is refused at step 2 and a visitor without a session at step
3), and ``visible(request, item)``, which filters what one reader sees (by default everything
the runtime's callers did: give a filter when callers must not see each other). The route
changes nothing, so it needs no CSRF token; it is ``GET`` only, answered ``no-store``.

Bounded: no queue per reader (readers share the feed's ring and remember one number), at most
``max_streams`` open streams per session (429 beyond), and a stream ends when the server shuts
down.

Example::

    feed = ActivityFeed(runtime.audit)
    routes = [Route("/app/activity", activity_endpoint(feed, session_of=session_of))]
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import anyio
from sse_starlette import EventSourceResponse, ServerSentEvent
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.types import Receive, Scope, Send

from ...edge.activity import ActivityFeed, ActivityItem
from .feed import unless_shutdown

__all__ = ["ReleasingStream", "activity_endpoint"]

Visible = Callable[[Request, ActivityItem], bool]


def activity_endpoint(
    feed: ActivityFeed,
    *,
    session_of: Callable[[Request], str | None],
    visible: Visible | None = None,
    history: int = 20,
    max_streams: int = 4,
    ping: float = 15.0,
) -> Callable[[Request], Awaitable[Response]]:
    """A ``GET`` endpoint streaming ``feed`` to the page of one session.

    Args:
        feed: what to stream.
        session_of: ``(request) -> session id | None``; ``None`` is refused with 401.
        visible: ``(request, item) -> bool``: whether this reader may see ``item``;
            everything by default.
        history: how many past items the first event carries (at most ``feed.keep``).
        max_streams: open streams one session may hold; one more is refused with 429.
        ping: seconds between keep-alive comments.

    Returns:
        ``async (request) -> Response``, for ``Route(path, endpoint, methods=["GET"])``.

    Raises:
        ValueError: ``history`` below 0 or ``max_streams`` below 1.
    """
    if history < 0 or max_streams < 1:
        raise ValueError("history must be >= 0 and max_streams >= 1")
    open_streams: dict[str, int] = {}

    def shown(request: Request, items: list[ActivityItem]) -> list[dict[str, Any]]:
        return [i.to_json() for i in items if visible is None or visible(request, i)]

    async def endpoint(request: Request) -> Response:
        sid = session_of(request)
        if sid is None:
            return JSONResponse({"error": "sign in first"}, status_code=401)
        if open_streams.get(sid, 0) >= max_streams:
            text = f"at most {max_streams} activity streams per session; close one"
            return JSONResponse({"error": text}, status_code=429)
        open_streams[sid] = open_streams.get(sid, 0) + 1
        shutdown = anyio.Event()  # set by sse-starlette when the server shuts down

        def release() -> None:
            left = open_streams.get(sid, 1) - 1
            if left > 0:
                open_streams[sid] = left
            else:
                open_streams.pop(sid, None)

        async def next_batch(seen: int) -> bool:
            """Wait for an item after ``seen``; ``False`` when the server is shutting down."""
            await unless_shutdown(lambda: feed.wait(seen), shutdown)
            return not shutdown.is_set()

        async def stream() -> AsyncIterator[ServerSentEvent]:
            items, missed = feed.since(0, at_most=history)
            seen = missed + len(items)
            data = {"items": shown(request, items), "missed": missed}
            yield ServerSentEvent(json.dumps(data), event="activity")
            while await next_batch(seen):
                items, missed = feed.since(seen)
                seen += missed + len(items)
                data = {"items": shown(request, items), "missed": missed}
                if data["items"] or missed:
                    yield ServerSentEvent(json.dumps(data), event="activity")

        return ReleasingStream(
            stream(),
            release,
            ping=ping,
            headers={"Cache-Control": "no-store"},
            shutdown_event=shutdown,
            shutdown_grace_period=1.0,
        )

    return endpoint


class ReleasingStream(EventSourceResponse):
    """An event stream that gives its session's slot back however it ends (HEAD included)."""

    def __init__(self, content: Any, release: Callable[[], None], **options: Any) -> None:
        super().__init__(content, **options)  # pyright: ignore[reportUnknownMemberType]
        self._release = release

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        try:
            await super().__call__(scope, receive, send)
        finally:
            self._release()
