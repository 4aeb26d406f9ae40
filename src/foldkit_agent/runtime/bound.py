"""The bound runtime: checked dispatch, availability, context, resources and change feeds.

:func:`bind` joins a contract to a host. Every invocation, whatever carried it, runs the same
five steps in order:

1. resolve the capability (by Message class, tag or protocol name);
2. ``available(model)`` against one Model snapshot (``host.model()`` is read once);
3. strict decoding of the input;
4. ``authorize`` with the principal the provider derives from the transport's credentials;
5. construct the Message (``to_message`` sees the same snapshot) and ``host.dispatch`` it,
   then wait for the completion contract, if any.

A refusal before step 5 sends nothing. Each invocation writes exactly one audit entry and runs
in one ``Agent.dispatch`` OpenTelemetry span.
"""

from __future__ import annotations

import asyncio
import inspect
import logging
import os
from collections.abc import Awaitable, Callable, Mapping
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from opentelemetry import trace

from ..app.host import Unsubscribe, host_observe, host_subscribe
from ..app.message import Message
from ..audit.log import AuditLog
from ..contract.calls import AuthorizationRequest, Deny, Invocation, InvocationContext
from ..contract.completion import (  # pyright: ignore[reportPrivateUsage]
    Completion,
    StateCompletion,
)
from ..contract.declare import AgentDefinition, Capability
from ..errors import (
    AgentAuthorizationError,
    AgentCancelledError,
    AgentCapabilityUnavailableError,
    AgentCompletionTimeoutError,
    AgentContractError,
    AgentError,
    AgentHostError,
    AgentInvalidInputError,
    AgentResourceError,
    AgentUnknownCapabilityError,
    InputIssue,
    InputRejected,
)
from .results import CompletionOutcome, DispatchResult
from .waiting import MessageHub, StateHub, Waiter, _same  # pyright: ignore[reportPrivateUsage]

__all__ = ["AgentRuntime", "Change", "PrincipalProvider", "bind"]

_log = logging.getLogger("foldkit_agent.runtime")
_tracer = trace.get_tracer("foldkit_agent")
# No tracer provider configured: spans would be no-ops, so the dispatch path skips them.
_NO_SPAN: AbstractContextManager[None] = nullcontext(None)
_PROVIDER_FROM_ENV = "OTEL_PYTHON_TRACER_PROVIDER" in os.environ


def _tracing_configured() -> bool:
    """True once a tracer provider is set (``trace.set_tracer_provider`` or the env var).

    ``trace.get_tracer_provider()`` reads ``os.environ`` on every call while none is set,
    which costs more than the rest of a refusal; the module global it guards is read instead.
    """
    return _PROVIDER_FROM_ENV or getattr(trace, "_TRACER_PROVIDER", True) is not None


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


class _Abort(Exception):
    """The invocation's signal was set while something was awaited."""


class _Deadline(Exception):
    """The completion deadline passed while something was awaited."""


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

    async def dispatch_unknown(
        self, name: str, payload: Any, invocation: Invocation | None = None
    ) -> DispatchResult:
        """Invoke by a protocol name and an unvalidated payload, both read off the wire.

        Only capability *names* resolve here (not tags). Raises as :meth:`dispatch`.
        """
        cap = self._rt.definition.by_name.get(name) if isinstance(name, str) else None  # pyright: ignore[reportUnnecessaryIsInstance]
        return await self._rt.invoke(cap, str(name)[:200], payload, invocation)


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
    ) -> None:
        self.definition = definition
        self.host = host
        self.audit = audit
        self._principal = principal
        self.messages = RuntimeMessages(self)
        self.resources = RuntimeResources(self)
        self._in_flight = 0
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

    # -- reading ------------------------------------------------------------------------------

    def available_in(self, model: Any) -> list[Capability]:
        """The capabilities available in ``model`` (see ``messages.available``)."""
        return [c for c in self.definition.capabilities if c.available is None or _holds(c, model)]

    def context(self) -> dict[str, Any] | None:
        """The context projection of the current Model as JSON data (``None`` without one)."""
        ctx = self.definition.context
        return None if ctx is None else ctx.encode(self.host.model())

    def pending(self) -> int:
        """How many invocations are in flight (between resolution and their answer)."""
        return self._in_flight

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
        """Drop the runtime's host subscriptions (observe, subscribe, watch)."""
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

    async def invoke(
        self, cap: Capability | None, requested: str, payload: Any, invocation: Invocation | None
    ) -> DispatchResult:
        """Run the five steps for an already-resolved capability (``None`` = unknown)."""
        inv = invocation if invocation is not None else Invocation()
        name = cap.name if cap is not None else requested
        self._in_flight += 1
        decision = "refused"
        outcome = "ok"
        principal: Any = None
        stage = 0  # 0 nothing sent, 1 host called (delivery unknown), 2 host accepted
        span_scope: AbstractContextManager[Any] = (
            _NO_SPAN
            if not _tracing_configured()
            else _tracer.start_as_current_span(
                "Agent.dispatch",
                attributes={
                    "agent.capability": name,
                    "agent.transport": inv.transport,
                    "agent.invocation_id": inv.id,
                },
                record_exception=False,
            )
        )
        with span_scope as span:
            try:
                if cap is None:
                    raise AgentUnknownCapabilityError(capability=requested)
                signal = inv.signal
                if signal is not None and signal.is_set():
                    raise AgentCancelledError(capability=name, dispatched=False)
                if self._principal is not None:
                    principal = await self._resolve_principal(cap, inv)
                model = self.host.model()
                if cap.available is not None and not _holds(cap, model):
                    raise AgentCapabilityUnavailableError(capability=name)
                decoded = cap.decoder.decode(name, payload)
                if cap.authorize is not None:
                    await self._authorize(cap, decoded, model, principal, inv)
                if signal is not None and signal.is_set():
                    raise AgentCancelledError(capability=name, dispatched=False)
                message = self._construct(cap, decoded, model, principal, inv)
                completion = cap.completion
                if completion is None:
                    stage = 1
                    await self._send(cap, message, signal, None)
                    stage = 2
                    decision, outcome = "dispatched", "ok"
                    return DispatchResult(name, cap.tag, message, inv, None)
                stage = 1
                result = await self._send_and_wait(cap, completion, message, decoded, inv)
                stage = 2
                decision = "dispatched"
                outcome = result.completion.status if result.completion else "ok"
                return result
            except _Sent as sent:
                stage = sent.stage
                err = sent.error
                outcome = err.tag
                decision = "unknown" if stage else "refused"
                raise err from sent.__cause__
            except AgentError as err:
                outcome = err.tag
                decision = "unknown" if stage == 1 else "refused"
                raise
            except asyncio.CancelledError:
                outcome = AgentCancelledError.tag
                decision = "unknown" if stage == 1 else "refused"
                raise
            finally:
                self._in_flight -= 1
                if span is not None:
                    span.set_attribute("agent.decision", decision)
                    span.set_attribute("agent.outcome", outcome)
                if self.audit is not None:
                    self.audit.note(
                        inv.id,
                        inv.transport,
                        name,
                        cap.tag if cap is not None else None,
                        principal,
                        decision,  # type: ignore[arg-type]
                        outcome,
                        payload,
                    )

    async def _resolve_principal(self, cap: Capability, inv: Invocation) -> Any:
        assert self._principal is not None
        try:
            who = self._principal(inv)
            if inspect.isawaitable(who):
                who = await self._race(who, inv.signal, None)
            return who
        except _Abort:
            raise AgentCancelledError(capability=cap.name, dispatched=False) from None
        except Exception as exc:
            _log.warning("principal provider failed for %r", cap.name, exc_info=True)
            raise AgentAuthorizationError(capability=cap.name) from exc

    async def _authorize(
        self, cap: Capability, decoded: Any, model: Any, principal: Any, inv: Invocation
    ) -> None:
        assert cap.authorize is not None
        request = AuthorizationRequest(principal, decoded, model, inv.transport, inv, cap.name)
        try:
            verdict = cap.authorize(request)
            if inspect.isawaitable(verdict):
                verdict = await self._race(verdict, inv.signal, None)
        except _Abort:
            raise AgentCancelledError(capability=cap.name, dispatched=False) from None
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
                capability=cap.name, reason=reason if isinstance(reason, str) else None
            )
        raise AgentAuthorizationError(capability=cap.name)

    def _construct(
        self, cap: Capability, decoded: Any, model: Any, principal: Any, inv: Invocation
    ) -> Message:
        if cap.to_message is None:
            return decoded
        try:
            built = cap.to_message(decoded, InvocationContext(model, principal, inv))
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

    async def _send(
        self,
        cap: Capability,
        message: Message,
        signal: asyncio.Event | None,
        deadline: float | None,
    ) -> None:
        """Call ``host.dispatch`` and await it if it returns an awaitable."""
        try:
            sent = self.host.dispatch(message)
        except Exception as exc:
            _log.warning("host dispatch of %r raised", cap.name, exc_info=True)
            raise _Sent(1, AgentHostError(capability=cap.name, dispatched=None)) from exc
        if sent is None or not inspect.isawaitable(sent):
            return
        try:
            await self._race(sent, signal, deadline)
        except _Abort:
            raise _Sent(1, AgentCancelledError(capability=cap.name, dispatched=None)) from None
        except _Deadline:
            assert cap.completion is not None
            raise _Sent(
                1,
                AgentCompletionTimeoutError(
                    capability=cap.name, timeout=cap.completion.seconds, dispatched=None
                ),
            ) from None
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            _log.warning("host dispatch of %r raised", cap.name, exc_info=True)
            raise _Sent(1, AgentHostError(capability=cap.name, dispatched=None)) from exc

    async def _send_and_wait(
        self,
        cap: Capability,
        completion: Completion | StateCompletion,
        message: Message,
        decoded: Any,
        inv: Invocation,
    ) -> DispatchResult:
        loop = asyncio.get_running_loop()
        is_state = isinstance(completion, StateCompletion)
        waiter = Waiter(completion, decoded if is_state else message, inv)
        hub: MessageHub | StateHub
        if is_state:
            hub = self._state_hub
            self._ensure_subscribed()
        else:
            hub = self._message_hub
            self._ensure_observing()
        hub.add(waiter)
        try:
            deadline = loop.time() + completion.seconds
            await self._send(cap, message, inv.signal, deadline)
            if is_state and not waiter.future.done():
                self._state_hub.check(waiter, self.host.model())
            try:
                status, result = await self._race(waiter.future, inv.signal, deadline)
            except _Abort:
                raise _Sent(2, AgentCancelledError(capability=cap.name, dispatched=True)) from None
            except _Deadline:
                raise _Sent(
                    2, AgentCompletionTimeoutError(capability=cap.name, timeout=completion.seconds)
                ) from None
            except asyncio.CancelledError:
                raise
            except Exception as exc:
                _log.warning("completion check of %r raised", cap.name, exc_info=True)
                raise _Sent(2, AgentHostError(capability=cap.name, dispatched=True)) from exc
            return DispatchResult(
                cap.name, cap.tag, message, inv, CompletionOutcome(status, result)
            )
        finally:
            hub.remove(waiter)

    def _ensure_observing(self) -> None:
        if self._observing is None:
            observe = host_observe(self.host)
            assert observe is not None  # checked at bind
            self._observing = observe(self._message_hub.on_message)

    def _ensure_subscribed(self) -> None:
        if self._subscribed is None:
            subscribe = host_subscribe(self.host)
            assert subscribe is not None  # checked at bind
            self._subscribed = subscribe(self._state_hub.on_model)

    @staticmethod
    async def _race(
        aw: Awaitable[Any], signal: asyncio.Event | None, deadline: float | None
    ) -> Any:
        """Await ``aw`` unless ``signal`` is set (raise _Abort) or ``deadline`` passes (_Deadline).

        A coroutine that loses the race is cancelled; a plain future is left alone.
        """
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
                raise _Abort
            sig_task = loop.create_task(signal.wait())
            waits.add(sig_task)
        timeout = None if deadline is None else max(0.0, deadline - loop.time())
        try:
            done, _ = await asyncio.wait(
                waits, timeout=timeout, return_when=asyncio.FIRST_COMPLETED
            )
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
            raise _Abort
        raise _Deadline


class _Sent(Exception):
    """Carries an AgentError raised after the host was called, with how far delivery got."""

    def __init__(self, stage: int, error: AgentError) -> None:
        super().__init__(error.message)
        self.stage = stage
        self.error = error


def _holds(cap: Capability, model: Any) -> bool:
    assert cap.available is not None
    try:
        return bool(cap.available(model))
    except Exception:
        _log.warning(
            "available predicate of %r raised; treating it as unavailable", cap.name, exc_info=True
        )
        return False


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
) -> AgentRuntime[Any, Any]:
    """Bind a contract to a live application.

    Args:
        definition: from ``agent.make``.
        host: anything with ``model()`` and ``dispatch(message)``, plus ``observe`` /
            ``subscribe`` when the contract's completions need them (see :mod:`.host`).
        audit: an :func:`~foldkit_agent.audit.audit_log`, or ``None``.
        principal: ``(invocation) -> principal`` (sync or async), deriving the caller from
            ``invocation.credentials``. Required when any capability has ``authorize``.

    Raises:
        AgentContractError: the host lacks ``model``/``dispatch``; a contract with
            ``authorize`` has no principal provider; a Message completion without
            ``host.observe``; a state completion without ``host.subscribe``.
    """
    if not isinstance(definition, AgentDefinition):  # pyright: ignore[reportUnnecessaryIsInstance]
        raise AgentContractError("bind(definition=...) takes the result of agent.make(...)")
    if not callable(getattr(host, "model", None)) or not callable(getattr(host, "dispatch", None)):
        raise AgentContractError("bind(host=...) needs model() and dispatch(message)")
    guarded = [c.name for c in definition.capabilities if c.authorize is not None]
    if guarded and principal is None:
        raise AgentContractError(
            f"{', '.join(guarded)} declare authorize, so bind needs principal= (a provider "
            "reading the caller from invocation.credentials)"
        )
    for cap in definition.capabilities:
        if isinstance(cap.completion, Completion) and host_observe(host) is None:
            raise AgentContractError(
                f"{cap.name!r} completes on a Message, so the host must provide "
                "observe(on_message)",
                capability=cap.name,
            )
        if isinstance(cap.completion, StateCompletion) and host_subscribe(host) is None:
            raise AgentContractError(
                f"{cap.name!r} completes on state, so the host must provide subscribe(on_model)",
                capability=cap.name,
            )
    return AgentRuntime(definition, host, audit, principal)
