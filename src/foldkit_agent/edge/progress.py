"""Keep a long call audible: a beat every ``interval`` seconds while it waits (DESIGN §10).

A call that waits on its completion contract can take up to its timeout (30 s by default)
before it answers. Some clients and proxies give up on a silent request long before that, so
the network adapters send a sign of life on the call's own channel while it is pending: MCP a
``notifications/progress`` for a ``tools/call`` that carried a ``progressToken``, A2A a
``WORKING`` status update on a streaming task. This module is the shared clock; each adapter
supplies what one beat sends.

Rules every adapter gets from :func:`beat_until_done`:

* a beat at least every ``interval`` seconds, counted from the start of waiting, until the
  call resolves (a beat that took long is followed by the next one at once, not ``interval``
  later);
* beats in order, numbered 1, 2, 3, ... and never two at a time;
* no beat after the call resolved: the function returns only when no beat is running, so the
  adapter sends its answer after the last beat;
* a beat that cannot be delivered within ``interval`` (a client that stopped reading) is given
  up, and one that raises is logged; neither touches the call itself.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Collection
from typing import Any, Final

from ..contract.completion import Completion, StateCompletion
from ..contract.declare import Capability

__all__ = [
    "DEFAULT_PROGRESS_INTERVAL",
    "Beat",
    "beat_until_done",
    "check_interval",
    "waiting_text",
]

_log = logging.getLogger("foldkit_agent.edge.progress")

DEFAULT_PROGRESS_INTERVAL: Final = 5.0
"""Seconds between two signs of life of a pending call, unless the server is told otherwise."""

Beat = Callable[[int], Awaitable[None]]
"""``beat(n)`` sends the ``n``-th sign of life (``n`` = 1, 2, 3, ...)."""


def check_interval(interval: float) -> float:
    """``interval`` as a float, or :class:`ValueError` when it is not a positive finite number.

    Example:
        >>> check_interval(5)
        5.0
    """
    value = float(interval)
    if not value > 0 or value == float("inf"):
        raise ValueError(
            f"progress_interval must be a positive number of seconds, not {interval!r}"
        )
    return value


async def beat_until_done(
    pending: asyncio.Future[Any] | Collection[asyncio.Future[Any]], *, interval: float, beat: Beat
) -> int:
    """Wait until ``pending`` is done, calling ``beat`` every ``interval`` seconds meanwhile.

    ``pending`` itself is never cancelled, awaited for its result or changed: the caller owns
    it (and its cancellation). When the caller's own task is cancelled, the cancellation
    propagates from here as usual.

    Args:
        pending: the call in flight (a task or future), or several: then until the first of
            them is done (a call, or its request for a person's approval).
        interval: seconds between beats (see :func:`check_interval`).
        beat: ``async (n) -> None``; its exceptions are logged and otherwise ignored, and it
            is given up after ``interval`` seconds.

    Returns:
        How many beats were started.

    Example:
        >>> task = asyncio.ensure_future(rt.call(name, payload, inv))
        >>> await beat_until_done(task, interval=5.0, beat=send_progress)
        >>> outcome = task.result()
    """
    futures = {pending} if isinstance(pending, asyncio.Future) else set(pending)
    loop = asyncio.get_running_loop()
    started = loop.time()
    n = 0
    while True:
        due = started + (n + 1) * interval
        done, _pending = await asyncio.wait(
            futures, timeout=max(0.0, due - loop.time()), return_when=asyncio.FIRST_COMPLETED
        )
        if done:  # (asyncio.wait returns at once when one is done already)
            break
        n += 1
        try:
            # asyncio.timeout, not wait_for: on Python 3.11 wait_for can swallow a
            # cancellation that arrives just as the beat finishes
            async with asyncio.timeout(interval):
                await beat(n)
        except TimeoutError:
            _log.debug("beat %d was not delivered within %s s; skipped", n, interval)
        except Exception:
            _log.warning("sending beat %d of a pending call failed", n, exc_info=True)
    return n


def waiting_text(cap: Capability | None, name: str) -> tuple[float | None, str]:
    """``(total seconds or None, text)``: what a sign of life of a pending call says.

    The total is the completion contract's timeout, so a client can show how much of the
    longest possible wait has passed; without a contract there is none.

    Example:
        >>> waiting_text(AppAgent.by_name["create_todo"], "create_todo")
        (5.0, 'create_todo is waiting for SavedTodo (up to 5 s)')
    """
    done = cap.completion if cap is not None else None
    if isinstance(done, Completion):
        seconds = float(done.seconds)
        return seconds, f"{name} is waiting for {done.success.tag()} (up to {seconds:g} s)"
    if isinstance(done, StateCompletion):
        seconds = float(done.seconds)
        return (
            seconds,
            f"{name} is waiting for the application to show the change (up to {seconds:g} s)",
        )
    return None, f"{name} is waiting for the application to take the call"
