"""Disconnect cancels: a client that goes away before its answer aborts its call.

:class:`~foldkit_agent.edge.EdgeGuard` reads a request's whole body before the application
sees it, so from then on the only thing the server can still receive on that request is
``http.disconnect``. The guard watches for it (:class:`Watch`, left in ``scope[WATCH]``) and
leaves an :class:`asyncio.Event` in ``scope[CLIENT_GONE]``, set when the client went away
*before* the response ended (a disconnect after a complete response, which uvicorn also
reports, is not one). A call in flight registers its signal with :meth:`Watch.carries_call`
(:class:`~foldkit_agent.edge.calls.CallsInFlight` does, for every transport), so the runtime answers
and audits the call as cancelled at once instead of waiting out its completion timeout for
nobody (MCP both eras, A2A ``message/send`` and ``message/stream``, the page and native
surface); the watcher sets it directly, with no task of its own per call.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from typing import Any, Final

from starlette.types import Message, Receive, Scope, Send

__all__ = ["CLIENT_GONE", "WATCH", "Watch", "answers_written", "client_gone"]

CLIENT_GONE: Final = "foldkit_agent.edge.client_gone"
"""``scope[CLIENT_GONE]``: an :class:`asyncio.Event` set when the client went away before its
response ended (only on requests that passed the guard with a body)."""


_ANSWERING: set[Watch] = set()
"""Requests that carry a call whose answer is not written yet (see :func:`answers_written`)."""
_written: list[asyncio.Future[None]] = []

WATCH: Final = "foldkit_agent.edge.watch"
"""``scope[WATCH]``: the request's :class:`Watch`."""


class Watch:
    """The receive and send a guarded request's application gets, and its watcher task.

    Made by the guard for a request whose whole ``body`` it read: puts a fresh
    :data:`CLIENT_GONE` event and itself (:data:`WATCH`) in ``scope`` and starts watching
    ``receive``. Its ``receive`` replays ``body`` once; call :meth:`close` when the
    application returns.
    """

    def __init__(self, body: bytes, receive: Receive, send: Send, scope: Scope) -> None:
        gone = scope[CLIENT_GONE] = asyncio.Event()
        scope[WATCH] = self
        self._first: Message | None = {"type": "http.request", "body": body, "more_body": False}
        self._receive = receive
        self._send = send
        self._gone = gone
        self._signals: list[asyncio.Event] = []  # of the calls this request carries
        self._answered = False
        self.tail: asyncio.Future[Message] = asyncio.ensure_future(self._wait_disconnect())

    async def _wait_disconnect(self) -> Message:
        message = await self._receive()  # the body was read: only a disconnect can come
        if message.get("type") == "http.disconnect" and not self._answered:
            self._gone.set()
            for signal in self._signals:
                signal.set()
        return message

    async def receive(self) -> Message:
        """The replayed body first, then what the watcher received (shared by every caller)."""
        if self._first is not None:
            first, self._first = self._first, None
            return first
        return await asyncio.shield(self.tail)

    async def send(self, message: Message) -> None:
        if message.get("type") == "http.response.body" and not message.get("more_body", False):
            self._answered = True  # set before uvicorn marks the response complete
        await self._send(message)

    def carries_call(self, signal: asyncio.Event | None = None) -> None:
        """This request's response carries a call's answer: :func:`answers_written` waits
        for it (unless it has ended already), and ``signal`` is set if the client goes away
        before the answer (at once, if it has gone already)."""
        if not self._answered and not self.tail.cancelled():
            _ANSWERING.add(self)
        if signal is not None:
            if self._gone.is_set():
                signal.set()
            else:
                self._signals.append(signal)

    def close(self) -> None:
        """The application returned, its answer written: stop watching, and wake a drain
        waiting for the answers once this was the last (:func:`answers_written`)."""
        self.tail.cancel()
        _ANSWERING.discard(self)
        if not _ANSWERING:
            waiters = list(_written)
            _written.clear()
            for fut in waiters:
                if not fut.done():
                    fut.set_result(None)


async def answers_written(within: float) -> bool:
    """Wait up to ``within`` seconds until every response carrying a call's answer has been
    written (its application returned, its last body chunk handed to the server); ``True`` if
    none is left.

    A drain calls it after the runtimes are idle: a call has answered by then, but the SDK may
    still be writing the answer on its own task, and a server that ends its streams too early
    would lose it (the client gets "SSE stream ended without a response").
    """
    if not _ANSWERING:
        return True
    fut: asyncio.Future[None] = asyncio.get_running_loop().create_future()
    _written.append(fut)
    await asyncio.wait({fut}, timeout=max(0.0, within))
    return not _ANSWERING


def client_gone(scope: Mapping[str, Any] | None) -> asyncio.Event | None:
    """The request's :data:`CLIENT_GONE` event, or ``None`` (not behind the guard)."""
    if scope is None:
        return None
    gone = scope.get(CLIENT_GONE)
    return gone if isinstance(gone, asyncio.Event) else None
