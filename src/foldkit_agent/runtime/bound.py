"""The bound runtime: binding, reading, change feeds, draining and the entry to dispatch.

:func:`bind` joins a contract to a host and decides, once per capability, which steps of the
pipeline its invocations take (:mod:`.plan`). Every invocation, whatever carried it, then runs
the one pipeline (:class:`~foldkit_agent.runtime.pipeline.Call`): resolve, available (the one
Model snapshot), decode, authorize, construct, confirm, send, wait. A refusal before the send
sends nothing. Each invocation writes exactly one audit entry and runs in one
``Agent.dispatch`` OpenTelemetry span when a tracer provider is configured.
:meth:`AgentRuntime.call` is the entry adapters use: the same pipeline, answered as one
:class:`~foldkit_agent.runtime.Outcome`.
"""

from __future__ import annotations

import asyncio
import logging
import os
from collections.abc import Awaitable, Callable, Coroutine, Mapping
from contextlib import suppress
from dataclasses import dataclass
from datetime import timedelta
from types import EllipsisType
from typing import Any, Generic

from opentelemetry import trace
from typing_extensions import TypeVar

from ..app.host import SupportsHost, Unsubscribe, host_accepts, host_observe, host_subscribe
from ..audit.log import AuditLog
from ..contract.approval import DEFAULT_APPROVAL_TIMEOUT
from ..contract.calls import Invocation, in_app_invocation
from ..contract.completion import Completion, StateCompletion
from ..contract.declare import AgentDefinition, Capability
from ..errors import (
    AgentContractError,
    AgentError,
    AgentResourceError,
)
from ._otel import provider_set
from .idempotency import IdempotencyKeys
from .outcome import Outcome, summarize
from .pipeline import Call
from .plan import Plan, holds, plan_for
from .results import DispatchResult
from .views import RuntimeMessages, RuntimeResources
from .waiting import MessageHub, StateHub

__all__ = ["AgentRuntime", "Change", "PrincipalProvider", "bind"]

_log = logging.getLogger("foldkit_agent.runtime")
_tracer = trace.get_tracer("foldkit_agent")
# No tracer provider configured: spans would be no-ops, so the dispatch path skips them. Asked
# on every call (see _otel for why the answer comes from there); the env var is read once, here.
_tracing = ["OTEL_PYTHON_TRACER_PROVIDER" in os.environ]  # once set, always: it is set once


M = TypeVar("M")
P = TypeVar("P", default=Any)
E = TypeVar("E", default=Any)

PrincipalProvider = Callable[[Invocation], P | Awaitable[P | None] | None]
"""``(invocation) -> principal | None``, or an awaitable of it; reads ``invocation.credentials``.

Generic in the principal type: ``bind`` takes a ``PrincipalProvider[P]`` for a contract
declared ``with_principal(P)``, so a provider of another type is a type error."""


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


class AgentRuntime(Generic[M, P, E]):
    """A contract bound to a live application. Build it with :func:`bind`.

    Typed by the Model ``M``, the principal ``P`` and the exposed Message union ``E``
    (``messages.dispatch`` takes a class of ``E``).

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
        idempotency: IdempotencyKeys | None = None,
    ) -> None:
        self.definition = definition
        self.host = host
        self._audit = audit
        self._principal_provider = principal
        self.plans: Mapping[str, Plan] = {}
        """Each capability's :class:`~foldkit_agent.runtime.plan.Plan`, by name (read-only)."""
        self._replan()
        self.approval_timeout = approval_timeout
        self.idempotency = IdempotencyKeys() if idempotency is None else idempotency
        """Where the calls' idempotency keys are kept, and for how long (settable: ``serve``
        keeps them in the audit database)."""
        self.messages: RuntimeMessages[E] = RuntimeMessages(self)
        self.resources = RuntimeResources(self)
        self.calls_in_flight: set[Call] = set()
        """The invocations in flight (the pipeline adds and removes itself)."""
        self.ids_in_flight: set[str] = set()
        """The invocation ids held by calls in flight (a reused one is refused)."""
        self.idle: list[asyncio.Future[None]] = []
        """:meth:`until_idle`'s waits for ``pending() == 0`` (woken by :meth:`wake_idle`)."""
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

    # -- what each capability runs -----------------------------------------------------------

    @property
    def audit(self) -> AuditLog | None:
        """The :class:`~foldkit_agent.audit.AuditLog` every invocation writes to, or ``None``.

        Settable (``serve --audit`` gives a runtime bound without one a log): the plans are
        decided again, since whether the principal is resolved for the audit depends on it.
        """
        return self._audit

    @audit.setter
    def audit(self, audit: AuditLog | None) -> None:
        self._audit = audit
        self._replan()

    @property
    def principal_provider(self) -> PrincipalProvider | None:
        """The principal provider given to :func:`bind` (settable; the plans follow)."""
        return self._principal_provider

    @principal_provider.setter
    def principal_provider(self, provider: PrincipalProvider | None) -> None:
        self._principal_provider = provider
        self._replan()

    def plan(self, name: str) -> Plan | None:
        """The steps invocations of capability ``name`` take, or ``None`` for no such name.

        Decided at bind (and again when :attr:`audit` or :attr:`principal_provider` is
        replaced), never per call. A transport asks it whether a capability ever waits for a
        person (:attr:`Plan.asks_person`) or for a completion (:attr:`Plan.waits`).

        Example:
            >>> rt.plan("delete_todo").asks_person
            True
        """
        return self.plans.get(name)

    def _replan(self) -> None:
        audit = self._audit
        provider = self._principal_provider
        recorded = audit is not None and audit.records_principal
        self.plans = {
            c.name: plan_for(c, provider=provider, audit_principal=recorded)
            for c in self.definition.capabilities
        }

    # -- reading ------------------------------------------------------------------------------

    def available_in(self, model: Any) -> list[Capability]:
        """The capabilities available in ``model`` (see ``messages.available``)."""
        available: list[Capability] = []
        for c in self.definition.capabilities:  # a plain loop: the watch runs it per change
            if c.available is None or holds(c.available, c.name, model):
                available.append(c)
        return available

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
        return len(self.calls_in_flight)

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
        if not self.calls_in_flight:
            return True
        fut: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self.idle.append(fut)
        try:
            await asyncio.wait({fut}, timeout=max(0.0, within))
        finally:
            if fut in self.idle:
                self.idle.remove(fut)
        return not self.calls_in_flight

    def abort_in_flight(self, *, asking: bool = False) -> int:
        """Set the signal of every invocation in flight (with ``asking``, only of those waiting
        for their approval: nothing of theirs was sent); each then answers that it was
        cancelled (with whether its Message was sent) and writes its one audit entry.

        Returns:
            How many invocations were aborted.
        """
        running = [call for call in self.calls_in_flight if call.asking or not asking]
        for call in running:
            call.abort()
        return len(running)

    def wake_idle(self) -> None:
        """Resolve :meth:`until_idle`'s waits (the pipeline calls it when the last call ends)."""
        waiters, self.idle = self.idle, []
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
        names: list[str] = []
        for cap in self.available_in(model):
            names.append(cap.name)
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
        return tuple(names), context, resources

    def _on_model_for_watch(self, model: Any) -> None:
        before = self._last_seen
        after = self._snapshot(model)
        self._last_seen = after
        if before is None:
            return
        # Equal dicts: a value kept from the last Model is compared by identity first (as
        # dict == does), so an unchanged projection costs no field comparison.
        caps_changed = before[0] != after[0]
        ctx_changed = before[1] != after[1]
        seen = before[2]
        changed: list[str] = []
        for name, value in after[2].items():
            if seen.get(name, {}) != value:
                changed.append(name)
        if not (caps_changed or ctx_changed or changed):
            return
        change = Change(caps_changed, ctx_changed, frozenset(changed))
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
        (the pipeline, audited once) and returns :func:`~foldkit_agent.runtime.summarize` of
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
            result = await self.start(name, payload, invocation)
        except AgentError as err:
            return summarize(err)
        except Exception as exc:
            _log.error("a call to %r failed unexpectedly", str(name)[:200], exc_info=exc)
            return summarize(exc, capability=str(name)[:200])
        return summarize(result)

    def invoke(
        self, cap: Capability | None, requested: str, payload: Any, invocation: Invocation | None
    ) -> Coroutine[Any, Any, DispatchResult]:
        """Run the pipeline for an already-resolved capability (``None`` = unknown).

        Await it: raises what the first refusing step raises; writes exactly one audit entry
        and runs in one ``Agent.dispatch`` span when a tracer provider is configured.
        """
        plan = None if cap is None else self.plans.get(cap.name)
        return self.start(requested, payload, invocation, plan)

    def start(
        self,
        requested: str,
        payload: Any,
        invocation: Invocation | None,
        plan: Plan | EllipsisType | None = ...,
    ) -> Coroutine[Any, Any, DispatchResult]:
        """:meth:`invoke` for a capability's :class:`~foldkit_agent.runtime.plan.Plan`, or
        (``plan`` left out) for the capability a protocol name read off the wire names.

        A plain function returning the call's coroutine, so an untraced call has no frame of
        its own here. Tracing is checked per call, not at bind: the first call after a tracer
        provider is set is traced, whenever the runtime was bound.
        """
        if plan is ...:
            plan = self.plans.get(requested) if isinstance(requested, str) else None  # pyright: ignore[reportUnnecessaryIsInstance]
            if plan is None:
                requested = str(requested)[:200]
        call = Call(
            self,
            plan,
            requested,
            payload,
            in_app_invocation() if invocation is None else invocation,
            self._audit,
        )
        if _tracing[0] or provider_set():
            _tracing[0] = True
            return self._traced(call)
        return call.run()

    async def _traced(self, call: Call) -> DispatchResult:
        inv = call.invocation
        with _tracer.start_as_current_span(
            "Agent.dispatch",
            attributes={
                "agent.capability": call.name,
                "agent.transport": inv.transport,
                "agent.invocation_id": inv.id,
            },
            record_exception=False,
        ) as span:
            try:
                return await call.run()
            finally:
                span.set_attribute("agent.decision", call.decision)
                span.set_attribute("agent.outcome", call.outcome)

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


def bind(
    *,
    definition: AgentDefinition[M, P, E],
    host: SupportsHost[Any, E],
    audit: AuditLog | None = None,
    principal: PrincipalProvider[P] | None = None,
    approval_timeout: float | timedelta = DEFAULT_APPROVAL_TIMEOUT,
    idempotency: IdempotencyKeys | None = None,
) -> AgentRuntime[M, P, E]:
    """Bind a contract to a live application.

    For a type checker the host must accept every exposed Message (its ``dispatch`` takes
    the contract's union ``E``, or a wider one) and the provider must give the contract's
    principal type ``P``; a host that declares the Messages it accepts (``Host(accepts=...)``,
    a ``Program(message=...)``) is checked against the contract here too, at run time.

    Args:
        definition: from ``agent.make``.
        host: anything with ``model()`` and ``dispatch(message)``, plus ``observe`` /
            ``subscribe`` when the contract's completions need them, and optionally
            ``accepts`` (see :mod:`.host`).
        audit: an :func:`~foldkit_agent.audit.audit_log`, or ``None``.
        principal: ``(invocation) -> principal`` (sync or async), deriving the caller from
            ``invocation.credentials``. Required when any capability has ``authorize``.
        approval_timeout: seconds (or a ``timedelta``) a ``confirm`` call waits for a
            person's answer before it is refused with reason ``"timeout"``; default 300.
        idempotency: where calls' idempotency keys are kept and for how long
            (:class:`~foldkit_agent.runtime.IdempotencyKeys`); default in memory, per process,
            24 hours.

    Raises:
        AgentContractError: the host lacks ``model``/``dispatch``; the host declares the
            Messages it accepts and an exposed Message is not one of them (named); a contract with
            ``authorize`` has no principal provider; a Message completion without
            ``host.observe``; a state completion without ``host.subscribe``; an
            ``approval_timeout`` that is not a positive number of seconds.
    """
    if not isinstance(definition, AgentDefinition):  # pyright: ignore[reportUnnecessaryIsInstance]
        raise AgentContractError("bind(definition=...) takes the result of agent.make(...)")
    if not callable(getattr(host, "model", None)) or not callable(getattr(host, "dispatch", None)):
        raise AgentContractError("bind(host=...) needs model() and dispatch(message)")
    accepts = host_accepts(host)
    if accepts is not None:
        refused = [c for c in definition.capabilities if c.message not in accepts]
        if refused:
            tags = ", ".join(c.tag for c in refused)
            raise AgentContractError(
                f"the host does not accept {tags}, which the contract exposes (as "
                f"{', '.join(repr(c.name) for c in refused)}): accept it in the host's "
                "Messages or stop exposing it",
                capability=refused[0].name,
            )
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
    return AgentRuntime[M, P, E](definition, host, audit, principal, float(seconds), idempotency)
