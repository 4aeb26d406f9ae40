"""One call in flight, for every transport: started, waited for, asked about, always answered.

The adapters (MCP both eras, A2A, the page surface, Agent Native, the in-process toolsets) only
translate: a request into a :class:`CallRequest`, and what :meth:`CallsInFlight.run` returns
into their protocol's answer. Everything between lives here, written once:

* the cancel **signal** and the :class:`~foldkit_agent.contract.calls.Invocation`;
* the **approver**: one the transport gives (asking on the request itself: a handshake-era MCP
  elicitation, an in-process approver), or :data:`PARK` (the transport answers "a person must
  approve" and resumes on a later request: 2026-era MCP ``InputRequiredResult``, A2A
  ``INPUT_REQUIRED``, the page, an in-process deferred call), or nobody (fail closed);
* starting the call on the runtime (:meth:`AgentRuntime.call
  <foldkit_agent.runtime.AgentRuntime.call>`, which answers in the one
  :class:`~foldkit_agent.runtime.Outcome` shape and never raises for a refusal);
* the **disconnect abort** (a client gone before its answer aborts the call) and the note that
  lets a drain wait until the answer is written (:mod:`.disconnect`);
* **progress**: a beat every ``interval`` seconds while the call waits (:mod:`.progress`);
* **settle**: waiting until the call answers, the one meaning of the word here. Cancelling the
  waiter (``notifications/cancelled``, ``tasks/cancel``, shutdown) aborts the call through its
  signal; the runtime answers and audits it once, then the cancellation propagates;
* the **caps**, per caller and in all, on calls in flight and on calls waiting for a person,
  counted the same on every transport and era (below).

The caps. One :class:`CallsInFlight` per server (``serve`` shares one among all its adapters),
so they are one set of numbers (:class:`~foldkit_agent.edge.callers.CallerLimits`:
``calls_per_caller``/``calls`` and ``waiting_per_caller``/``waiting``), keyed by the caller the
edge authenticated (:func:`~foldkit_agent.edge.callers.caller_key`; every anonymous caller
together is one caller). A call holds one place at a time: among the calls in flight from its
start, among the calls waiting for a person from the moment it asks one until it ends. A caller
at its share cannot take what others need:

* past the calls in flight, the call is not started: its answer is a refusal naming the cap
  (outcome ``"refused"``, ``code`` ``"caller-limit"`` or ``"server-limit"``), audited as
  ``AgentCapabilityUnavailableError``;
* past the calls waiting for a person, nobody is asked: the runtime refuses the call as
  ``AgentApprovalError`` ``"unavailable"`` naming the cap, nothing sent, and the request that
  carried it is answered at once (so it holds no connection).

Example (an adapter's whole call path)::

    calls = CallsInFlight(CallerLimits())            # one per server
    got = await calls.run(rt, "delete_todo", {}, CallRequest(
        transport="mcp", caller=caller_key(scope), credentials=token, ask=PARK, scope=scope))
    if isinstance(got, ParkedApproval):              # a person must approve first
        answer_later(got.key, got.request)
    else:
        answer_now(got)                              # an Outcome
    ...
    outcome = await calls.resume(key, owner, "delete_todo", Approval(approved=True, by="ann"))

A transport that can put a second question on a later request (``CallRequest(reask=True)``:
2026-era MCP's next ``InputRequiredResult``, A2A's task back in ``INPUT_REQUIRED``) answers
with :meth:`CallsInFlight.follow`, whose answer is the call's outcome or its next question,
parked anew; so does a caller whose parked call a person answered first elsewhere (the
console): the first answer counts, and the caller is told where it led.
"""

from __future__ import annotations

import asyncio
import inspect
import logging
import secrets
from collections import OrderedDict
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Final, Literal, TypeVar

import anyio

from ..contract.approval import Approval, ApprovalRequest, ApprovalsFull, Approver
from ..contract.calls import Invocation, draft_class, new_invocation_id
from ..runtime.approve import ONE_QUESTION
from ..runtime.bound import AgentRuntime
from ..runtime.outcome import REFUSED, Outcome
from .approvals import Asking, ParkedApproval, ParkedApprovals
from .callers import ANONYMOUS, DEFAULT_CALLER_LIMITS, CallerLimits, CapReached, Slot, Slots
from .disconnect import WATCH, Watch
from .progress import DEFAULT_PROGRESS_INTERVAL, Beat, beat_until_done
from .rates import RateLimits
from .resolve import audit_refused_call
from .wire import WireError

__all__ = [
    "IN_PROCESS_LIMITS",
    "PARK",
    "CallRequest",
    "CallsInFlight",
    "credentials_or_none",
    "settle",
]

_log = logging.getLogger("foldkit_agent.edge")

IN_PROCESS_LIMITS: Final = CallerLimits(
    calls_per_caller=DEFAULT_CALLER_LIMITS.calls,
    waiting_per_caller=DEFAULT_CALLER_LIMITS.waiting,
)
"""The caps of an in-process toolset's own :class:`CallsInFlight`: the application is its one
caller, so that caller's share is the whole."""

PARK: Final = "park"
"""``CallRequest.ask``: a person is asked across requests; the call waits parked meanwhile."""

MAX_ANSWERED: Final = 1024
"""Parked calls answered whose caller has not come back for the answer yet (answered at the
console, say), kept so its next request is told where the answer led; the oldest go first."""

_T = TypeVar("_T")


@dataclass(frozen=True, slots=True)
class CallRequest:
    """What a transport knows of one call, besides the capability and its input.

    Attributes:
        transport: ``Invocation.transport`` (``"mcp"``, ``"a2a"``, ``"webmcp"``, ...).
        caller: whose caps the call counts against
            (:func:`~foldkit_agent.edge.callers.caller_key`; default the anonymous bucket).
        credentials: ``Invocation.credentials`` (read only by the principal provider).
        ask: how a person can be asked: an :data:`Approver` asked on this request, :data:`PARK`,
            or ``None`` (nobody: a ``confirm`` capability is refused as ``"unavailable"``).
        owner: who may answer a parked call (its authenticated identity, a page session).
        key: what a parked call waits under (an A2A task id, a tool call id); default a fresh
            unguessable token.
        id: ``Invocation.id``; default a new one.
        signal: the call's cancel signal, when the transport aborts calls itself (A2A's
            ``CancelTask``); default a new one. Setting it aborts the call.
        scope: the request's ASGI scope (or A2A call state) holding the guard's watch of it
            (:data:`~.disconnect.WATCH`): the client going away before the answer aborts the
            call, and a drain waits for the answer to be written
            (:meth:`~.disconnect.Watch.carries_call`).
        beat: a sign of life every ``interval`` seconds while the call waits.
        interval: seconds between beats.
        idempotency_key: ``Invocation.idempotency_key``, as the transport read it off its
            wire (``None``: the call has none).
        reask: with ``ask=PARK``, the transport can put a second question on a later request,
            so the call may be asked again (the Model changed, the person edited the input);
            otherwise such a call is refused as ``"stale"`` at the first change. A second
            question waits under ``key`` again when one was given, else under a new token.
        actor: ``Invocation.actor``: who pressed the call, as the transport was told.
    """

    transport: str
    caller: str = ANONYMOUS
    credentials: Any = None
    ask: Approver | Literal["park"] | None = None
    owner: str | None = None
    key: str | None = None
    id: str | None = None
    signal: asyncio.Event | None = None
    scope: Mapping[str, Any] | None = None
    beat: Beat | None = None
    interval: float = DEFAULT_PROGRESS_INTERVAL
    idempotency_key: str | None = None
    reask: bool = False
    actor: str | None = None


class CallsInFlight:
    """Every call in flight of one server, within the per-caller caps (module docs).

    Args:
        limits: ``calls_per_caller``/``calls`` and ``waiting_per_caller``/``waiting`` are
            read; a per-caller share above the total is the total.
        rates: where the capabilities' declared ``rate=`` are counted, per caller
            (:class:`~.rates.RateLimits`; ``serve`` passes its one; default: in this
            process's memory).

    Attributes:
        running: the calls in flight, per caller (a :class:`~.callers.Slots`).
        waiting: the calls waiting for a person, per caller.
        parked: the calls waiting across requests, by key (only their owner answers them).
        started: how many calls :meth:`run` was given (refused ones too), for ``serve``'s
            closing line.
    """

    def __init__(
        self, limits: CallerLimits = DEFAULT_CALLER_LIMITS, *, rates: RateLimits | None = None
    ) -> None:
        self.running = Slots(
            "calls in flight",
            per_caller=min(limits.calls_per_caller, limits.calls),
            total=limits.calls,
            advice="Wait for one of them to answer (or cancel one) before starting another.",
        )
        self.waiting = Slots(
            "calls waiting for a person's approval",
            per_caller=min(limits.waiting_per_caller, limits.waiting),
            total=limits.waiting,
            advice="Answer or cancel one of them first.",
        )
        # bounded by `waiting` above: its own caps are only a backstop
        self.parked = ParkedApprovals(per_caller=limits.waiting, total=limits.waiting)
        self._answered: OrderedDict[str, ParkedApproval] = OrderedDict()
        self._signals: dict[asyncio.Future[Outcome], tuple[str, asyncio.Event]] = {}
        self.started = 0
        self.rates = RateLimits() if rates is None else rates

    def __len__(self) -> int:
        """Calls started and not yet answered (parked ones included)."""
        return len(self._signals)

    async def run(
        self, rt: AgentRuntime[Any, Any], name: str, payload: Any, request: CallRequest
    ) -> Outcome | ParkedApproval:
        """Run one call of ``name`` until it answers, or until it is parked for a person.

        Returns:
            The call's :class:`~foldkit_agent.runtime.Outcome`; or, with ``ask=PARK``, the
            :class:`~.approvals.ParkedApproval` now waiting under its key once the call asked
            a person (answer it with :meth:`resume`).

        Raises:
            asyncio.CancelledError: the waiter was cancelled; the call was aborted through its
                signal and has answered (and been audited) before this propagates.
        """
        self.started += 1
        plan = rt.plans.get(name)
        if plan is not None and plan.cap.rate is not None:
            limited = self.rates.capability_refusal(plan.cap.rate, name, request.caller)
            if limited is not None:
                return await self._refused(rt, name, request, limited)
        try:
            # the one place the call holds: in flight, then (once it asks a person) waiting
            place = [self.running.take(request.caller)]
        except CapReached as full:
            return await self._refused(rt, name, request, full.err)
        scope = request.scope
        watching = None if scope is None else scope.get(WATCH)
        if not isinstance(watching, Watch):
            watching = None  # the request did not pass the guard with a body: nothing to watch
        if plan is None or not plan.may_wait:
            # Nothing to wait for, so nothing to beat, ask or abort: awaited here, without a
            # task of its own or a signal the client's going away would set.
            if watching is not None:
                watching.carries_call()  # a drain waits until this answer is written
            invocation = _invocation(request, request.signal, None)
            try:
                return await rt.call(name, payload, invocation)
            finally:
                place[0].release()
        signal = request.signal or asyncio.Event()
        ask = request.ask
        asking: Asking | None = None
        if ask == PARK:
            ask = asking = Asking()
        approver = None if ask is None else self._counted(ask, request.caller, place)
        if asking is not None and not request.reask:
            # this parked call's answer ends its exchange: no second question can follow
            setattr(approver, ONE_QUESTION, True)
        invocation = _invocation(request, signal, approver)
        call = asyncio.ensure_future(rt.call(name, payload, invocation))
        self._signals[call] = (request.transport, signal)
        if watching is not None:
            # a drain waits for the answer; the client going away before it aborts the call
            watching.carries_call(signal)

        def ended(_call: asyncio.Future[Outcome]) -> None:
            del self._signals[call]
            place[0].release()

        call.add_done_callback(ended)
        asked = None if asking is None else asking.asked
        outcome = await settle(call, signal, asked, request.beat, request.interval)
        if outcome is not None:
            return outcome
        assert asking is not None  # settle() returns None only once the call asked
        assert asked is not None
        return await self._park(call, name, request, asking, asked)

    async def _park(
        self,
        call: asyncio.Future[Outcome],
        name: str,
        request: CallRequest,
        asking: Asking,
        asked: asyncio.Future[Any],
    ) -> Outcome | ParkedApproval:
        """Park ``call``'s question (``asked``'s) under its key; its :attr:`next` step is
        followed from now on, whoever answers."""
        question, answer = asked.result()
        key = request.key or secrets.token_urlsafe(32)
        parked = self.parked.park(
            key, name, request.owner, call, question, answer, request.transport, request.caller
        )
        if parked is None:
            answer.set_exception(RuntimeError("the call could not be parked: its key is taken"))
            return await self.settle(call, request.beat, request.interval)
        parked.next = after = asyncio.ensure_future(self._then(parked, request, asking))
        after.add_done_callback(_retrieved)
        return parked

    async def _then(
        self, parked: ParkedApproval, request: CallRequest, asking: Asking
    ) -> Outcome | ParkedApproval:
        """What a parked call does once answered: its outcome, or its next question, parked
        (only a ``reask`` call asks one); its transport is told first (``parked.told``)."""
        call = parked.task
        entry = self._signals.get(call)
        signal = entry[1] if entry is not None else asyncio.Event()
        asked = asking.asked
        got = await settle(call, signal, asked)
        if got is None:
            got = await self._park(call, parked.capability, request, asking, asked)
        for tell in parked.told:
            try:
                await tell(got)
            except Exception:
                _log.warning("a transport could not record a parked call's step", exc_info=True)
        return got

    def _counted(self, ask: Approver, caller: str, place: list[Slot]) -> Approver:
        """``ask``, once the call has moved its ``place`` among the calls waiting for a
        person (asked again after an edit, it keeps that place)."""

        async def approve(question: ApprovalRequest) -> Approval:
            if place[0].slots is self.running:
                try:
                    waiting = self.waiting.take(caller)
                except CapReached as full:
                    yours = full.err.status == 429
                    cap = self.waiting.per_caller if yours else self.waiting.total
                    raise ApprovalsFull(cap, yours=yours) from None
                place[0].release()
                place[0] = waiting
            return await ask(question)

        return approve

    def answer(
        self, key: str, owner: str | None, capability: str | None, approval: Approval
    ) -> ParkedApproval | None:
        """Hand ``approval`` to the call parked under ``key``, when it is ``owner``'s (and a
        call of ``capability``, if given); ``None`` when none such waits (answered, timed out,
        cancelled, or another caller's: it then stays for its own caller)."""
        parked = self.parked.take(key, owner, capability)
        if parked is not None:
            parked.decide(approval)
            self._answered[key] = parked
            self._answered.move_to_end(key)
            while len(self._answered) > MAX_ANSWERED:
                self._answered.popitem(last=False)
        return parked

    async def resume(
        self, key: str, owner: str | None, capability: str | None, approval: Approval
    ) -> Outcome | None:
        """:meth:`answer`, then :meth:`settle` the call: its outcome, or ``None`` when no call
        of ``owner`` waits under ``key``."""
        parked = self.answer(key, owner, capability, approval)
        if parked is not None:
            self._answered.pop(key, None)
        return None if parked is None else await self.settle(parked.task)

    async def follow(
        self, key: str, owner: str | None, capability: str | None, approval: Approval
    ) -> Outcome | ParkedApproval | None:
        """:meth:`answer`, then the call's next step (:meth:`next_of`): its outcome, or its
        next question parked anew (a ``reask`` call).

        When someone else answered the call first (a person at the console), ``approval`` is
        not used: the first answer counts, and this tells ``owner`` where it led. ``None``
        when no call of ``owner`` (and ``capability``, if given) waits or was answered under
        ``key``.
        """
        parked = self.answer(key, owner, capability, approval) or self._answered.get(key)
        if parked is None or not parked.answerable_by(owner, capability):
            return None
        del self._answered[key]
        return await self.next_of(parked)

    async def next_of(self, parked: ParkedApproval) -> Outcome | ParkedApproval:
        """Wait for the next step of ``parked`` once answered (see :meth:`follow`).

        Raises:
            asyncio.CancelledError: the waiter was cancelled; the call was aborted through
                its signal and has answered before this propagates.
        """
        after = parked.next
        if after is None:  # not parked by run(): nothing to follow but the call itself
            return await self.settle(parked.task)
        entry = self._signals.get(parked.task)
        signal = entry[1] if entry is not None else asyncio.Event()
        got = await settle(after, signal)
        assert got is not None  # settle() without `asked` always has an answer
        return got

    async def settle(
        self,
        call: asyncio.Future[Any],
        beat: Beat | None = None,
        interval: float = DEFAULT_PROGRESS_INTERVAL,
    ) -> Outcome:
        """Wait until ``call`` (started by :meth:`run`) answers; see :func:`settle`."""
        entry = self._signals.get(call)
        signal = entry[1] if entry is not None else asyncio.Event()
        outcome = await settle(call, signal, None, beat, interval)
        assert outcome is not None  # settle() without `asked` always has an outcome
        return outcome

    async def abort(self, grace: float, transport: str | None = None) -> None:
        """Abort every call in flight (of ``transport``, if given) and wait up to ``grace``
        seconds for each to answer (cancelled, saying whether the Message was sent)."""
        pending = {c for c, (t, _s) in self._signals.items() if transport in (None, t)}
        for call in pending:
            self._signals[call][1].set()
        if pending:
            await asyncio.wait(pending, timeout=grace)
        await anyio.lowlevel.checkpoint()  # let the waiters hand their answers over

    async def _refused(
        self, rt: AgentRuntime[Any, Any], name: str, request: CallRequest, err: WireError
    ) -> Outcome:
        """The answer to a call past a cap on calls in flight or a declared rate: not
        started, audited."""
        await audit_refused_call(rt, _invocation(request, None, None), name, err)
        text = f"{name[:200]} was not started: {err.text} Nothing was sent."
        data: dict[str, Any] = {
            "status": "refused",
            "capability": name[:200],
            "code": err.code,
            "message": text,
        }
        if err.headers is not None and "Retry-After" in err.headers:
            data["retry_after"] = int(err.headers["Retry-After"])  # seconds
        return Outcome(False, "refused", name[:200], REFUSED + text, data)


_InvocationDraft = draft_class(Invocation)


def _invocation(
    request: CallRequest, signal: asyncio.Event | None, approver: Approver | None
) -> Invocation:
    """``Invocation(id=..., transport=..., signal=, credentials=..., approver=)`` for
    ``request``, built from a draft: this is on every call's path (:func:`draft_class`)."""
    inv = _InvocationDraft()
    inv.id = request.id or new_invocation_id()
    inv.transport = request.transport
    inv.signal = signal
    inv.credentials = request.credentials
    inv.approver = approver
    inv.idempotency_key = request.idempotency_key
    inv.actor = request.actor
    inv.__class__ = Invocation
    return inv


def _retrieved(after: asyncio.Future[Any]) -> None:
    """A parked call's next step nobody came for: its failure is retrieved, not warned of."""
    if not after.cancelled():
        after.exception()


async def settle(
    call: asyncio.Future[_T],
    signal: asyncio.Event,
    asked: asyncio.Future[Any] | None = None,
    beat: Beat | None = None,
    interval: float = DEFAULT_PROGRESS_INTERVAL,
) -> _T | None:
    """Wait for ``call`` to answer; with ``asked``, return ``None`` once it asked for approval.

    What :meth:`CallsInFlight.run` and :meth:`CallsInFlight.settle` wait with.

    Args:
        call: the call's task; never cancelled here, only aborted through ``signal``.
        signal: the invocation's cancel signal.
        asked: set when the call's approver is asked (:attr:`~.approvals.Asking.asked`): the
            call then keeps running, parked, and ``None`` is returned.
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
