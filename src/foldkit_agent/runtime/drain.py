"""Graceful drain: stop taking calls, let the ones in flight finish, answer the rest.

A server told to stop (SIGTERM, Ctrl-C, a deploy) calls :func:`drain` before it closes any
connection:

1. every runtime stops accepting: a call that arrives now is refused before it runs, with an
   :class:`~foldkit_agent.errors.AgentCancelledError` saying the server is shutting down and
   nothing was sent;
   a call waiting for a person's approval is answered at once that the server shut down
   and nothing was sent (nobody can be relied on to answer a server that is stopping, and
   nothing of it needs finishing);
2. the other calls in flight get up to ``within`` seconds to finish on their own (by default the
   longest completion timeout in the contracts plus :data:`DRAIN_MARGIN`, so a call that
   would have completed does);
3. each one still running then has its signal set: it answers in its protocol's words that
   the server shut down and whether its Message was sent (the outcome is unknown; nothing is
   rolled back), and writes its one audit entry. ``grace`` bounds the wait for those answers.

After it returns, close the runtimes and the audit log (``AuditLog.close`` flushes the sink),
then the server. ``foldkit-agent serve`` does all of this on SIGTERM and SIGINT
(``--drain-timeout``); :func:`~foldkit_agent.edge.serving.draining_server` does it for a
uvicorn server of your own.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Any

from ..contract.completion import Completion, StateCompletion
from .bound import AgentRuntime

__all__ = ["DEFAULT_ABORT_GRACE", "DRAIN_MARGIN", "Drained", "drain", "drain_timeout"]

DRAIN_MARGIN = 5.0
"""Seconds added to the longest completion timeout for the default drain deadline."""

DEFAULT_ABORT_GRACE = 5.0
"""Seconds the calls aborted at the deadline get to answer and write their audit entries."""


@dataclass(frozen=True, slots=True)
class Drained:
    """What a :func:`drain` did.

    Attributes:
        in_flight: calls in flight when the drain began.
        aborted: calls still running at the deadline, whose signal was set.
        left: calls still in flight after the grace (``0`` unless a host ignores its signal).
    """

    in_flight: int
    aborted: int
    left: int


def drain_timeout(*runtimes: AgentRuntime[object, object]) -> float:
    """The default drain deadline: the longest completion timeout in the runtimes'
    contracts plus :data:`DRAIN_MARGIN` seconds (just the margin without completions).

    Example:
        >>> drain_timeout(rt)  # a contract whose longest completion waits 30 s
        35.0
    """
    longest = 0.0
    for rt in runtimes:
        for cap in rt.definition.capabilities:
            if isinstance(cap.completion, Completion | StateCompletion):
                longest = max(longest, float(cap.completion.seconds))
    return longest + DRAIN_MARGIN


async def drain(
    *runtimes: AgentRuntime[object, object],
    within: float | None = None,
    grace: float = DEFAULT_ABORT_GRACE,
    cut: asyncio.Event | None = None,
) -> Drained:
    """Stop accepting calls, wait for those in flight, then abort and answer the rest.

    Args:
        runtimes: the runtimes the server serves (each is told to stop accepting).
        within: seconds the calls in flight get to finish on their own; default
            :func:`drain_timeout` of the runtimes. ``0`` aborts them at once.
        grace: seconds the aborted calls get to answer (each writes its audit entry).
        cut: once set, the wait for the calls in flight ends at once, as if the deadline had
            passed (a second SIGTERM): the calls still running are aborted and answered.

    Returns:
        :class:`Drained`: how many were in flight, aborted, and left.

    Raises:
        ValueError: ``within`` or ``grace`` is negative or not a number.

    Example:
        >>> drained = await drain(rt, within=10)
        >>> (drained.aborted, drained.left)
        (0, 0)
    """
    deadline_in = drain_timeout(*runtimes) if within is None else within
    for name, value in (("within", deadline_in), ("grace", grace)):
        if isinstance(value, bool) or not isinstance(value, int | float) or not value >= 0:  # pyright: ignore[reportUnnecessaryIsInstance]
            raise ValueError(f"drain({name}=...) takes seconds >= 0, got {value!r}")
    loop = asyncio.get_running_loop()
    for rt in runtimes:
        rt.stop_accepting()
        rt.abort_in_flight(asking=True)
    in_flight = sum(rt.pending() for rt in runtimes)
    deadline = loop.time() + deadline_in

    async def idle() -> None:
        for rt in runtimes:
            await rt.until_idle(deadline - loop.time())

    waiting = asyncio.ensure_future(idle())
    waits: set[asyncio.Future[Any]] = {waiting}
    if cut is not None:
        waits.add(asyncio.ensure_future(cut.wait()))
    try:
        await asyncio.wait(waits, return_when=asyncio.FIRST_COMPLETED)
    finally:
        for pending in waits:
            pending.cancel()
    aborted = 0
    if any(rt.pending() for rt in runtimes):
        aborted = sum(rt.abort_in_flight() for rt in runtimes)
        end = loop.time() + grace
        for rt in runtimes:
            await rt.until_idle(end - loop.time())
    return Drained(in_flight, aborted, sum(rt.pending() for rt in runtimes))
