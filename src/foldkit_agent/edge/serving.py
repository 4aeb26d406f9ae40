"""A uvicorn server that drains on SIGTERM and SIGINT, for ``serve`` and for your own server.

uvicorn on its own, told to stop, closes the listening socket, lets sse-starlette end every
open event stream at once (an MCP call answered over SSE then gets no answer at all), waits
``timeout_graceful_shutdown`` for the rest, and finally re-raises the signal, so the process
dies with it (status -15) before code after ``serve()`` runs: the runtime is never closed and
audit entries still queued are lost.

:func:`draining_server` gives a ``uvicorn.Server`` that, on the first SIGTERM or SIGINT:

1. tells every runtime to stop accepting calls
   (:meth:`~foldkit_agent.runtime.AgentRuntime.stop_accepting`): a new call is refused before
   it runs, saying the server is shutting down and nothing was sent. The socket stays open
   until the drain ends, so clients finishing a call can still list tools, close their
   session or read (an MCP client lists tools to check a result's schema);
2. lets the calls in flight finish, up to ``drain_timeout`` seconds, then answers the rest in
   each protocol's words ("the server shut down; the outcome is unknown"), each with its one
   audit entry (:func:`foldkit_agent.drain`);
3. waits until every response carrying a call's answer has been written
   (:func:`~foldkit_agent.edge.disconnect.answers_written`), awaits ``after_drain``, then
   shuts uvicorn down as usual: connections closed, lifespans left (runtimes and audit sinks
   closed by whoever opened them), and ``serve()`` *returns*: no signal is re-raised, so the
   process exits 0 through its own cleanup.

A second signal cuts the drain short and keeps everything else: the calls still running are
aborted at once and answered in their protocol's words ("the server shut down; the outcome is
unknown"), each with its audit entry, and the shutdown goes on as above (answers written,
lifespans left, sinks flushed and closed); ``server.cut_by`` is then that signal's number
(``serve`` exits ``128 + signal``: 143 for SIGTERM, 130 for SIGINT, so a supervisor can tell a
drain cut short from a complete one). A third signal stops at once (uvicorn's forced exit),
without answering or flushing anything more.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

from ..runtime.bound import AgentRuntime
from ..runtime.drain import DEFAULT_ABORT_GRACE, Drained, drain, drain_timeout
from .disconnect import answers_written

__all__ = ["draining_server"]

_log = logging.getLogger("foldkit_agent.serve")


def draining_server(
    config: Any,
    runtimes: Sequence[AgentRuntime[Any, Any]],
    *,
    within: float | None = None,
    grace: float = DEFAULT_ABORT_GRACE,
    after_drain: Callable[[], Awaitable[None]] | None = None,
    on_drained: Callable[[Drained], None] | None = None,
) -> Any:
    """A ``uvicorn.Server`` for ``config`` that drains ``runtimes`` on SIGTERM and SIGINT.

    Args:
        config: a ``uvicorn.Config``.
        runtimes: the runtimes behind the app (see :func:`foldkit_agent.drain`).
        within: seconds calls in flight get to finish; default
            :func:`foldkit_agent.drain_timeout` (the longest completion timeout plus 5 s).
        grace: seconds the calls aborted at the deadline get to answer.
        after_drain: awaited after the drain, before uvicorn shuts down.
        on_drained: called with the :class:`~foldkit_agent.Drained` report.

    Returns:
        A ``uvicorn.Server``; ``await server.serve()`` returns after the drain and shutdown.
        Its ``cut_by`` is the number of the second signal that cut the drain short, or
        ``None``.

    Example:
        >>> server = draining_server(uvicorn.Config(app, port=8000), [rt])
        >>> await server.serve()  # SIGTERM: drained, closed, returns
    """
    from ._uvicorn import signalled_server, stop

    draining: list[asyncio.Task[None]] = []
    cut = asyncio.Event()

    async def drain_then_exit() -> None:
        try:
            seconds = drain_timeout(*runtimes) if within is None else within
            pending = sum(rt.pending() for rt in runtimes)
            _log.warning(
                "shutting down: draining %d call(s) in flight (up to %gs)", pending, seconds
            )
            drained = await drain(*runtimes, within=seconds, grace=grace, cut=cut)
            if on_drained is not None:
                on_drained(drained)
            _log.warning(
                "drained: %d finished, %d aborted (outcome unknown), %d left",
                drained.in_flight - drained.aborted,
                drained.aborted,
                drained.left,
            )
            await answers_written(grace)  # the SDKs write the last answers on their tasks
            if after_drain is not None:
                await after_drain()
        except Exception:
            _log.warning("draining calls in flight failed", exc_info=True)
        finally:
            stop(server)

    def on_signal(sig: int, nth: int) -> None:
        if nth == 1 and not draining:
            draining.append(asyncio.ensure_future(drain_then_exit()))
        elif nth == 2:  # a second: abort and answer the calls in flight now
            server.cut_by = sig
            _log.warning("second signal: aborting the calls still in flight now")
            cut.set()

    server = signalled_server(config, on_signal)
    server.cut_by = None
    return server
