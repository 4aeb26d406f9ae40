"""The bound runtime: checked dispatch, availability, context, resources and change feeds.

:func:`bind` joins a contract to a host. Every invocation, whatever carried it, runs the same
five steps in order (each a method of :class:`~foldkit_agent.runtime.dispatch.Dispatch`):

1. resolve the capability (by Message class, tag or protocol name); unknown names and
   already-aborted invocations stop here, before the Model is read;
2. read the one Model snapshot (``host.model()`` is called once, when dispatch begins) and
   check ``available(model)`` against it;
3. strict decoding of the input;
4. resolve the principal from the transport's credentials (the provider runs only here, and
   only where something reads the principal) and run ``authorize``;
5. construct the Message (``to_message`` sees the same snapshot) and ``host.dispatch`` it,
   then wait for the completion contract, if any.

A capability declared with ``confirm`` adds one step between constructing and dispatching:
``invocation.approver`` is asked, with a preview, and only an approval sends the very Message
it was shown (DESIGN §11). A refusal before the dispatch sends nothing. Each invocation
writes exactly one audit entry and runs in one ``Agent.dispatch`` OpenTelemetry span.
:meth:`AgentRuntime.call` is the entry adapters use: the same path, answered as one
:class:`~foldkit_agent.runtime.Outcome`.
"""

from __future__ import annotations

import asyncio
import inspect
import logging
import os
from collections.abc import Callable, Coroutine
from contextlib import suppress
from dataclasses import dataclass
from datetime import timedelta
from typing import Any, Generic, TypeVar

from opentelemetry import trace

from ..app.host import Unsubscribe, host_observe, host_subscribe
from ..app.message import Message
from ..audit.log import AuditLog, Decision
from ..contract.approval import DEFAULT_APPROVAL_TIMEOUT
from ..contract.calls import Invocation, in_app_invocation
from ..contract.completion import Completion, StateCompletion
from ..contract.declare import AgentDefinition, Capability
from ..errors import (
    AgentCancelledError,
    AgentCapabilityUnavailableError,
    AgentContractError,
    AgentError,
    AgentHostError,
    AgentResourceError,
)
from .dispatch import Dispatch, holds, reused_id
from .outcome import DEFECT, Outcome, summarize
from .results import DispatchResult, dispatch_result
from .waiting import MessageHub, StateHub, _same  # pyright: ignore[reportPrivateUsage]

__all__ = ["AgentRuntime", "Change", "PrincipalProvider", "bind"]

_log = logging.getLogger("foldkit_agent.runtime")
_tracer = trace.get_tracer("foldkit_agent")
# No tracer provider configured: spans would be no-ops, so the dispatch path skips them.
_PROVIDER_FROM_ENV = "OTEL_PYTHON_TRACER_PROVIDER" in os.environ
_PROBE = trace.ProxyTracerProvider()
_tracing = [_PROVIDER_FROM_ENV]  # once configured, always: a provider is set only once


def _tracing_configured() -> bool:
    """True once a tracer provider is set (``trace.set_tracer_provider`` or the env var).

    Public API only: until a provider is set, the API's ``ProxyTracerProvider`` hands out a
    ``ProxyTracer``; after, the provider's own tracer. That probe is used rather than
    ``trace.get_tracer_provider()``, which reads ``os.environ`` on every call while none is
    set (the env var is read once, at import). The answer is kept once it is yes.
    """
    if _tracing[0]:
        return True
    if isinstance(_PROBE.get_tracer("foldkit_agent"), trace.ProxyTracer):
        return False
    _tracing[0] = True
    return True


M = TypeVar("M")
P = TypeVar("P")

PrincipalProvider = Callable[[Invocation], Any]
"""``(invocation) -> principal | None``, or an awaitable of it; reads ``invocation.credentials``."""


@dataclass(frozen=True, slots=True)
class Change:
    """What changed, as reported to :meth:`AgentRuntime.watch` callbacks.

    Attributes:
        capabilities: the set of available capabilities changed.
        context: the context projection's value changed.
        resources: names of resources whose value changed.
    """

    capabilities: bool
    context: bool
    resources: frozenset[str]


class RuntimeMessages:
    """``runtime.messages``: list and dispatch capabilities."""

    __slots__ = ("_rt",)

    def __init__(self, rt: AgentRuntime[Any, Any]) -> None:
        self._rt = rt

    def all(self) -> list[Capability]:
        """Every capability in the contract, available or not, in declaration order."""
        return list(self._rt.definition.capabilities)

    def available(self) -> list[Capability]:
        """The capabilities whose ``available`` predicate holds for the current Model.

        Reads the Model once. A predicate that raises counts as unavailable (and is logged);
        it never breaks the listing of the others.
        """
        return self._rt.available_in(self._rt.host.model())

    async def dispatch(
        self,
        ref: type[Message] | str,
        input: Any = None,
        invocation: Invocation | None = None,
    ) -> DispatchResult:
        """Invoke a capability named by its Message class, tag or protocol name.

        Args:
            ref: ``RequestedCreateTodo``, ``"RequestedCreateTodo"`` or ``"create_todo"``.
            input: the wire (JSON) form of the input; ``None`` means ``{}``.
            invocation: identity, transport, signal and credentials; a fresh in-app one by default.

        Returns:
            :class:`~foldkit_agent.runtime.DispatchResult`.

        Raises:
            AgentUnknownCapabilityError, AgentCapabilityUnavailableError,
            AgentInvalidInputError, AgentAuthorizationError, AgentCancelledError,
            AgentCompletionTimeoutError, AgentHostError: see :mod:`foldkit_agent.errors`.
        """
        cap = self._rt.definition.lookup(ref)
        name = ref if isinstance(ref, str) else getattr(ref, "__message_tag__", repr(ref))
        return await self._rt.invoke(cap, name, {} if input is None else input, invocation)

    def dispatch_unknown(
        self, name: str, payload: Any, invocation: Invocation | None = None
    ) -> Coroutine[Any, Any, DispatchResult]:
        """Invoke by a protocol name and an unvalidated payload, both read off the wire.

        Only capability *names* resolve here (not tags). Await it; raises as :meth:`dispatch`.
        (A plain function returning the invocation's coroutine: one frame fewer per call.)
        """
        cap = self._rt.definition.by_name.get(name) if isinstance(name, str) else None  # pyright: ignore[reportUnnecessaryIsInstance]
        return self._rt.invoke(cap, str(name)[:200], payload, invocation)


class RuntimeResources:
    """``runtime.resources``: read the contract's named projections."""

    __slots__ = ("_rt",)

    def __init__(self, rt: AgentRuntime[Any, Any]) -> None:
        self._rt = rt

    def names(self) -> list[str]:
        """The resource names, in declaration order."""
        return list(self._rt.definition.resources)

    def read(self, name: str) -> dict[str, Any]:
        """The resource's current value as JSON data.

        Raises:
            AgentResourceError: no such resource, or its projection could not be read.
        """
        res = self._rt.definition.resources.get(name)
        if res is None:
            raise AgentResourceError(resource=str(name)[:200])
        try:
            return res.projection.encode(self._rt.host.model())
        except Exception as exc:
            _log.warning("resource %r could not be read", name, exc_info=True)
            raise AgentResourceError(resource=name, known=True) from exc


class AgentRuntime(Generic[M, P]):
    """A contract bound to a live application. Build it with :func:`bind`.

    Attributes:
        definition: the contract.
        host: the host seam.
        audit: the :class:`~foldkit_agent.audit.AuditLog`, or ``None``.
        messages: list and dispatch capabilities.
        resources: read resources.
    """

    def __init__(
        self,
        definition: AgentDefinition,
        host: Any,
        audit: AuditLog | None,
        principal: PrincipalProvider | None,
        approval_timeout: float = DEFAULT_APPROVAL_TIMEOUT,
    ) -> None:
        self.definition = definition
        self.host = host
        self.audit = audit
        self.principal_provider = principal
        self.approval_timeout = approval_timeout
        self.messages = RuntimeMessages(self)
        self.resources = RuntimeResources(self)
        self._in_flight = 0
        self._ids_in_flight: set[str] = set()
        self._running: set[Dispatch] = set()  # the invocations in flight
        # Capabilities with no hook step and no completion (ids): see _invoke_plain.
        self._plain = frozenset(
            id(c)
            for c in definition.capabilities
            if c.authorize is None
            and c.to_message is None
            and c.confirm is None
            and c.completion is None
        )
        self._idle: list[asyncio.Future[None]] = []  # drain()'s waits for pending() == 0
        self.draining = False
        self._message_hub = MessageHub()
        self._state_hub = StateHub()
        self._observing: Unsubscribe | None = None
        self._subscribed: Unsubscribe | None = None
        self._watchers: dict[int, Callable[[Change], None]] = {}
        self._watch_unsub: Unsubscribe | None = None
        self._last_seen: (
            tuple[tuple[str, ...], dict[str, Any] | None, dict[str, dict[str, Any]]] | None
        ) = None
        self._next_watch = 0
        self.closed = False
        """``True`` once :meth:`close` ran (adapters drop what they keep for this runtime)."""

    # -- reading ------------------------------------------------------------------------------

    def available_in(self, model: Any) -> list[Capability]:
        """The capabilities available in ``model`` (see ``messages.available``)."""
        return [c for c in self.definition.capabilities if c.available is None or holds(c, model)]

    def context(self) -> dict[str, Any] | None:
        """The context projection of the current Model as JSON data (``None`` without one).

        Raises:
            AgentResourceError: the Model could not be read or projected (``resource`` is
                ``"context"``; the cause is logged, never shown).
        """
        ctx = self.definition.context
        if ctx is None:
            return None
        try:
            return ctx.encode(self.host.model())
        except Exception as exc:
            _log.warning("the context projection could not be read", exc_info=True)
            raise AgentResourceError(resource="context", known=True) from exc

    def pending(self) -> int:
        """How many invocations are in flight (between resolution and their answer)."""
        return self._in_flight

    # -- draining (see foldkit_agent.runtime.drain) ------------------------------------------

    def stop_accepting(self) -> None:
        """From now on every new invocation is refused before it runs (nothing is sent): an
        :class:`~foldkit_agent.errors.AgentCancelledError` saying the server is shutting down.
        Calls already in flight go on. Idempotent; used by :func:`~foldkit_agent.drain`."""
        self.draining = True

    async def until_idle(self, within: float) -> bool:
        """Wait up to ``within`` seconds until no invocation is in flight; ``True`` if none is.

        Call on the event loop the invocations run on.
        """
        if self._in_flight == 0:
            return True
        fut: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._idle.append(fut)
        try:
            await asyncio.wait({fut}, timeout=max(0.0, within))
        finally:
            if fut in self._idle:
                self._idle.remove(fut)
        return self._in_flight == 0

    def abort_in_flight(self) -> int:
        """Set the signal of every invocation in flight; each then answers that it was
        cancelled (with whether its Message was sent) and writes its one audit entry.

        Returns:
            How many invocations were aborted.
        """
        running = list(self._running)
        for run in running:
            run.abort()
        return len(running)

    def _wake_idle(self) -> None:
        waiters, self._idle = self._idle, []
        for fut in waiters:
            with suppress(RuntimeError):  # its loop is closed: nobody waits any more
                fut.get_loop().call_soon_threadsafe(_resolve, fut)

    # -- change feed --------------------------------------------------------------------------

    def watch(self, callback: Callable[[Change], None]) -> Unsubscribe:
        """Call ``callback(Change)`` whenever availability, the context or a resource changes.

        Called synchronously from the host's notification; a callback that raises is logged
        and never breaks the host or other watchers. Model changes that alter nothing an agent
        can see produce no call.

        Raises:
            AgentContractError: the host has no ``subscribe``.
        """
        subscribe = host_subscribe(self.host)
        if subscribe is None:
            raise AgentContractError("watch needs a host with subscribe(on_model)")
        key = self._next_watch
        self._next_watch += 1
        self._watchers[key] = callback
        if self._watch_unsub is None:
            self._last_seen = self._snapshot(self.host.model())
            self._watch_unsub = subscribe(self._on_model_for_watch)

        def unsubscribe() -> None:
            self._watchers.pop(key, None)
            if not self._watchers and self._watch_unsub is not None:
                unsub, self._watch_unsub = self._watch_unsub, None
                unsub()

        return unsubscribe

    def _snapshot(
        self, model: Any
    ) -> tuple[tuple[str, ...], dict[str, Any] | None, dict[str, dict[str, Any]]]:
        names = tuple(c.name for c in self.available_in(model))
        ctx = self.definition.context
        context = None
        if ctx is not None:
            try:
                context = ctx.get(model)
            except Exception:
                context = None
        resources: dict[str, dict[str, Any]] = {}
        for name, res in self.definition.resources.items():
            try:
                resources[name] = res.projection.get(model)
            except Exception:
                resources[name] = {}
        return names, context, resources

    def _on_model_for_watch(self, model: Any) -> None:
        before = self._last_seen
        after = self._snapshot(model)
        self._last_seen = after
        if before is None:
            return
        caps_changed = before[0] != after[0]
        ctx_changed = not _same_opt(before[1], after[1])
        res_changed = frozenset(n for n in after[2] if not _same(before[2].get(n, {}), after[2][n]))
        if not (caps_changed or ctx_changed or res_changed):
            return
        change = Change(caps_changed, ctx_changed, res_changed)
        for cb in list(self._watchers.values()):
            try:
                cb(change)
            except Exception:
                _log.exception("a watch callback raised")

    def close(self) -> None:
        """Drop the runtime's host subscriptions (observe, subscribe, watch); sets ``closed``."""
        self.closed = True
        for attr in ("_observing", "_subscribed", "_watch_unsub"):
            unsub = getattr(self, attr)
            if unsub is not None:
                setattr(self, attr, None)
                try:
                    unsub()
                except Exception:
                    _log.exception("a host unsubscribe raised")
        self._watchers.clear()

    # -- dispatch -----------------------------------------------------------------------------

    async def call(self, name: str, payload: Any, invocation: Invocation | None = None) -> Outcome:
        """Invoke a capability by its protocol name and answer in the one outcome shape.

        The entry every adapter uses: it runs :meth:`RuntimeMessages.dispatch_unknown`'s path
        (the five steps, audited once) and returns :func:`~foldkit_agent.runtime.summarize` of
        what happened. It never raises for a refusal or a defect: a refusal is an
        :class:`Outcome` with ``kind="refused"``/``"unknown"``, an unexpected error one with
        ``kind="defect"`` and the one generic defect text (the error is logged, never shown).

        Args:
            name: the capability name read off the wire.
            payload: the unvalidated input (the wire JSON form).
            invocation: transport, credentials, signal and id; a fresh in-app one by default.

        Returns:
            :class:`~foldkit_agent.runtime.Outcome`.

        Raises:
            asyncio.CancelledError: the awaiting task was cancelled (after the audit entry).

        Example:
            >>> outcome = await rt.call("create_todo", {"title": "Milk"}, Invocation())
            >>> (outcome.ok, outcome.kind)
            (True, 'completed')
        """
        try:
            result = await self.messages.dispatch_unknown(name, payload, invocation)
        except AgentError as err:
            return summarize(err)
        except Exception as exc:
            _log.error("a call to %r failed unexpectedly", str(name)[:200], exc_info=exc)
            return summarize(exc, capability=str(name)[:200])
        return summarize(result)

    def invoke(
        self, cap: Capability | None, requested: str, payload: Any, invocation: Invocation | None
    ) -> Coroutine[Any, Any, DispatchResult]:
        """Run the five steps for an already-resolved capability (``None`` = unknown).

        Await it: raises what the first refusing step raises; writes exactly one audit entry
        and runs in one ``Agent.dispatch`` span when a tracer provider is configured (a plain
        function returning the coroutine, so an untraced call has no frame of its own here).
        """
        traced = _tracing[0] or _tracing_configured()
        if (
            not traced
            and cap is not None
            and id(cap) in self._plain
            and (invocation is None or invocation.signal is None)
            and not self.draining
            and (self.principal_provider is None or not self._records_principal())
        ):
            return self._invoke_plain(
                cap, payload, in_app_invocation() if invocation is None else invocation
            )
        run = Dispatch(
            self, cap, requested, payload, in_app_invocation() if invocation is None else invocation
        )
        return self._traced(run) if traced else self._invoke(run, None)

    def _records_principal(self) -> bool:
        return self.audit is not None and self.audit.records_principal

    async def _invoke_plain(self, cap: Capability, payload: Any, inv: Invocation) -> DispatchResult:
        """:meth:`_invoke` with :meth:`Dispatch.run` for a plain capability (see ``_plain``).

        The capability has no step but resolve, available, decode and send: no
        ``authorize``, ``to_message``, ``confirm`` or completion, and no principal to resolve
        for it or for the audit; the invocation has no signal of its own, the runtime is not
        draining and no span is recorded. So of resolve's refusals only a reused id remains,
        nothing is awaited before the host is called, and the steps are written out here with
        nothing else: the same refusals, outcomes and one audit entry as :meth:`_invoke`, about
        half its calls (issue 20). A host whose ``dispatch`` returns an awaitable gets a
        :class:`Dispatch` then, before anything is awaited, so the wait can be aborted.
        """
        if self.draining:  # it stopped accepting since the call was made: resolve refuses
            return await self._invoke(Dispatch(self, cap, cap.name, payload, inv), None)
        self._in_flight += 1
        ids = self._ids_in_flight
        inv_id = inv.id
        claimed = host_called = cancelled = False
        run: Dispatch | None = None
        decision: Decision = "refused"
        outcome = "ok"
        try:
            if inv_id in ids:
                raise reused_id(cap.name)
            ids.add(inv_id)
            claimed = True
            host = self.host
            model = host.model()
            if cap.available is not None and not holds(cap, model):
                raise AgentCapabilityUnavailableError(capability=cap.name)
            message: Any = cap.decoder.decode(cap.name, payload)
            host_called = True
            try:
                sent = host.dispatch(message)
            except Exception as exc:
                _log.warning("host dispatch of %r raised", cap.name, exc_info=True)
                raise AgentHostError(capability=cap.name, dispatched=None) from exc
            if sent is not None and inspect.isawaitable(sent):
                run = Dispatch(self, cap, cap.name, payload, inv)
                run.model = model
                run.host_called = True
                self._running.add(run)  # abort_in_flight() aborts the wait
                await run.await_host(cap, sent, None)
            decision = "dispatched"
            return dispatch_result(cap.name, cap.tag, message, inv, None)
        except AgentError as err:
            outcome = err.tag
            decision = "unknown" if host_called else "refused"
            raise
        except asyncio.CancelledError:
            outcome = AgentCancelledError.tag
            decision = "unknown" if host_called else "refused"
            cancelled = True
            raise
        except Exception:
            outcome = DEFECT
            decision = "unknown" if host_called else "refused"
            raise
        finally:
            audit = self.audit
            try:
                if audit is not None:
                    ticket = audit.note(
                        invocation_id=inv_id,
                        transport=inv.transport,
                        capability=cap.name,
                        tag=cap.tag,
                        principal=None,
                        decision=decision,
                        outcome=outcome,
                        input=payload,
                        approval=None,
                        approved_by=None,
                    )
                    if ticket is not None and not cancelled:  # answered means audited
                        await audit.committed(ticket)
            finally:
                self._in_flight -= 1
                if run is not None:
                    self._running.discard(run)
                if claimed:
                    ids.discard(inv_id)
                if self._in_flight == 0 and self._idle:
                    self._wake_idle()

    async def _traced(self, run: Dispatch) -> DispatchResult:
        inv = run.invocation
        with _tracer.start_as_current_span(
            "Agent.dispatch",
            attributes={
                "agent.capability": run.name,
                "agent.transport": inv.transport,
                "agent.invocation_id": inv.id,
            },
            record_exception=False,
        ) as span:
            return await self._invoke(run, span)

    async def _invoke(self, run: Dispatch, span: Any) -> DispatchResult:
        """:meth:`invoke`'s body: the steps, the in-flight accounting and the audit entry."""
        self._in_flight += 1
        self._running.add(run)  # abort_in_flight() aborts it
        decision: Decision = "refused"
        outcome = "ok"
        cancelled = False
        try:
            result = await run.run()
            decision = "dispatched"
            outcome = result.completion.status if result.completion else "ok"
            return result
        except AgentError as err:
            outcome = err.tag
            decision = "unknown" if run.host_called else "refused"
            await run.principal_for_record()
            raise
        except asyncio.CancelledError:
            outcome = AgentCancelledError.tag
            decision = "unknown" if run.host_called else "refused"
            cancelled = True
            raise
        except Exception:
            outcome = DEFECT
            decision = "unknown" if run.host_called else "refused"
            raise
        finally:
            if span is not None:
                span.set_attribute("agent.decision", decision)
                span.set_attribute("agent.outcome", outcome)
            audit = self.audit
            try:
                if audit is not None:
                    inv = run.invocation
                    cap = run.cap
                    ticket = audit.note(
                        invocation_id=inv.id,
                        transport=inv.transport,
                        capability=run.name,
                        tag=None if cap is None else cap.tag,
                        principal=run.principal,
                        decision=decision,
                        outcome=outcome,
                        input=run.payload,
                        approval=run.approval,
                        approved_by=run.approved_by,
                    )
                    # Answered means audited: with a durable sink the answer waits for the
                    # commit (bounded by the log's commit_timeout). A cancelled caller gets
                    # no answer, so it does not wait.
                    if ticket is not None and not cancelled:
                        await audit.committed(ticket)
            finally:
                self._in_flight -= 1
                self._running.discard(run)
                if run.claimed:
                    self._ids_in_flight.discard(run.invocation.id)
                if self._in_flight == 0 and self._idle:
                    self._wake_idle()

    def claim_invocation_id(self, invocation_id: str) -> bool:
        """Hold ``invocation_id`` for a call until it answers; ``False`` when it is held."""
        if invocation_id in self._ids_in_flight:
            return False
        self._ids_in_flight.add(invocation_id)
        return True

    def message_hub(self) -> MessageHub:
        """The hub of Message completions, observing the host from its first use."""
        if self._observing is None:
            observe = host_observe(self.host)
            assert observe is not None  # checked at bind
            self._observing = observe(self._message_hub.on_message)
        return self._message_hub

    def state_hub(self, *, host: bool = True) -> StateHub:
        """The hub of state completions; with ``host``, subscribed to the host's Model
        changes from its first use (a ``when(source=...)`` needs no host subscription)."""
        if host and self._subscribed is None:
            subscribe = host_subscribe(self.host)
            assert subscribe is not None  # checked at bind
            self._subscribed = subscribe(self._state_hub.on_model)
        return self._state_hub


def _resolve(fut: asyncio.Future[None]) -> None:
    if not fut.done():
        fut.set_result(None)


def _same_opt(a: dict[str, Any] | None, b: dict[str, Any] | None) -> bool:
    if a is None or b is None:
        return a is b
    return _same(a, b)


def bind(
    *,
    definition: AgentDefinition,
    host: Any,
    audit: AuditLog | None = None,
    principal: PrincipalProvider | None = None,
    approval_timeout: float | timedelta = DEFAULT_APPROVAL_TIMEOUT,
) -> AgentRuntime[Any, Any]:
    """Bind a contract to a live application.

    Args:
        definition: from ``agent.make``.
        host: anything with ``model()`` and ``dispatch(message)``, plus ``observe`` /
            ``subscribe`` when the contract's completions need them (see :mod:`.host`).
        audit: an :func:`~foldkit_agent.audit.audit_log`, or ``None``.
        principal: ``(invocation) -> principal`` (sync or async), deriving the caller from
            ``invocation.credentials``. Required when any capability has ``authorize``.
        approval_timeout: seconds (or a ``timedelta``) a ``confirm`` call waits for a
            person's answer before it is refused with reason ``"timeout"``; default 300.

    Raises:
        AgentContractError: the host lacks ``model``/``dispatch``; a contract with
            ``authorize`` has no principal provider; a Message completion without
            ``host.observe``; a state completion without ``host.subscribe``; an
            ``approval_timeout`` that is not a positive number of seconds.
    """
    if not isinstance(definition, AgentDefinition):  # pyright: ignore[reportUnnecessaryIsInstance]
        raise AgentContractError("bind(definition=...) takes the result of agent.make(...)")
    if not callable(getattr(host, "model", None)) or not callable(getattr(host, "dispatch", None)):
        raise AgentContractError("bind(host=...) needs model() and dispatch(message)")
    guarded = [c.name for c in definition.capabilities if c.authorize is not None]
    if guarded and principal is None:
        which = (
            f"the capability {guarded[0]!r} has an authorize hook"
            if len(guarded) == 1
            else f"the capabilities {', '.join(repr(g) for g in guarded)} have authorize hooks"
        )
        raise AgentContractError(
            f"{which}, so bind needs principal=: a provider that reads the caller from "
            "invocation.credentials, such as principal=lambda inv: inv.credentials"
        )
    for cap in definition.capabilities:
        if isinstance(cap.completion, Completion) and host_observe(host) is None:
            raise AgentContractError(
                f"{cap.name!r} completes on a Message, so the host must provide "
                "observe(on_message)",
                capability=cap.name,
            )
        if (
            isinstance(cap.completion, StateCompletion)
            and cap.completion.source is None
            and host_subscribe(host) is None
        ):
            raise AgentContractError(
                f"{cap.name!r} completes on state, so the host must provide subscribe(on_model)",
                capability=cap.name,
            )
    seconds = (
        approval_timeout.total_seconds()
        if isinstance(approval_timeout, timedelta)
        else approval_timeout
    )
    if (
        isinstance(seconds, bool)
        or not isinstance(seconds, int | float)  # pyright: ignore[reportUnnecessaryIsInstance]
        or not seconds > 0
        or seconds == float("inf")
    ):
        raise AgentContractError("bind(approval_timeout=...) takes a positive number of seconds")
    return AgentRuntime(definition, host, audit, principal, float(seconds))
