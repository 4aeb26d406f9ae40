"""Awaiting something a call waits on, against the call's signal and a deadline."""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Awaitable
from typing import Any

__all__ = ["Abort", "Deadline", "race"]


class Abort(Exception):
    """The invocation's signal was set while something was awaited."""


class Deadline(Exception):
    """The completion deadline passed while something was awaited."""


async def race(aw: Awaitable[Any], signal: asyncio.Event | None, deadline: float | None) -> Any:
    """Await ``aw`` unless ``signal`` is set (raise :class:`Abort`) or ``deadline`` passes
    (:class:`Deadline`, a loop time in seconds). A coroutine that loses the race is cancelled;
    a plain future is left alone (it belongs to someone else)."""
    if signal is None and deadline is None:
        return await aw
    loop = asyncio.get_running_loop()
    owned = inspect.iscoroutine(aw)
    fut: asyncio.Future[Any] = asyncio.ensure_future(aw)
    waits: set[asyncio.Future[Any]] = {fut}
    sig_task: asyncio.Task[Any] | None = None
    if signal is not None:
        if signal.is_set():
            if owned:
                fut.cancel()
            raise Abort
        sig_task = loop.create_task(signal.wait())
        waits.add(sig_task)
    timeout = None if deadline is None else max(0.0, deadline - loop.time())
    try:
        done, _ = await asyncio.wait(waits, timeout=timeout, return_when=asyncio.FIRST_COMPLETED)
    except asyncio.CancelledError:
        if owned:
            fut.cancel()
        raise
    finally:
        if sig_task is not None:
            sig_task.cancel()
    if fut in done:
        return fut.result()
    if owned:
        fut.cancel()
    if sig_task is not None and sig_task in done:
        raise Abort
    raise Deadline
