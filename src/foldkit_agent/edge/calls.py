"""One call in flight at a network adapter: started on the runtime, waited for, always answered.

The network adapters (MCP, A2A, the page surface) only translate: they build an
:class:`~foldkit_agent.contract.calls.Invocation`, hand the call to
:meth:`AgentRuntime.call <foldkit_agent.runtime.AgentRuntime.call>` (which never raises for a
refusal or a defect, and answers in the one :class:`~foldkit_agent.runtime.Outcome` shape), and
turn that outcome into their protocol's answer. What they share while the call runs lives here:

* :func:`start_call` runs the call as its own task, so a transport can wait on it, on a
  person's approval and on a clock at once;
* :func:`settle` waits for it, with a sign of life every ``interval`` seconds
  (:func:`~foldkit_agent.edge.progress.beat_until_done`) and, where the transport asks a person
  across requests, returning early once the call asked for approval;
* :func:`credentials_or_none` reads the caller's credentials through a hook that may be sync or
  async, and treats a hook that raises as "nobody".

Cancelling the task that waits (a client's ``notifications/cancelled``, ``tasks/cancel``, a
client gone away, shutdown) aborts the call through its signal: the runtime answers and audits
it once (cancelled, and whether the Message was sent), and the cancellation then propagates.
"""

from __future__ import annotations

import asyncio
import inspect
import logging
from collections.abc import Callable
from typing import Any

import anyio

from ..contract.calls import Invocation
from ..runtime.bound import AgentRuntime
from ..runtime.outcome import Outcome
from .progress import DEFAULT_PROGRESS_INTERVAL, Beat, beat_until_done

__all__ = ["credentials_or_none", "settle", "start_call"]

_log = logging.getLogger("foldkit_agent.edge")


def start_call(
    rt: AgentRuntime[Any, Any], name: str, payload: Any, invocation: Invocation
) -> asyncio.Future[Outcome]:
    """``rt.call(name, payload, invocation)`` as a task of its own.

    Example:
        >>> call = start_call(rt, "create_todo", {"title": "Milk"}, Invocation(signal=signal))
        >>> outcome = await settle(call, signal)
    """
    return asyncio.ensure_future(rt.call(name, payload, invocation))


async def settle(
    call: asyncio.Future[Outcome],
    signal: asyncio.Event,
    asked: asyncio.Future[Any] | None = None,
    beat: Beat | None = None,
    interval: float = DEFAULT_PROGRESS_INTERVAL,
) -> Outcome | None:
    """Wait for ``call`` to answer; with ``asked``, return ``None`` once it asked for approval.

    Args:
        call: from :func:`start_call`; never cancelled here, only aborted through ``signal``.
        signal: the invocation's cancel signal.
        asked: set when the call's approver is asked (``ParkedApprovals.asker()``): the call
            then keeps running, parked, and ``None`` is returned.
        beat: a sign of life every ``interval`` seconds while the call waits (MCP
            ``notifications/progress``, A2A ``WORKING``), none after it ended.
        interval: seconds between beats.

    Returns:
        The call's :class:`~foldkit_agent.runtime.Outcome`, or ``None`` (asked for approval).

    Raises:
        asyncio.CancelledError: the waiting task was cancelled; the call was aborted through
            ``signal`` and has answered (and been audited) before this propagates.
    """
    try:
        if beat is not None:
            waiting = {call} if asked is None else {call, asked}
            await beat_until_done(waiting, interval=interval, beat=beat)
        if asked is not None:
            await asyncio.shield(asyncio.wait({call, asked}, return_when="FIRST_COMPLETED"))
            if not call.done():
                return None
        return await asyncio.shield(call)
    except asyncio.CancelledError:
        signal.set()
        with anyio.CancelScope(shield=True):
            await asyncio.wait({call})
        if not call.cancelled():
            call.exception()  # retrieved, so asyncio does not warn about it
        raise


async def credentials_or_none(hook: Callable[[Any], Any], context: Any) -> Any:
    """``hook(context)``, awaited when it returns an awaitable; ``None`` when it raises.

    A hook that fails leaves the call with no credentials, so a capability that needs a
    principal is refused (fail closed); the failure is logged.

    Example:
        >>> await credentials_or_none(lambda ctx: ctx.user, request)
        User(id='alice')
    """
    try:
        got = hook(context)
        return await got if inspect.isawaitable(got) else got
    except Exception:
        _log.warning("credentials_of raised; calling with no credentials", exc_info=True)
        return None
