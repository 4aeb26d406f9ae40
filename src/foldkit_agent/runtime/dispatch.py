"""One invocation's way through the five dispatch steps.

:class:`Dispatch` carries what one invocation has learned so far (the Model snapshot, the
decoded input, the principal, the Message) and whether the host has been called. The steps,
in the order :meth:`Dispatch.run` takes them (DESIGN §4.3):

1. resolve (:meth:`~Dispatch.resolve` for its refusals) - the capability exists, the runtime
   is not draining, the invocation is not already aborted and its id is not held by a call
   still in flight (none of which reads the Model);
2. available - read the one Model snapshot, then ``available(model)``;
3. decode - strict decoding of the wire input (``cap.decoder``, :mod:`..contract.schema`);
4. :meth:`~Dispatch.authorize` - resolve the principal (only where it is needed) and run
   ``authorize``; a principal provider that fails refuses here, and only here;
5. :meth:`~Dispatch.construct` the Message (``to_message`` sees the same snapshot), then send
   it to the host and wait for its completion contract, if any.

Steps 1-3 and the sending are written out in :meth:`Dispatch.run`, and each hook step runs only
where the capability has the hook: a call with none of them makes no call it does not need
(issue 20: the in-process dispatch path).

A capability declared with ``confirm`` takes one more step between the two:
:meth:`~Dispatch.confirm` asks ``invocation.approver`` about the constructed Message (with a
preview of what it changes) and returns only when a person approved it, so the Message
approved is the Message sent (DESIGN §11).

"Delivery unknown" is tracked on :attr:`Dispatch.host_called`, set the moment before
``host.dispatch`` is called: a failure before that is a refusal (nothing was sent), a failure
after it leaves the outcome unknown.
"""

from __future__ import annotations

import asyncio
import inspect
import logging
from collections.abc import Awaitable, Callable, Mapping
from typing import TYPE_CHECKING, Any, cast

from ..app.message import Message
from ..contract.approval import Approval, ApprovalRequest, ApprovalsFull
from ..contract.calls import AuthorizationRequest, Deny, Invocation, InvocationContext
from ..contract.completion import Completion, StateCompletion
from ..contract.declare import Capability
from ..errors import (
    AgentApprovalError,
    AgentAuthorizationError,
    AgentCancelledError,
    AgentCapabilityUnavailableError,
    AgentCompletionTimeoutError,
    AgentContractError,
    AgentHostError,
    AgentInvalidInputError,
    AgentUnknownCapabilityError,
    InputIssue,
    InputRejected,
)
from .preview import preview_of
from .results import CompletionOutcome, DispatchResult, dispatch_result
from .waiting import MessageHub, StateHub, Waiter

if TYPE_CHECKING:
    from .bound import AgentRuntime

__all__ = ["Dispatch", "holds", "race", "reused_id"]

_log = logging.getLogger("foldkit_agent.runtime")

_UNSET: Any = object()

_WITHDRAW_GRACE = 1.0
"""Seconds a withdrawn approval question gets to finish its cleanup before the call answers."""


_NEVER_AWAITABLE: frozenset[type] = frozenset({bool, str, int, type(None), dict})
"""Types a hook's answer often has that are never awaitable (checked before ``isawaitable``)."""


class Abort(Exception):
    """The invocation's signal was set while something was awaited."""


class Deadline(Exception):
    """The completion deadline passed while something was awaited."""


NOBODY = "no caller was identified (the transport authenticated nobody)"
"""The refusal's reason when ``authorize`` refused without one and there is no principal."""


class Dispatch:
    """One invocation of one capability, step by step.

    Attributes:
        cap: the resolved capability (``None`` for an unknown name).
        name: the capability name, or the name asked for when it resolved to nothing.
        payload: the wire input, as received.
        invocation: the :class:`Invocation` it runs under.
        model: the Model snapshot, once step 2 has read it.
        principal: the caller, once resolved (``None`` before, or when nobody authenticated).
        host_called: ``True`` from the moment ``host.dispatch`` is called: from then on a
            failure leaves delivery unknown.
        claimed: the invocation id was free and is held by this call until it answers.
        approval: what the confirm step decided, for the audit entry: ``None`` (nobody was
            asked), ``"approved"``, ``"declined"``, ``"timeout"`` or ``"unavailable"``.
        approved_by: who approved (``Approval.by``), when approved.
    """

    __slots__ = (
        "_principal",
        "_rt",
        "_signal",
        "approval",
        "approved_by",
        "cap",
        "claimed",
        "host_called",
        "invocation",
        "model",
        "name",
        "payload",
    )

    def __init__(
        self,
        rt: AgentRuntime[Any, Any],
        cap: Capability | None,
        requested: str,
        payload: Any,
        invocation: Invocation,
    ) -> None:
        self._rt = rt
        self.cap = cap
        self.name = cap.name if cap is not None else requested
        self.payload = payload
        self.invocation = invocation
        # Every call in flight can be aborted (disconnect, drain), with or without its own
        # signal; the invocation the caller passed is left as it is. Without one, the Event is
        # made when something first waits on it or aborts the call (most calls never wait).
        self._signal: asyncio.Event | None = invocation.signal
        self.model: Any = None
        self._principal: Any = _UNSET
        self.host_called = False
        self.claimed = False
        self.approval: str | None = None
        self.approved_by: str | None = None

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

    @property
    def principal(self) -> Any:
        """The caller as the principal provider derived it; ``None`` until it has run."""
        return None if self._principal is _UNSET else self._principal

    async def run(self) -> DispatchResult:
        """The five steps in order (with ``confirm`` between constructing and sending).

        Raises the refusal of the first step that refuses.
        """
        # The steps' methods are called only where they have work to do, and the first three
        # are written out here: on the path of a call with no hooks, each saved call counts.
        cap = self.cap
        if cap is None or self._rt.draining or self._signal is not None:
            cap = self.resolve()  # 1. resolve, with the refusals it can make
        else:  # 1. resolve: nothing to refuse but a reused id
            self.claimed = self._rt.claim_invocation_id(self.invocation.id)
            if not self.claimed:
                raise self._reused_id()
        # 2. available: the invocation's one Model snapshot (host.model() is called here and
        # nowhere else in the invocation), then the predicate
        model = self.model = self._rt.host.model()
        if cap.available is not None and not holds(cap, model):
            raise AgentCapabilityUnavailableError(capability=cap.name)
        # 3. decode
        decoded: Any = cap.decoder.decode(cap.name, self.payload)
        # 4. authorize
        if cap.authorize is not None or (
            self._rt.principal_provider is not None and self._needs_principal(cap)
        ):
            await self.authorize(cap, decoded)
        elif self._signal is not None and self._signal.is_set():  # only its final check
            raise self.cancelled(False)
        message: Message = decoded if cap.to_message is None else self.construct(cap, decoded)
        if cap.confirm is not None:
            await self.confirm(cap, decoded, message)
        if cap.completion is None:  # self.send, without a frame of its own
            sent = self._start_host(cap, message)
            if sent is not None:
                await self.await_host(cap, sent, None)
            return dispatch_result(cap.name, cap.tag, message, self.invocation, None)
        return await self._send_and_wait(cap, cap.completion, message, decoded)

    # -- 1. resolve -------------------------------------------------------------------------

    def resolve(self) -> Capability:
        """The capability, unless the name resolved to nothing or the call is already aborted.

        Raises:
            AgentUnknownCapabilityError, AgentCancelledError: the Model is never read.
        """
        if self.cap is None:
            raise AgentUnknownCapabilityError(capability=self.name)
        if self._rt.draining:  # stop accepting: a call that arrives during a drain never runs
            raise self.cancelled(False)
        self._refuse_if_aborted()
        self.claimed = self._rt.claim_invocation_id(self.invocation.id)
        if not self.claimed:
            raise self._reused_id()
        return self.cap

    def _reused_id(self) -> AgentContractError:
        return reused_id(self.name)

    # -- 4. authorize -----------------------------------------------------------------------

    async def authorize(self, cap: Capability, decoded: Any) -> None:
        """Resolve the principal where something reads it, then run ``authorize``.

        The provider runs at most once per invocation, and only for a capability with
        ``authorize`` or ``to_message`` (``ctx.principal``), or when the audit log records
        principals. It fails closed only where it decides something: a capability with
        ``authorize`` is refused when the provider raises; elsewhere the principal is ``None``
        (and the failure logged). Never before ``available`` and decoding, so an unavailable
        capability always reports unavailable and invalid input always reports invalid input.

        Raises:
            AgentAuthorizationError: the provider or the hook failed, or the hook refused.
            AgentCancelledError: the signal was set while either was awaited.
        """
        if self._needs_principal(cap):
            await self._resolve_principal(cap, fail_closed=cap.authorize is not None)
        if cap.authorize is not None:
            await self._run_authorize(cap, decoded)
        self._refuse_if_aborted()

    def _needs_principal(self, cap: Capability) -> bool:
        if self._rt.principal_provider is None:
            return False
        return (
            cap.authorize is not None
            or cap.to_message is not None
            or (cap.confirm is not None and cap.confirm is not True)  # the predicate reads it
            or self._audited_principal()
        )

    def _audited_principal(self) -> bool:
        audit = self._rt.audit
        return audit is not None and audit.records_principal

    async def principal_for_record(self) -> None:
        """After a refusal before step 4: resolve the principal for the audit entry only.

        Runs only when the audit log records principals and the invocation is not aborted,
        also for a name that resolved to no capability (the provider reads only the
        invocation, so a caller probing for names is recorded as itself); a provider failure
        records no principal and changes nothing else.
        """
        if (
            self._principal is not _UNSET
            or self._rt.principal_provider is None
            or not self._audited_principal()
        ):
            return
        if self._signal is not None and self._signal.is_set():
            return
        try:
            await self._resolve_principal(self.cap, fail_closed=False)
        except AgentCancelledError:
            self._principal = None

    async def _resolve_principal(self, cap: Capability | None, *, fail_closed: bool) -> None:
        provider = self._rt.principal_provider
        assert provider is not None
        inv = self.invocation
        try:
            who = provider(inv)
            if type(who) not in _NEVER_AWAITABLE and inspect.isawaitable(who):
                who = await race(who, self.signal, None)
        except Abort:
            raise self.cancelled(False) from None
        except Exception as exc:
            name = self.name if cap is None else cap.name
            _log.warning("principal provider failed for %r", name, exc_info=True)
            self._principal = None
            if fail_closed:
                raise AgentAuthorizationError(capability=name) from exc
            return
        self._principal = who

    async def _run_authorize(self, cap: Capability, decoded: Any) -> None:
        assert cap.authorize is not None
        inv = self.invocation
        request = AuthorizationRequest(
            self.principal, decoded, self.model, inv.transport, inv, cap.name
        )
        try:
            verdict = cap.authorize(request)
            if type(verdict) not in _NEVER_AWAITABLE and inspect.isawaitable(verdict):
                verdict = await race(verdict, self.signal, None)
        except Abort:
            raise self.cancelled(False) from None
        except Exception as exc:
            _log.warning("authorize hook of %r raised", cap.name, exc_info=True)
            raise AgentAuthorizationError(capability=cap.name) from exc
        if verdict is True:
            return
        if isinstance(verdict, Deny):
            raise AgentAuthorizationError(capability=cap.name, reason=verdict.reason)
        if isinstance(verdict, Mapping):
            verdict_map: Mapping[str, Any] = verdict  # pyright: ignore[reportUnknownVariableType]
            if verdict_map.get("allowed") is True:
                return
            reason = verdict_map.get("reason")
            raise AgentAuthorizationError(
                capability=cap.name, reason=reason if isinstance(reason, str) else self._nobody()
            )
        raise AgentAuthorizationError(capability=cap.name, reason=self._nobody())

    def _nobody(self) -> str | None:
        """The reason for a refusal the hook gave none for, when no caller was identified."""
        return NOBODY if self.principal is None else None

    # -- 5. construct and send --------------------------------------------------------------

    def construct(self, cap: Capability, decoded: Any) -> Message:
        """The Message to send: ``decoded`` itself, or what ``to_message`` builds from it.

        Raises:
            AgentInvalidInputError: ``to_message`` raised :class:`InputRejected`.
            AgentHostError: ``to_message`` raised anything else (``dispatched=False``).
            AgentContractError: it built a Message of another tag.
        """
        if cap.to_message is None:
            return decoded
        try:
            built = cap.to_message(
                decoded, InvocationContext(self.model, self.principal, self.invocation)
            )
            if isinstance(built, Mapping):
                built = cap.message.model_validate(built)
        except InputRejected as rejected:
            issue: InputIssue = {"path": rejected.path, "problem": rejected.problem}
            raise AgentInvalidInputError(
                capability=cap.name, issues=[issue], accepted=cap.accepted
            ) from rejected
        except Exception as exc:
            _log.warning("to_message of %r raised", cap.name, exc_info=True)
            raise AgentHostError(capability=cap.name, dispatched=False) from exc
        if type(built) is not cap.message:
            raise AgentContractError(
                f"{cap.name!r} must make a {cap.tag!r} Message, but its to_message made another; "
                "nothing was sent",
                capability=cap.name,
            )
        return built

    # -- between 5a and 5b: confirm ---------------------------------------------------------

    async def confirm(self, cap: Capability, decoded: Any, message: Message) -> None:
        """Return only when a person approved ``message``; otherwise refuse, sending nothing.

        A predicate ``confirm`` decides first whether to ask at all (one that raises asks: the
        cautious answer). No approver on the invocation means the transport cannot ask a
        person: refused, ``"unavailable"``. An approver that raises, or answers anything but an
        :class:`Approval`, counts as unavailable too, never as approval. The question is
        withdrawn (its approver cancelled) on timeout and cancellation.

        Raises:
            AgentApprovalError: ``"declined"``, ``"timeout"`` (after the runtime's
                ``approval_timeout``) or ``"unavailable"``.
            AgentCancelledError: the signal was set while waiting (``dispatched=False``).
        """
        if cap.confirm is not True and not await self._needs_approval(cap, decoded):
            return
        inv = self.invocation
        approver = inv.approver
        if approver is None:
            self.approval = "unavailable"
            raise AgentApprovalError(capability=cap.name, reason="unavailable")
        rt = self._rt
        preview, summary = preview_of(rt.host, rt.definition.context, self.model, message, cap.name)
        request = ApprovalRequest(
            capability=cap.name,
            title=cap.title or cap.name,
            description=cap.description,
            input=_input_json(decoded),
            message=message,
            preview=preview,
            summary=summary,
        )
        deadline = asyncio.get_running_loop().time() + rt.approval_timeout
        asking: asyncio.Future[Any] | None = None
        try:
            asking = asyncio.ensure_future(approver(request))
            answer = await race(asking, self.signal, deadline)
        except Abort:
            raise self.cancelled(False) from None
        except Deadline:
            self.approval = "timeout"
            raise AgentApprovalError(
                capability=cap.name, reason="timeout", timeout=rt.approval_timeout
            ) from None
        except asyncio.CancelledError:
            raise
        except ApprovalsFull as full:
            self.approval = "unavailable"
            raise AgentApprovalError(
                capability=cap.name, reason="unavailable", waiting=full.limit, yours=full.yours
            ) from None
        except Exception as exc:
            _log.warning("the approver of %r raised; refusing the call", cap.name, exc_info=True)
            self.approval = "unavailable"
            raise AgentApprovalError(capability=cap.name, reason="unavailable") from exc
        finally:
            if asking is not None and not asking.done():
                # Withdraw the question and let the transport tidy up (end an elicitation,
                # leave INPUT_REQUIRED) before the call answers; a bounded grace.
                asking.cancel()
                await asyncio.wait({asking}, timeout=_WITHDRAW_GRACE)
        if not isinstance(answer, Approval):
            _log.warning("the approver of %r answered %r, not an Approval", cap.name, answer)
            self.approval = "unavailable"
            raise AgentApprovalError(capability=cap.name, reason="unavailable")
        if answer.approved is not True:
            self.approval = "declined"
            raise AgentApprovalError(capability=cap.name, reason="declined")
        self.approval = "approved"
        self.approved_by = answer.by if isinstance(answer.by, str) else None  # pyright: ignore[reportUnnecessaryIsInstance]
        self._refuse_if_aborted()

    async def _needs_approval(self, cap: Capability, decoded: Any) -> bool:
        predicate = cast(Callable[[Any], Any], cap.confirm)
        inv = self.invocation
        request = AuthorizationRequest(
            self.principal, decoded, self.model, inv.transport, inv, cap.name
        )
        try:
            verdict = predicate(request)
            if inspect.isawaitable(verdict):
                verdict = await race(verdict, self.signal, None)
        except Abort:
            raise self.cancelled(False) from None
        except Exception:
            _log.warning("confirm predicate of %r raised; asking a person", cap.name, exc_info=True)
            return True
        return verdict is not False

    async def _call_host(self, cap: Capability, message: Message, deadline: float | None) -> None:
        """Call ``host.dispatch`` and await it if it returns an awaitable."""
        sent = self._start_host(cap, message)
        if sent is not None:
            await self.await_host(cap, sent, deadline)

    def _start_host(self, cap: Capability, message: Message) -> Awaitable[Any] | None:
        """Call ``host.dispatch``; what it returned when that is awaitable, else ``None``."""
        self.host_called = True
        try:
            sent = self._rt.host.dispatch(message)
        except Exception as exc:
            _log.warning("host dispatch of %r raised", cap.name, exc_info=True)
            raise AgentHostError(capability=cap.name, dispatched=None) from exc
        if sent is None or not inspect.isawaitable(sent):
            return None
        return sent

    async def await_host(
        self, cap: Capability, sent: Awaitable[Any], deadline: float | None
    ) -> None:
        """Await what ``host.dispatch`` returned, racing the signal and ``deadline``."""
        try:
            await race(sent, self.signal, deadline)
        except Abort:
            raise self.cancelled(None) from None
        except Deadline:
            assert cap.completion is not None
            raise AgentCompletionTimeoutError(
                capability=cap.name, timeout=cap.completion.seconds, dispatched=None
            ) from None
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            _log.warning("host dispatch of %r raised", cap.name, exc_info=True)
            raise AgentHostError(capability=cap.name, dispatched=None) from exc

    async def _send_and_wait(
        self,
        cap: Capability,
        completion: Completion | StateCompletion,
        message: Message,
        decoded: Any,
    ) -> DispatchResult:
        rt = self._rt
        loop = asyncio.get_running_loop()
        inv = self.invocation
        hub: MessageHub | StateHub
        if isinstance(completion, StateCompletion):
            waiter = Waiter(completion, decoded, inv)
            hub = rt.state_hub(host=completion.source is None)
        else:
            waiter = Waiter(completion, message, inv)
            hub = rt.message_hub()
        hub.add(waiter)  # before sending, so a result produced while sending is not missed
        try:
            deadline = loop.time() + completion.seconds
            await self._call_host(cap, message, deadline)
            if isinstance(hub, StateHub) and not waiter.future.done():
                # The check when waiting starts: a condition already true completes at once.
                hub.check(waiter, rt.host.model() if hub_reads_model(completion) else None)
            try:
                status, result = await race(waiter.future, self.signal, deadline)
            except Abort:
                raise self.cancelled(True) from None
            except Deadline:
                raise AgentCompletionTimeoutError(
                    capability=cap.name, timeout=completion.seconds
                ) from None
            except asyncio.CancelledError:
                raise
            except Exception as exc:
                _log.warning("completion check of %r raised", cap.name, exc_info=True)
                raise AgentHostError(capability=cap.name, dispatched=True) from exc
            return dispatch_result(
                cap.name, cap.tag, message, inv, CompletionOutcome(status, result)
            )
        finally:
            if isinstance(hub, MessageHub) and not waiter.future.done():
                hub.abandon(waiter)  # its late result must reach no other call
            else:
                hub.remove(waiter)

    # -- helpers ------------------------------------------------------------------------------

    def _refuse_if_aborted(self) -> None:
        signal = self._signal
        if signal is not None and signal.is_set():
            raise self.cancelled(False)

    def cancelled(self, dispatched: bool | None) -> AgentCancelledError:
        """The cancellation of this call; it says so when the server is shutting down."""
        return AgentCancelledError(
            capability=self.name, dispatched=dispatched, shutdown=self._rt.draining
        )


def reused_id(name: str) -> AgentContractError:
    """The refusal of a call whose invocation id is held by a call still in flight."""
    return AgentContractError(
        f"The call to {name!r} reuses the invocation id of a call still in flight; "
        "give every call its own id (leave Invocation.id unset for a fresh one). "
        "Nothing was sent.",
        capability=name,
    )


def hub_reads_model(completion: Completion | StateCompletion) -> bool:
    """Whether a state completion reads the Model (a projection) rather than a source."""
    return isinstance(completion, StateCompletion) and completion.source is None


def _input_json(decoded: Any) -> Any:
    try:
        return decoded.model_dump(mode="json")
    except Exception:
        return None


def holds(cap: Capability, model: Any) -> bool:
    """``cap.available(model)``; a predicate that raises counts as false (and is logged)."""
    assert cap.available is not None
    try:
        return bool(cap.available(model))
    except Exception:
        _log.warning(
            "available predicate of %r raised; treating it as unavailable", cap.name, exc_info=True
        )
        return False


async def race(aw: Awaitable[Any], signal: asyncio.Event | None, deadline: float | None) -> Any:
    """Await ``aw`` unless ``signal`` is set (raise :class:`Abort`) or ``deadline`` passes
    (:class:`Deadline`). A coroutine that loses the race is cancelled; a plain future is left
    alone."""
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
