"""One invocation's way through the pipeline: :class:`Call` and its steps.

:meth:`Call.run` takes the steps in the order DESIGN §4.3 gives them; which of them a
capability has was decided at bind (:class:`~foldkit_agent.runtime.plan.Plan`), so a step that
is absent costs one attribute read:

1. :meth:`~Call.resolve` - the capability exists, the runtime is not draining, the invocation
   is not already aborted and its id is not held by a call still in flight (none of which
   reads the Model);
2. :meth:`~Call.available` - read the one Model snapshot (``host.model()`` is called here and
   nowhere else in the invocation), then ``available(model)``;
3. decode - the plan's strict decoder (:mod:`..contract.schema`);
4. :meth:`~Call.authorize` - resolve the principal (only where it is needed) and run
   ``authorize``; a principal provider that fails refuses here, and only here; then, only
   for a call that carries ``Invocation.idempotency_key``, claim the key
   (:meth:`IdempotencyKeys.claim <foldkit_agent.runtime.idempotency.IdempotencyKeys.claim>`):
   a retry answers its first call's outcome here, or is refused, and runs nothing more;
5. :meth:`~Call.construct` the Message (``to_message`` sees the same snapshot);
6. :meth:`~Call.confirm` - ask ``invocation.approver`` about that very Message (DESIGN §11);
7. :meth:`~Call.send` it to the host;
8. :meth:`~Call.wait` for its completion contract (which registers before it sends).

"Delivery unknown" is tracked on :attr:`Call.host_called`, set the moment before
``host.dispatch`` is called: a failure before that is a refusal (nothing was sent), a failure
after it leaves the outcome unknown. Whatever happens, :meth:`Call.run` writes the call's one
audit entry and releases what it held (its place in flight, its invocation id, its
idempotency key, which keeps the outcome) on the way out.
"""

from __future__ import annotations

import asyncio
import inspect
import logging
from collections.abc import Awaitable, Mapping
from typing import TYPE_CHECKING, Any

from ..app.message import Message
from ..audit.entry import Decision
from ..audit.log import AuditLog
from ..contract.calls import AuthorizationRequest, Deny, Invocation, InvocationContext
from ..contract.completion import Completion, StateCompletion
from ..errors import (
    AgentAuthorizationError,
    AgentCancelledError,
    AgentCapabilityUnavailableError,
    AgentCompletionTimeoutError,
    AgentContractError,
    AgentError,
    AgentHostError,
    AgentInvalidInputError,
    AgentUnknownCapabilityError,
    InputIssue,
    InputRejected,
)
from .approve import approve
from .idempotency import Held
from .outcome import DEFECT
from .plan import Plan, holds
from .race import Abort, Deadline, race
from .results import CompletionOutcome, DispatchResult, dispatch_result
from .waiting import MessageHub, StateHub, Waiter

if TYPE_CHECKING:
    from .bound import AgentRuntime

__all__ = ["NOBODY", "Call", "reused_id"]

_log = logging.getLogger("foldkit_agent.runtime")

_NEVER_AWAITABLE: frozenset[type] = frozenset({bool, str, int, type(None), dict})
"""Types a hook's answer often has that are never awaitable (checked before ``isawaitable``)."""

NOBODY = "no caller was identified (the transport authenticated nobody)"
"""The refusal's reason when ``authorize`` refused without one and there is no principal."""

UNREAD = (
    "the call carried credentials, but the application's principal provider "
    "(bind(principal=...)) found no caller in them"
)
"""The reason when the invocation carried credentials and the provider returned ``None``: a
provider that reads another shape (``.subject`` of a plain ``"alice"``) is the usual cause."""


class _HookFailed(Exception):
    """A principal provider or ``authorize`` hook raised (the cause); see :meth:`Call._ask`."""


class Call:
    """One invocation of one capability, step by step.

    Attributes:
        rt: the runtime it runs in.
        plan: the capability's :class:`~foldkit_agent.runtime.plan.Plan` (``None`` for an
            unknown name).
        name: the capability name, or the name asked for when it resolved to nothing.
        payload: the wire input, as received.
        invocation: the :class:`Invocation` it runs under.
        signal: the event that aborts this call: the invocation's own signal, or one of its
            own when it came without one (every call in flight can be aborted).
        audit: the audit log its entry goes to, or ``None``.
        model: the Model snapshot, once step 2 has read it (unset before).
        principal: the caller, once resolved (``None`` before, or when nobody authenticated).
        host_called: ``True`` from the moment ``host.dispatch`` is called: from then on a
            failure leaves delivery unknown.
        approval: what the confirm step decided, for the audit entry: ``None`` (nobody was
            asked), ``"approved"``, ``"declined"``, ``"timeout"`` or ``"unavailable"``.
        approved_by: who approved (``Approval.by``), when approved.
        approval_text: what the person was asked, in one line (``ApprovalRequest.shown``).
        approval_asks: how many times they were asked (``None`` when never).
        asking: ``True`` while the confirm step waits for the approval (a drain answers such
            a call at once: nothing was sent).
        declined_by: who declined (``Approval.by``), when declined.
        decision: the audit decision, once the call ended (unset before): ``"dispatched"``,
            ``"refused"`` or ``"unknown"``.
        outcome: the audit outcome, once the call ended (unset before): ``"ok"``,
            ``"completed"``, ``"failed"``, or the error tag.
    """

    __slots__ = (
        "_signal",
        "approval",
        "approval_asks",
        "approval_text",
        "approved_by",
        "asking",
        "audit",
        "decision",
        "declined_by",
        "host_called",
        "invocation",
        "model",
        "name",
        "outcome",
        "payload",
        "plan",
        "principal",
        "rt",
    )

    def __init__(
        self,
        rt: AgentRuntime[Any, Any],
        plan: Plan | None,
        requested: str,
        payload: Any,
        invocation: Invocation,
        audit: AuditLog | None,
    ) -> None:
        self.rt = rt
        self.plan = plan
        self.name = requested if plan is None else plan.name
        self.payload = payload
        self.invocation = invocation
        self.audit = audit
        # Every call in flight can be aborted (disconnect, drain), with or without its own
        # signal; the invocation the caller passed is left as it is. Without one, the Event is
        # made when something first waits on it or aborts the call (most calls do neither).
        self._signal: asyncio.Event | None = invocation.signal
        self.principal: Any = None
        self.host_called = False
        self.approval: str | None = None
        self.approved_by: str | None = None
        self.approval_text: str | None = None
        self.approval_asks: int | None = None
        self.asking = False
        self.declined_by: str | None = None
        # model is set by the available step, before anything reads it; decision and outcome
        # when the call ends.

    @property
    def signal(self) -> asyncio.Event:
        """The event that aborts this call: the invocation's own signal, or one of its own."""
        signal = self._signal
        if signal is None:
            signal = self._signal = asyncio.Event()
        return signal

    def abort(self) -> None:
        """Set the call's signal: it answers that it was cancelled (``abort_in_flight``)."""
        self.signal.set()

    async def run(self) -> DispatchResult:
        """The steps in order, the one audit entry, and the release of what the call held.

        Raises the refusal of the first step that refuses (after its audit entry), and
        ``asyncio.CancelledError`` when the awaiting task was cancelled (after it too).
        """
        rt = self.rt
        calls = rt.calls_in_flight
        calls.add(self)  # abort_in_flight() aborts it
        decision: Decision = "refused"
        outcome = "ok"
        claimed = asked = cancelled = False
        held: Held | None = None
        result: DispatchResult | None = None
        try:
            plan = self.resolve()  # 1 (from here on the call holds its invocation id)
            claimed = True
            try:
                self.available(plan)  # 2
            except AgentCapabilityUnavailableError:
                # a retry whose first call made its capability go away answers that call
                key = self.invocation.idempotency_key
                got = None if key is None else await rt.idempotency.replay(self, plan, key)
                if got is None:
                    raise
                asked = True
                outcome = "replayed"
                return got
            decoded = plan.decode(plan.name, self.payload)  # 3
            if plan.authorizes:  # 4
                asked = plan.principal is not None
                await self.authorize(plan, decoded)
            elif self._signal is not None and self._signal.is_set():  # only its final check
                raise self.cancelled(False)
            key = self.invocation.idempotency_key
            if key is not None:  # a retry answers its first call's outcome (.idempotency)
                asked = True
                got = await rt.idempotency.claim(self, plan, decoded, key)
                if not isinstance(got, Held):
                    outcome = "replayed"  # audited as sending nothing, which it did not
                    return got
                held = got
            message: Message = decoded if plan.to_message is None else self.construct(plan, decoded)
            if plan.confirm is not None:  # 6
                message = await self.confirm(plan, decoded, message)
            if plan.completion is None:
                sent = self.send(plan, message)  # 7
                if sent is not None:
                    await self.awaited(sent, None, None, "host dispatch")
                decision = "dispatched"
                result = dispatch_result(plan.name, plan.tag, message, self.invocation, None)
                return result
            result = await self.wait(plan, plan.completion, message, decoded)  # 8
            decision = "dispatched"
            outcome = result.completion.status if result.completion else "ok"
            return result
        except AgentError as err:
            outcome = err.tag
            decision = "unknown" if self.host_called else "refused"
            if not asked and self.audit is not None and self.audit.records_principal:
                await self.principal_for_record()
            raise
        except asyncio.CancelledError:
            outcome = AgentCancelledError.tag
            decision = "unknown" if self.host_called else "refused"
            cancelled = True
            raise
        except Exception:
            outcome = DEFECT
            decision = "unknown" if self.host_called else "refused"
            raise
        finally:
            self.decision = decision
            self.outcome = outcome
            audit = self.audit
            inv = self.invocation
            try:
                if held is not None:
                    await held.end(self, result)
                if audit is not None:
                    ticket = audit.note(
                        inv.id,
                        inv.transport,
                        self.name,
                        None if self.plan is None else self.plan.tag,
                        self.principal,
                        decision,
                        outcome,
                        self.payload,
                        self.approval,
                        self.approved_by,
                        self.approval_text,
                        self.approval_asks,
                        inv.actor,
                        self.declined_by,
                    )
                    # Answered means audited: with a durable sink the answer waits for the
                    # commit (bounded by the log's commit_timeout). A cancelled caller gets
                    # no answer, so it does not wait.
                    if ticket is not None and not cancelled:
                        await audit.committed(ticket)
            finally:
                calls.discard(self)
                if claimed:
                    rt.ids_in_flight.discard(inv.id)
                if not calls and rt.idle:
                    rt.wake_idle()

    # -- 1. resolve -------------------------------------------------------------------------

    def resolve(self) -> Plan:
        """The plan, unless the call is refused before anything is read.

        Claims the invocation id for the call (released when it answers).

        Raises:
            AgentUnknownCapabilityError: the name resolved to no capability.
            AgentCancelledError: the runtime is draining, or the signal is already set.
            AgentContractError: the invocation id is held by a call still in flight.
        """
        plan = self.plan
        if plan is None:
            raise AgentUnknownCapabilityError(capability=self.name, known=self.rt.plans)
        rt = self.rt
        if rt.draining:  # stop accepting: a call that arrives during a drain never runs
            raise self.cancelled(False)
        signal = self._signal
        if signal is not None and signal.is_set():
            raise self.cancelled(False)
        ids = rt.ids_in_flight
        inv_id = self.invocation.id
        if inv_id in ids:
            raise reused_id(plan.name)
        ids.add(inv_id)
        return plan

    # -- 2. available -----------------------------------------------------------------------

    def available(self, plan: Plan) -> None:
        """Read the invocation's one Model snapshot, then ``available(model)``.

        A predicate that raises counts as false (and is logged).

        Raises:
            AgentCapabilityUnavailableError: the predicate does not hold.
        """
        model = self.model = self.rt.host.model()
        predicate = plan.available
        if predicate is not None and not holds(predicate, plan.name, model):
            raise AgentCapabilityUnavailableError(
                capability=plan.name, available_when=plan.cap.available_when
            )

    # -- 4. authorize -----------------------------------------------------------------------

    async def authorize(self, plan: Plan, decoded: Any) -> None:
        """Resolve the principal where something reads it, then run ``authorize``.

        The provider runs at most once per invocation (:attr:`Plan.principal` says whether).
        It fails closed only where it decides something: a capability with ``authorize`` is
        refused when the provider raises; elsewhere the principal is ``None`` (and the failure
        logged). Never before ``available`` and decoding, so an unavailable capability always
        reports unavailable and invalid input always reports invalid input.

        Raises:
            AgentAuthorizationError: the provider or the hook failed, or the hook refused.
            AgentCancelledError: the signal was set while either was awaited.
        """
        if plan.principal is not None:
            try:
                self.principal = await self._ask(plan.principal, self.invocation, "principal")
            except _HookFailed as failed:
                if plan.authorize is not None:  # it decides something here: fail closed
                    raise AgentAuthorizationError(capability=self.name) from failed.__cause__
        if plan.authorize is not None:
            await self._run_authorize(plan, plan.authorize, decoded)
        signal = self._signal
        if signal is not None and signal.is_set():
            raise self.cancelled(False)

    async def principal_for_record(self) -> None:
        """After a refusal before step 4: resolve the principal for the audit entry only.

        Runs only when the invocation is not aborted, also for a name that resolved to no
        capability (the provider reads only the invocation, so a caller probing for names is
        recorded as itself); a provider failure records no principal and changes nothing else.
        """
        provider = self.rt.principal_provider
        if provider is None:
            return
        if self._signal is not None and self._signal.is_set():
            return
        try:
            self.principal = await self._ask(provider, self.invocation, "principal")
        except (_HookFailed, AgentCancelledError):
            self.principal = None

    async def _ask(self, hook: Any, arg: Any, what: str) -> Any:
        """``hook(arg)``, awaited when it returns an awaitable, racing the call's signal.

        ``what`` names the hook for the log (``"principal"`` or ``"authorize"``).

        Raises:
            AgentCancelledError: the signal was set while it was awaited (``dispatched=False``).
            _HookFailed: the hook raised (logged; its error is the cause). Raised apart from
                the cancellation, so a caller that turns a hook's failure into a refusal never
                takes a cancelled call for one.
        """
        try:
            got = hook(arg)
            if type(got) not in _NEVER_AWAITABLE and inspect.isawaitable(got):
                got = await race(got, self.signal, None)
        except Abort:
            raise self.cancelled(False) from None
        except Exception as exc:
            _log.warning("the %s hook of %r raised", what, self.name, exc_info=True)
            raise _HookFailed from exc
        return got

    async def _run_authorize(self, plan: Plan, hook: Any, decoded: Any) -> None:
        inv = self.invocation
        request = AuthorizationRequest(
            self.principal, decoded, self.model, inv.transport, inv, plan.name
        )
        try:
            verdict = await self._ask(hook, request, "authorize")
        except _HookFailed as failed:
            raise AgentAuthorizationError(capability=plan.name) from failed.__cause__
        if verdict is True:
            return
        if isinstance(verdict, Deny):
            raise AgentAuthorizationError(capability=plan.name, reason=verdict.reason)
        nobody = None
        if self.principal is None:
            nobody = NOBODY if inv.credentials is None else UNREAD
        if isinstance(verdict, Mapping):
            verdict_map: Mapping[str, Any] = verdict  # pyright: ignore[reportUnknownVariableType]
            if verdict_map.get("allowed") is True:
                return
            reason = verdict_map.get("reason")
            raise AgentAuthorizationError(
                capability=plan.name, reason=reason if isinstance(reason, str) else nobody
            )
        raise AgentAuthorizationError(capability=plan.name, reason=nobody)

    # -- 5. construct -----------------------------------------------------------------------

    def construct(self, plan: Plan, decoded: Any) -> Message:
        """The Message ``to_message`` builds from the decoded input and the snapshot.

        Raises:
            AgentInvalidInputError: ``to_message`` raised :class:`InputRejected`.
            AgentHostError: ``to_message`` raised anything else (``dispatched=False``).
            AgentContractError: it built a Message of another tag.
        """
        cap = plan.cap
        assert plan.to_message is not None
        try:
            built = plan.to_message(
                decoded, InvocationContext(self.model, self.principal, self.invocation)
            )
            if isinstance(built, Mapping):
                built = cap.message.model_validate(built)
        except InputRejected as rejected:
            issue: InputIssue = {"path": rejected.path, "problem": rejected.problem}
            raise AgentInvalidInputError(
                capability=plan.name, issues=[issue], accepted=cap.accepted
            ) from rejected
        except Exception as exc:
            _log.warning("to_message of %r raised", plan.name, exc_info=True)
            raise AgentHostError(capability=plan.name, dispatched=False) from exc
        if type(built) is not cap.message:
            raise AgentContractError(
                f"{plan.name!r} must make a {plan.tag!r} Message, but its to_message made "
                "another; nothing was sent",
                capability=plan.name,
            )
        return built

    # -- 6. confirm -------------------------------------------------------------------------

    async def confirm(self, plan: Plan, decoded: Any, message: Message) -> Message:
        """The Message to send once a person approved it (``message``, or the one rebuilt
        from their edited input or on a changed Model); otherwise refuse, sending nothing.

        See :func:`~foldkit_agent.runtime.approve.approve` for who is asked and how an answer
        counts.

        Raises:
            AgentApprovalError: ``"declined"``, ``"timeout"``, ``"unavailable"`` or
                ``"stale"``.
            AgentCancelledError: the signal was set while waiting (``dispatched=False``).
        """
        self.asking = True  # a drain answers it at once: nothing is sent, nobody to rely on
        if self.rt.draining:
            self.abort()
        try:
            return await approve(self, plan, decoded, message)
        finally:
            self.asking = False

    # -- 7. send ----------------------------------------------------------------------------

    def send(self, plan: Plan, message: Message) -> Awaitable[Any] | None:
        """Call ``host.dispatch(message)``; what it returned when that is awaitable, else
        ``None`` (await it with :meth:`awaited`).

        Raises:
            AgentHostError: the host raised (``dispatched=None``: delivery unknown).
        """
        self.host_called = True
        try:
            sent = self.rt.host.dispatch(message)
        except Exception as exc:
            _log.warning("host dispatch of %r raised", plan.name, exc_info=True)
            raise AgentHostError(capability=plan.name, dispatched=None) from exc
        if sent is None or not inspect.isawaitable(sent):
            return None
        return sent

    async def awaited(
        self, aw: Awaitable[Any], deadline: float | None, dispatched: bool | None, what: str
    ) -> Any:
        """Await ``aw`` (what ``host.dispatch`` returned, or the completion's waiter), racing
        the signal and ``deadline``; what it gave, or the call's refusal for each other end.

        ``dispatched`` is what the refusal says of delivery (``None`` while the host's own
        awaitable runs, ``True`` once it accepted the Message); ``what`` names ``aw`` for the
        log.

        Raises:
            AgentCancelledError: the signal was set.
            AgentCompletionTimeoutError: ``deadline`` passed.
            AgentHostError: ``aw`` raised (logged).
        """
        try:
            # The invocation's own signal, if it came with one, without entering the property.
            return await race(aw, self._signal or self.signal, deadline)
        except Abort:
            raise self.cancelled(dispatched) from None
        except Deadline:
            assert self.plan is not None
            assert self.plan.completion is not None
            raise AgentCompletionTimeoutError(
                capability=self.name, timeout=self.plan.completion.seconds, dispatched=dispatched
            ) from None
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            _log.warning("%s of %r raised", what, self.name, exc_info=True)
            raise AgentHostError(capability=self.name, dispatched=dispatched) from exc

    # -- 8. wait ----------------------------------------------------------------------------

    async def wait(
        self,
        plan: Plan,
        completion: Completion | StateCompletion,
        message: Message,
        decoded: Any,
    ) -> DispatchResult:
        """Send ``message`` and wait for its completion contract.

        The waiter is registered before sending, so a result produced while sending is not
        missed; a state condition is checked once more when waiting starts (one already true
        completes at once). The timeout runs from the host dispatch call.

        Raises:
            AgentCompletionTimeoutError: no result within the contract's timeout.
            AgentCancelledError: the signal was set while waiting (``dispatched=True``).
            AgentHostError: a completion check raised (``dispatched=True``).
        """
        rt = self.rt
        inv = self.invocation
        hub: MessageHub | StateHub
        reads_model = False  # a state condition on a projection of the Model, not a source
        if isinstance(completion, StateCompletion):
            waiter = Waiter(completion, decoded, inv)
            reads_model = completion.source is None
            hub = rt.state_hub(host=reads_model)
        else:
            waiter = Waiter(completion, message, inv)
            hub = rt.message_hub()
        hub.add(waiter)
        try:
            deadline = asyncio.get_running_loop().time() + completion.seconds
            sent = self.send(plan, message)
            if sent is not None:
                await self.awaited(sent, deadline, None, "host dispatch")
            if isinstance(hub, StateHub) and not waiter.future.done():
                hub.check(waiter, rt.host.model() if reads_model else None)
            status, result = await self.awaited(waiter.future, deadline, True, "completion check")
            return dispatch_result(
                plan.name, plan.tag, message, inv, CompletionOutcome(status, result)
            )
        finally:
            if isinstance(hub, MessageHub) and not waiter.future.done():
                hub.abandon(waiter)  # its late result must reach no other call
            else:
                hub.remove(waiter)

    # -- helpers ------------------------------------------------------------------------------

    def cancelled(self, dispatched: bool | None) -> AgentCancelledError:
        """The cancellation of this call; it says so when the server is shutting down."""
        return AgentCancelledError(
            capability=self.name, dispatched=dispatched, shutdown=self.rt.draining
        )


def reused_id(name: str) -> AgentContractError:
    """The refusal of a call whose invocation id is held by a call still in flight."""
    return AgentContractError(
        f"The call to {name!r} reuses the invocation id of a call still in flight; "
        "give every call its own id (leave Invocation.id unset for a fresh one). "
        "Nothing was sent.",
        capability=name,
    )
