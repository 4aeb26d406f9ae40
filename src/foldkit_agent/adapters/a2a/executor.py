"""The executor: one capability per A2A task, translated in and out of a call in flight.

Reads the skill from the extension metadata and the input from the one data part, runs the call
through the server's :class:`~foldkit_agent.edge.calls.CallsInFlight` (the signal, the
disconnect relay, the ``WORKING`` beats, parking for a person and the per-caller caps are all
the edge's) and publishes the outcome as task events (:mod:`.publish`; the mapping is in
:mod:`foldkit_agent.adapters.a2a.app`). A call that asks a person leaves its task in
``INPUT_REQUIRED`` (:mod:`.approval`) and counts among its caller's calls waiting for a person,
on every transport together.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from contextlib import suppress
from dataclasses import dataclass, replace
from functools import partial
from typing import Any

from a2a.server.agent_execution import AgentExecutor, RequestContext
from a2a.server.context import ServerCallContext
from a2a.server.events import EventQueue
from a2a.server.tasks import TaskStore, TaskUpdater
from a2a.types import TaskState, TaskStatus
from a2a.utils.errors import InvalidParamsError

from ...contract.calls import Invocation, new_invocation_id
from ...contract.declare import Capability
from ...contract.numbers import integers_from_doubles, outcome_schema
from ...contract.schema import JsonSchema
from ...edge.approvals import ParkedApproval
from ...edge.callers import ANONYMOUS
from ...edge.calls import PARK, CallRequest, CallsInFlight
from ...edge.progress import DEFAULT_PROGRESS_INTERVAL, check_interval
from ...edge.resolve import (
    UNAVAILABLE_TEXT,
    RuntimeUnavailableError,
    audit_refused_call,
)
from ...edge.scopes import insufficient
from ...edge.tenants import PATH_TENANT_KEY, NoTenantError, TenantsFullError
from ...edge.wire import WireError
from ...errors import AgentCancelledError
from ...runtime.bound import AgentRuntime
from ...runtime.outcome import Outcome, refused
from .approval import answer_in, approval_message, approver_name, owner_of
from .auth import CREDENTIALS_KEY, A2ACaller
from .errors import ours
from .publish import (
    agent_message,
    end_early,
    new_task,
    progress_beat,
    publish,
    quietly,
    stored_end,
    unavailable,
)
from .request import idempotency_key, known, skill_name
from .request import payload as message_payload

__all__ = [
    "CapabilityExecutor",
]

_log = logging.getLogger("foldkit_agent.adapters.a2a")

CANCEL_GRACE = 2.0  # seconds cancel() waits for the running call to record its own answer

ORPHANED_TEXT = (
    "This call is not running on this server: the server that ran it stopped before it ended, "
    "so whether its Message was sent is unknown. Nothing was rolled back; read the "
    "application's state before calling again."
)
"""The status text of ``CancelTask`` on a task whose call no longer runs anywhere here."""


@dataclass(slots=True)
class _Run:
    """One task's call on this worker, from ``execute`` until the call ended."""

    signal: asyncio.Event  # tasks/cancel and shutdown abort the call through it
    updater: TaskUpdater
    done: asyncio.Event
    submitted: bool = False  # the task was created (enqueued, or already stored)
    parked: ParkedApproval | None = None  # waiting for a person in INPUT_REQUIRED
    cancelling: bool = False  # tasks/cancel arrived: cancel() records the end
    resumed: bool = False  # a follow-up answered the approval: it publishes the end
    schema: JsonSchema | None = None  # the capability's input schema (an edit's integers)


class CapabilityExecutor(AgentExecutor):
    """The ``AgentExecutor`` that runs one capability per A2A task.

    Reads the skill name from the extension metadata and the input from the one data part,
    restores integers, runs the call as a call in flight (transport ``"a2a"``, invocation id =
    task id, the caller's credentials; :class:`~foldkit_agent.edge.calls.CallsInFlight`) and
    publishes the outcome as task events. Every exception is caught: nothing unexpected
    reaches the SDK, which would echo its text to the caller.

    Protocol: ``a2a.server.agent_execution.AgentExecutor``; a ``Task`` is enqueued before any
    status update, as the SDK requires.

    Args:
        resolve: ``async (call_context) -> AgentRuntime``.
        task_store: where a task whose call ended while nobody waited on it (an approval that
            timed out) records its end.
        progress_interval: seconds between ``WORKING`` updates while a call waits.
        calls: the server's calls in flight and their per-caller caps, shared with every other
            adapter of the server; default one of its own. A call past the cap on calls in
            flight ends as a ``REJECTED`` task whose text names the cap; one past the cap on
            calls waiting for a person is ``REJECTED`` as nobody could be asked.

    Example:
        >>> DefaultRequestHandler(agent_executor=CapabilityExecutor(resolve), ...)
    """

    def __init__(
        self,
        resolve: Callable[[ServerCallContext], Awaitable[AgentRuntime[Any, Any]]],
        task_store: TaskStore | None = None,
        progress_interval: float = DEFAULT_PROGRESS_INTERVAL,
        *,
        calls: CallsInFlight | None = None,
    ) -> None:
        self._resolve = resolve
        self.calls = CallsInFlight() if calls is None else calls
        self._interval = check_interval(progress_interval)
        self._runs: dict[str, _Run] = {}
        self._task_store = task_store
        self._outcome_schemas: dict[str, JsonSchema] = {}

    def outcome_schema(self, name: str) -> JsonSchema | None:
        """The outcome schema of a capability this executor has run (``None`` for any other
        name); :class:`~foldkit_agent.adapters.a2a.numbers.IntegerAnswers` writes the
        integers of its answers along it."""
        return self._outcome_schemas.get(name)

    def waits_for_answer(self, task_id: str) -> bool:
        """Whether the task ``task_id`` is in ``INPUT_REQUIRED`` here, waiting for a person."""
        run = self._runs.get(task_id)
        return run is not None and run.parked is not None and not run.resumed

    async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
        """Run the call ``context`` names and publish its outcome (module docs). Raises
        ``InvalidParamsError``, before any task exists, for no skill named, an unknown skill
        or the input split over more than one data part."""
        task_id = context.task_id or ""
        updater = TaskUpdater(event_queue, task_id, context.context_id or "")
        if self.waits_for_answer(task_id):  # a follow-up answering the person's approval
            return await self._resume(context, updater)
        run = self._runs[task_id] = _Run(asyncio.Event(), updater, asyncio.Event())
        run.submitted = context.current_task is not None
        name: str | None = None
        try:
            name = skill_name(context.metadata, context.message)
            runtime = await self._resolve(context.call_context)
            cap, payload = await self._decoded(runtime, name, context)
            run.schema = cap.input_schema
            if cap.scopes and await self._lacks_scope(runtime, cap, context, event_queue, run):
                return None
            await _submitted(context, event_queue, run)
            got = await self.calls.run(runtime, name, payload, self._request(context, run, cap))
            if isinstance(got, ParkedApproval):
                return await self._park(context, run, got)
            await publish(updater, got)
        except InvalidParamsError as err:
            raise ours(context.call_context, err) from None
        except RuntimeUnavailableError as err:
            await self._unavailable(context, event_queue, run, name, err)
        except Exception:
            _log.exception("A2A call of %r failed unexpectedly", name)
            await end_early(event_queue, updater, context, name, submitted=run.submitted)
        finally:
            if run.parked is None:
                self._ended(task_id, run)

    async def _decoded(
        self, runtime: AgentRuntime[Any, Any], name: str, context: RequestContext
    ) -> tuple[Capability, Any]:
        """The capability named and its input with integers restored; an unknown name is
        audited and refused as invalid params."""
        payload = message_payload(context.message)
        invocation = Invocation(
            id=context.task_id or new_invocation_id(),
            transport="a2a",
            credentials=context.call_context.state.get(CREDENTIALS_KEY),
        )
        cap = await known(runtime, name, payload, invocation)
        if cap.name not in self._outcome_schemas:
            self._outcome_schemas[cap.name] = outcome_schema(cap)
        return cap, integers_from_doubles(payload, cap.input_schema)

    async def _lacks_scope(
        self,
        runtime: AgentRuntime[Any, Any],
        cap: Capability,
        context: RequestContext,
        queue: EventQueue,
        run: _Run,
    ) -> bool:
        """A verified token without the scopes ``cap`` declares: the task is ``REJECTED``
        naming them (the step-up MCP's 403 asks for), audited, nothing run. An anonymous
        caller is left to the capability's own ``authorize`` (no token, no scopes to check,
        as on MCP without bearer tokens)."""
        caller = context.call_context.state.get(CREDENTIALS_KEY)
        if not isinstance(caller, A2ACaller):
            return False
        err = insufficient(cap.name, cap.scopes, caller.scopes, metadata=None)
        if err is None:
            return False
        await end_early(
            queue, run.updater, context, refused(err.text, cap.name), submitted=run.submitted
        )
        invocation = Invocation(id=run.updater.task_id, transport="a2a", credentials=caller)
        await audit_refused_call(runtime, invocation, cap.name, err)
        return True

    def _request(self, context: RequestContext, run: _Run, cap: Capability) -> CallRequest:
        """What this task brings to its call: the caller (its caps and credentials), its
        signal, a person asked across requests, the disconnect watch and the beats."""
        call_context = context.call_context
        return CallRequest(
            "a2a",
            _caller(call_context),
            call_context.state.get(CREDENTIALS_KEY),
            ask=PARK,
            owner=_owner(call_context),
            key=run.updater.task_id,
            id=run.updater.task_id or None,
            scope=call_context.state,
            beat=progress_beat(run.updater, cap, self._interval),
            interval=self._interval,
            signal=run.signal,
            idempotency_key=idempotency_key(context.metadata, context.message),
            reask=True,  # the task can go back to INPUT_REQUIRED with a second question
        )

    async def _park(self, context: RequestContext, run: _Run, parked: ParkedApproval) -> None:
        """The call asks a person: the task waits in ``INPUT_REQUIRED``; what follows is
        published by the follow-up that answers it, recorded by ``tasks/cancel``, or written
        to the store here when the answer came from elsewhere (the console) or none came."""
        self._waiting(run, context.call_context, parked)
        await run.updater.requires_input(approval_message(run.updater, parked.request))

    def _waiting(self, run: _Run, call_context: ServerCallContext, parked: ParkedApproval) -> None:
        """``run`` waits on ``parked``: its next step is written to the store where nobody
        publishes it (:meth:`_told`), and the run ends with the call (:meth:`_next_done`)."""
        run.parked, run.resumed = parked, False
        parked.told.append(partial(self._told, run, call_context))
        if parked.next is not None:
            parked.next.add_done_callback(partial(self._next_done, run))

    async def _resume(self, context: RequestContext, updater: TaskUpdater) -> None:
        """The follow-up on a task in ``INPUT_REQUIRED``: hand the answer over, then finish,
        or ask the next question."""
        call_context = context.call_context
        run = self._runs[updater.task_id]
        approval = answer_in(
            context.message, approver_name(owner_of(call_context, CREDENTIALS_KEY))
        )
        if approval.input is not None and run.schema is not None:
            edited = integers_from_doubles(approval.input, run.schema)
            approval = replace(approval, input=edited)
        run.resumed = True  # before the answer: its next step is published here
        parked = self.calls.answer(updater.task_id, _owner(call_context), None, approval)
        if parked is None:
            run.resumed = False
            # Not this caller's task to answer (the SDK's owner-scoped store normally stops
            # that earlier): leave the task as it is for its own caller.
            raise InvalidParamsError(message="This task is not waiting for your approval.")
        run.updater = updater
        await quietly(updater.start_work())
        got = await self.calls.next_of(parked)
        if isinstance(got, ParkedApproval):
            self._waiting(run, call_context, got)
            await updater.requires_input(approval_message(updater, got.request))
            return
        await publish(updater, got)

    async def _unavailable(
        self,
        context: RequestContext,
        queue: EventQueue,
        run: _Run,
        name: str | None,
        err: RuntimeUnavailableError,
    ) -> None:
        """No runtime serves this call. The request names no tenant (none, or another than
        its path's) or every tenant is busy: ``REJECTED`` before anything ran (logged by
        resolve in one line). Otherwise the resolver broke: a generic failure."""
        if not isinstance(err.__cause__, NoTenantError | TenantsFullError):
            await end_early(queue, run.updater, context, name, submitted=False)
            return
        await end_early(queue, run.updater, context, unavailable(name), submitted=run.submitted)
        if name is not None:
            await self._audit_foreign_tenant(context, name)

    async def _audit_foreign_tenant(self, context: RequestContext, name: str) -> None:
        """A call refused because its body's ``tenant`` names another tenant than its path:
        audit the refusal in the path's tenant (the caller's own), with its principal and the
        task id as invocation id. Any other "no tenant" refusal has no runtime to audit in."""
        call_context = context.call_context
        path = call_context.state.get(PATH_TENANT_KEY)
        claimed = call_context.tenant
        if not isinstance(path, str) or not path or not claimed or claimed == path:
            return
        try:
            own = ServerCallContext(state=call_context.state, user=call_context.user)
            runtime = await self._resolve(own)
            invocation = Invocation(
                id=context.task_id or new_invocation_id(),
                transport="a2a",
                credentials=call_context.state.get(CREDENTIALS_KEY),
            )
            await audit_refused_call(
                runtime, invocation, name, WireError(403, "tenant", UNAVAILABLE_TEXT)
            )
        except Exception:
            _log.debug("could not audit the refusal of task %s", context.task_id, exc_info=True)

    def running(self, task_id: str) -> bool:
        """Whether a call of task ``task_id`` runs (or waits for approval) in this process."""
        return task_id in self._runs

    def _ended(self, task_id: str, run: _Run) -> None:
        run.done.set()
        if self._runs.get(task_id) is run:
            del self._runs[task_id]

    async def _told(
        self, run: _Run, call_context: ServerCallContext, got: Outcome | ParkedApproval
    ) -> None:
        """A parked call's next step after its answer: its end, or its next question. Unless
        a follow-up answered it (it then publishes) or ``tasks/cancel`` records it, write it
        to the store (answered at the console, or the approval timed out): the request that
        parked it has returned, so no event queue is left to publish on. Awaited before the
        step is handed to anyone, so the console's answer comes once ``tasks/get`` shows it."""
        if run.resumed or run.cancelling or self._task_store is None:
            return
        if isinstance(got, ParkedApproval):
            self._waiting(run, call_context, got)
        await self._record(run, call_context, got)

    def _next_done(self, run: _Run, after: asyncio.Future[Any]) -> None:
        """The run ends with its call (not when the call asks again)."""
        stepped = not after.cancelled() and after.exception() is None
        if not stepped or not isinstance(after.result(), ParkedApproval):
            self._ended(run.updater.task_id, run)

    async def settled(self) -> None:
        """Wait until no call is waiting for approval and every recorded end is stored."""
        while waiting := {
            p.next or p.task
            for r in self._runs.values()
            if (p := r.parked) is not None and not (p.next or p.task).done()
        }:
            await asyncio.wait(waiting)

    async def _record(
        self, run: _Run, call_context: ServerCallContext, got: Outcome | ParkedApproval
    ) -> None:
        """Write a waiting task's next state to the store: its end, or ``INPUT_REQUIRED``
        again with the next question."""
        store = self._task_store
        assert store is not None
        task_id = run.updater.task_id
        try:
            task = await store.get(task_id, call_context)
            if task is None or task.status.state != TaskState.TASK_STATE_INPUT_REQUIRED:
                return  # resumed (the follow-up publishes the end) or already ended
            if isinstance(got, ParkedApproval):
                message = approval_message(run.updater, got.request)
                state = TaskState.TASK_STATE_INPUT_REQUIRED
                task.status.CopyFrom(TaskStatus(state=state, message=message))
                task.status.timestamp.GetCurrentTime()
            else:
                stored_end(task, run.updater, got)
            await store.save(task, call_context)
        except Exception:
            _log.warning("could not record the end of task %s", task_id, exc_info=True)

    async def abort_runs(self, grace: float) -> None:
        """Abort every running call (server shutdown) and wait up to ``grace`` seconds for each
        to publish its own answer (``CANCELED``: whether the Message was sent)."""
        runs = list(self._runs.values())
        for run in runs:
            run.signal.set()
        waits = [asyncio.ensure_future(r.done.wait()) for r in runs]
        if waits:
            await asyncio.wait(waits, timeout=grace)
        for wait in waits:
            wait.cancel()

    async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
        """Abort the task's invocation (sets its signal) and record the task as ``CANCELED``.

        The running call answers with the runtime's own cancellation text (whether the Message
        was sent); if it has not answered within a short grace period, a generic cancellation
        is recorded instead.
        """
        task_id = context.task_id or ""
        run = self._runs.get(task_id)
        updater = TaskUpdater(event_queue, task_id, context.context_id or "")
        if run is None:
            # Not finished in the store, yet not running here: the server that ran it stopped
            # (kill -9, a crash) before it ended. Its end is unknown; the CANCELED task is
            # stored without the request's input, as every finished task is.
            data = {"status": "unknown", "message": ORPHANED_TEXT}
            await quietly(updater.cancel(agent_message(updater, ORPHANED_TEXT, data)))
            return
        waiting = self.waits_for_answer(task_id)
        run.cancelling = waiting
        run.signal.set()
        with suppress(TimeoutError):
            await asyncio.wait_for(run.done.wait(), CANCEL_GRACE)
        if waiting:
            # The request that parked it has returned, so the end is recorded here, on this
            # request's queue, with the runtime's own answer.
            text = AgentCancelledError(capability="this capability", dispatched=False).message
            await quietly(updater.cancel(agent_message(updater, text, None)))
            return
        await quietly(
            run.updater.cancel(agent_message(run.updater, "The call was cancelled.", None))
        )


async def _submitted(context: RequestContext, queue: EventQueue, run: _Run) -> None:
    """The task created (the SDK needs it before any status update), then ``WORKING``."""
    if not run.submitted:
        await queue.enqueue_event(
            new_task(run.updater.task_id, run.updater.context_id, context.message)
        )
        run.submitted = True
    await quietly(run.updater.start_work())


def _caller(call_context: ServerCallContext) -> str:
    """Whose caps a call counts against: the authenticated subject, as on every transport
    (:func:`~foldkit_agent.edge.callers.caller_key`), else :data:`ANONYMOUS`."""
    owner = owner_of(call_context, CREDENTIALS_KEY)
    return ANONYMOUS if owner is None else f"principal:{owner}"


def _owner(call_context: ServerCallContext) -> str:
    """Who may answer a task's parked call: its A2A caller (never an identity another
    transport's caller could have)."""
    return f"a2a:{owner_of(call_context, CREDENTIALS_KEY) or ''}"
