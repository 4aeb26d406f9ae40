"""The executor: one capability per A2A task, translated in and out of the runtime.

Reads the skill from the extension metadata and the input from the one data part, dispatches
through the bound runtime and publishes the outcome as task events (the mapping is in
:mod:`foldkit_agent.adapters.a2a.app`).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import (
    Awaitable,
    Callable,
    Mapping,
)
from contextlib import suppress
from dataclasses import dataclass
from typing import Any

from a2a.helpers import new_data_part, new_text_part
from a2a.server.agent_execution import AgentExecutor, RequestContext
from a2a.server.context import ServerCallContext
from a2a.server.events import EventQueue
from a2a.server.tasks import TaskStore, TaskUpdater
from a2a.types import (
    Message,
    Part,
    Task,
    TaskState,
    TaskStatus,
)
from a2a.utils.errors import (
    InvalidParamsError,
)

from ...contract.calls import Invocation, new_invocation_id
from ...contract.declare import Capability
from ...contract.numbers import integers_from_doubles, outcome_schema
from ...contract.schema import JsonSchema
from ...edge.approvals import ParkedApprovals
from ...edge.callers import (
    ANONYMOUS,
    DEFAULT_A2A_CALLS,
    DEFAULT_A2A_CALLS_PER_CALLER,
    CapReached,
    Slot,
    Slots,
)
from ...edge.calls import settle as settle_call
from ...edge.calls import start_call
from ...edge.disconnect import abort_when_gone, carries_call, client_gone
from ...edge.progress import DEFAULT_PROGRESS_INTERVAL, Beat, check_interval, waiting_text
from ...edge.resolve import (
    UNAVAILABLE_TEXT,
    RuntimeUnavailableError,
    audit_refusal,
    principal_for_record,
)
from ...edge.tenants import PATH_TENANT_KEY, NoTenantError, TenantsFullError
from ...edge.wire import WireError
from ...errors import AgentCancelledError
from ...runtime.bound import AgentRuntime
from ...runtime.outcome import Outcome, defect
from .approval import answer_in, approval_message, approver_name, owner_of
from .auth import CREDENTIALS_KEY
from .errors import ours
from .request import known, skill_name
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


# ---------------------------------------------------------------------------------------------
# the executor
# ---------------------------------------------------------------------------------------------


@dataclass(slots=True)
class _Run:
    signal: asyncio.Event
    updater: TaskUpdater
    done: asyncio.Event
    cancelling: bool = False  # tasks/cancel arrived: cancel() records the end
    resumed: bool = False  # a follow-up answered the approval: it publishes the end


class CapabilityExecutor(AgentExecutor):
    """The ``AgentExecutor`` that runs one capability per A2A task.

    Reads the skill name from the extension metadata and the input from the one data part,
    restores integers, dispatches through the runtime with an :class:`Invocation` (transport
    ``"a2a"``, id = task id, the task's cancel signal, the caller's credentials) and publishes
    the outcome as task events. Every exception is caught: nothing unexpected reaches the SDK,
    which would echo its text to the caller.

    Protocol: ``a2a.server.agent_execution.AgentExecutor``; a ``Task`` is enqueued before any
    status update, as the SDK requires.

    Args:
        resolve: ``async (call_context) -> AgentRuntime``.
        max_calls_per_caller, max_calls: most calls running at once for one caller (its
            authenticated subject; every anonymous caller together is one) and for all. A
            call past a cap ends as a ``REJECTED`` task whose text names the cap; a call
            holds its place from its start until it ends or parks waiting for a person's
            approval (parked calls have their own caps, :class:`ParkedApprovals`).

    Example:
        >>> DefaultRequestHandler(agent_executor=CapabilityExecutor(resolve), ...)
    """

    def __init__(
        self,
        resolve: Callable[[ServerCallContext], Awaitable[AgentRuntime[Any, Any]]],
        task_store: TaskStore | None = None,
        progress_interval: float = DEFAULT_PROGRESS_INTERVAL,
        *,
        max_calls_per_caller: int = DEFAULT_A2A_CALLS_PER_CALLER,
        max_calls: int = DEFAULT_A2A_CALLS,
    ) -> None:
        self._resolve = resolve
        self.calls = Slots(
            "A2A calls in flight",
            per_caller=max_calls_per_caller,
            total=max_calls,
            advice="Wait for one of your calls to finish (or cancel one) before starting another.",
        )
        self._interval = check_interval(progress_interval)
        self._runs: dict[str, _Run] = {}
        self._task_store = task_store
        self.parked = ParkedApprovals()  # tasks in INPUT_REQUIRED waiting for a person
        self._writes: set[asyncio.Future[Any]] = set()
        self._outcome_schemas: dict[str, JsonSchema] = {}

    def outcome_schema(self, name: str) -> JsonSchema | None:
        """The outcome schema of a capability this executor has run (``None`` for any other
        name); :class:`~foldkit_agent.adapters.a2a.numbers.IntegerAnswers` writes the
        integers of its answers along it."""
        return self._outcome_schemas.get(name)

    def _ran(self, cap: Capability) -> None:
        if cap.name not in self._outcome_schemas:
            self._outcome_schemas[cap.name] = outcome_schema(cap)

    async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
        """Run the call named by ``context`` and publish its outcome (see the module docs).

        Raises:
            InvalidParamsError: no skill named, an unknown skill, or the input split over more
                than one data part (raised before any task is created).
        """
        task_id = context.task_id or ""
        context_id = context.context_id or ""
        updater = TaskUpdater(event_queue, task_id, context_id)
        if task_id in self.parked:  # a follow-up on a task waiting for a person's approval
            await self._resume(context, updater)
            return
        run = _Run(asyncio.Event(), updater, asyncio.Event())
        self._runs[task_id] = run
        started = False
        parked = False
        name: str | None = None
        slot: Slot | None = None
        try:
            message = context.message
            name = skill_name(context.metadata, message)
            payload = message_payload(message)
            runtime = await self._resolve(context.call_context)
            approver, asked = ParkedApprovals.asker()
            invocation = Invocation(
                id=task_id or new_invocation_id(),
                transport="a2a",
                signal=run.signal,
                credentials=context.call_context.state.get(CREDENTIALS_KEY),
                approver=approver,
            )
            cap = await known(runtime, name, payload, invocation)
            self._ran(cap)
            payload = integers_from_doubles(payload, cap.input_schema)
            if context.current_task is None:
                await event_queue.enqueue_event(_new_task(task_id, context_id, message))
            started = True
            try:
                slot = self.calls.take(_caller(context.call_context))
            except CapReached as full:
                audit_refusal(
                    runtime,
                    capability=name,
                    transport="a2a",
                    err=full.err,
                    invocation_id=invocation.id,
                    principal=await principal_for_record(runtime, invocation),
                )
                data = {"code": full.err.code, "message": full.err.text}
                refusal = _agent_message(updater, full.err.text, data)
                await _quietly(
                    updater.update_status(TaskState.TASK_STATE_REJECTED, message=refusal)
                )
                return
            await _quietly(updater.start_work())
            call = start_call(runtime, name, payload, invocation)
            # The client of message/send or message/stream went away before its answer: abort.
            # (A non-blocking send's answer is complete at once, so its call runs on.)
            carries_call(context.call_context.state)  # a drain waits until it is written
            relay = abort_when_gone(client_gone(context.call_context.state), run.signal)
            if relay is not None:
                call.add_done_callback(lambda _done: relay.cancel())
            beat = self._beat(updater, cap)
            outcome = await settle_call(call, run.signal, asked, beat, self._interval)
            slot.release()  # ended or parked (then counted among the approvals), before any answer
            if outcome is None:  # the call asks a person: park it, the task waits for input
                request, answer = asked.result()
                owner = owner_of(context.call_context, CREDENTIALS_KEY)
                if self.parked.park(task_id, name, owner, call, request, answer):
                    parked = True
                    call.add_done_callback(
                        lambda c: self._ended_waiting(task_id, run, context.call_context, c)
                    )
                    await updater.requires_input(approval_message(updater, request))
                    return
                answer.set_exception(self.parked.full(owner))
                outcome = await settle_call(call, run.signal, None, beat, self._interval)
            await self._publish(updater, outcome)
        except InvalidParamsError as err:
            raise ours(context.call_context, err) from None
        except asyncio.CancelledError:
            raise
        except RuntimeUnavailableError as err:
            if not isinstance(err.__cause__, NoTenantError | TenantsFullError):
                # the resolver broke: as for anything unexpected, a generic failure
                await _failed(event_queue, updater, context, name, started=False)
                return
            # the request names no tenant (none, or another than its path's) or every tenant
            # is busy: refused before anything ran (logged by resolve in one line)
            try:
                if not started and context.current_task is None:
                    await event_queue.enqueue_event(_new_task(task_id, context_id, context.message))
                await _finish(updater, TaskState.TASK_STATE_REJECTED, _unavailable(name))
            except Exception:
                _log.debug("could not record the refusal of task %s", task_id, exc_info=True)
            if name is not None:
                await self._audit_foreign_tenant(context, name, task_id)
        except Exception:
            _log.exception("A2A call of %r failed unexpectedly", name)
            await _failed(event_queue, updater, context, name, started=started)
        finally:
            if slot is not None:
                slot.release()
            if not parked:
                run.done.set()
                self._runs.pop(task_id, None)

    async def _audit_foreign_tenant(self, context: RequestContext, name: str, task_id: str) -> None:
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
                id=task_id or new_invocation_id(),
                transport="a2a",
                credentials=call_context.state.get(CREDENTIALS_KEY),
            )
            audit_refusal(
                runtime,
                capability=name,
                transport="a2a",
                err=WireError(403, "tenant", UNAVAILABLE_TEXT),
                invocation_id=invocation.id,
                principal=await principal_for_record(runtime, invocation),
            )
        except Exception:
            _log.debug("could not audit the refusal of task %s", task_id, exc_info=True)

    def running(self, task_id: str) -> bool:
        """Whether a call of task ``task_id`` runs (or waits for approval) in this process."""
        return task_id in self._runs or task_id in self.parked

    async def _resume(self, context: RequestContext, updater: TaskUpdater) -> None:
        """The follow-up on a task in ``INPUT_REQUIRED``: hand the answer over, then finish."""
        task_id = updater.task_id
        call_context = context.call_context
        owner = owner_of(call_context, CREDENTIALS_KEY)
        waiting = self.parked.take(task_id, owner)
        run = self._runs.get(task_id)
        if waiting is None or run is None:
            # Not this caller's task to answer (the SDK's owner-scoped store normally stops
            # that earlier): leave the task as it is for its own caller.
            raise InvalidParamsError(message="This task is not waiting for your approval.")
        run.updater = updater
        run.resumed = True
        waiting.decide(answer_in(context.message, approver_name(owner)))
        await _quietly(updater.start_work())
        await self._publish(updater, await settle_call(waiting.task, run.signal))

    def _ended_waiting(
        self,
        task_id: str,
        run: _Run,
        call_context: ServerCallContext,
        call: asyncio.Future[Any],
    ) -> None:
        """A parked call ended. Unless a follow-up resumed it (it then publishes the end) or
        ``tasks/cancel`` records it, write the task's end (approval timed out) to the store:
        the request that parked it has returned, so no event queue is left to publish on."""
        run.done.set()
        self._runs.pop(task_id, None)
        if run.resumed or run.cancelling or self._task_store is None or call.cancelled():
            return
        self._background(self._record_unanswered(task_id, run, call_context, call.result()))

    async def settled(self) -> None:
        """Wait until no call is waiting for approval and every recorded end is stored."""
        while self.parked.tasks() or self._writes:
            await asyncio.wait({*self.parked.tasks(), *self._writes})

    def _background(self, work: Awaitable[None]) -> None:
        task = asyncio.ensure_future(work)
        self._writes.add(task)
        task.add_done_callback(self._writes.discard)

    async def _record_unanswered(
        self, task_id: str, run: _Run, call_context: ServerCallContext, outcome: Outcome
    ) -> None:
        store = self._task_store
        assert store is not None
        try:
            task = await store.get(task_id, call_context)
            if task is None or task.status.state != TaskState.TASK_STATE_INPUT_REQUIRED:
                return  # resumed (the follow-up publishes the end) or already ended
            state = (
                TaskState.TASK_STATE_CANCELED
                if _cancelled(outcome)
                else TaskState.TASK_STATE_REJECTED
            )
            task.status.CopyFrom(
                TaskStatus(
                    state=state,
                    message=_agent_message(run.updater, outcome.text, dict(outcome.data)),
                )
            )
            task.status.timestamp.GetCurrentTime()
            await store.save(task, call_context)
        except Exception:
            _log.warning("could not record the end of task %s", task_id, exc_info=True)

    def _beat(self, updater: TaskUpdater, cap: Capability) -> Beat:
        """A ``WORKING`` status update for a call of ``cap`` that is still waiting.

        It carries a text part (what the call waits for) and a data part
        ``{"waited_seconds", "timeout_seconds"}``; :func:`~foldkit_agent.edge.calls.settle`
        sends none after the call resolved, so the terminal state is always the last event.
        """
        total, text = waiting_text(cap, cap.name)
        interval = self._interval

        async def beat(n: int) -> None:
            data = {"waited_seconds": n * interval, "timeout_seconds": total}
            message = _agent_message(updater, text, data)
            await updater.update_status(TaskState.TASK_STATE_WORKING, message=message)

        return beat

    async def _publish(self, updater: TaskUpdater, outcome: Outcome | None) -> None:
        """The task's end for ``outcome``: ``COMPLETED`` with a ``result`` artifact, else
        ``CANCELED``, ``REJECTED`` (refused) or ``FAILED`` (failed, outcome unknown, defect)."""
        assert outcome is not None  # settle() without `asked` always has an outcome
        if outcome.ok:
            await updater.add_artifact([new_data_part(outcome.data)], name="result")
            await updater.complete()
            return
        if _cancelled(outcome):
            state = TaskState.TASK_STATE_CANCELED
        elif outcome.kind == "refused":
            state = TaskState.TASK_STATE_REJECTED
        else:  # failed, unknown (timeout, delivery unknown), defect
            state = TaskState.TASK_STATE_FAILED
        await _finish(updater, state, outcome)

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
        run = self._runs.get(context.task_id or "")
        if run is not None and context.task_id in self.parked:
            # Waiting for approval: the request that parked it has returned, so the end is
            # recorded here, on this request's queue, with the runtime's own answer.
            run.cancelling = True
            run.signal.set()
            with suppress(TimeoutError):
                await asyncio.wait_for(run.done.wait(), CANCEL_GRACE)
            updater = TaskUpdater(event_queue, context.task_id or "", context.context_id or "")
            text = AgentCancelledError(capability="this capability", dispatched=False).message
            await _quietly(updater.cancel(_agent_message(updater, text, None)))
            return
        if run is None:
            # Not finished in the store, yet not running here: the server that ran it stopped
            # (kill -9, a crash) before it ended. Its end is unknown; the CANCELED task is
            # stored without the request's input, as every finished task is.
            updater = TaskUpdater(event_queue, context.task_id or "", context.context_id or "")
            data = {"status": "unknown", "message": ORPHANED_TEXT}
            await _quietly(updater.cancel(_agent_message(updater, ORPHANED_TEXT, data)))
            return
        run.signal.set()
        with suppress(TimeoutError):
            await asyncio.wait_for(run.done.wait(), CANCEL_GRACE)
        await _quietly(
            run.updater.cancel(_agent_message(run.updater, "The call was cancelled.", None))
        )


def _caller(call_context: ServerCallContext) -> str:
    """Who holds a call's place: the authenticated subject, else :data:`ANONYMOUS`."""
    owner = owner_of(call_context, CREDENTIALS_KEY)
    return ANONYMOUS if owner is None else f"principal:{owner}"


def _cancelled(outcome: Outcome) -> bool:
    return outcome.data.get("_tag") == AgentCancelledError.tag


async def _quietly(step: Awaitable[None]) -> None:
    with suppress(RuntimeError):  # the task already reached a terminal state
        await step


def _agent_message(updater: TaskUpdater, text: str, data: Mapping[str, Any] | None) -> Message:
    parts: list[Part] = [new_text_part(text)]
    if data is not None:
        parts.append(new_data_part(dict(data)))
    return updater.new_agent_message(parts)


async def _failed(
    queue: EventQueue,
    updater: TaskUpdater,
    context: RequestContext,
    name: str | None,
    *,
    started: bool,
) -> None:
    """End the call's task ``FAILED`` with the generic defect text (the error was logged)."""
    try:
        if not started and context.current_task is None:
            task = _new_task(updater.task_id, updater.context_id, context.message)
            await queue.enqueue_event(task)
        await _finish(updater, TaskState.TASK_STATE_FAILED, defect(name))
    except Exception:
        _log.debug("could not record the failure of task %s", updater.task_id, exc_info=True)


def _unavailable(capability: str | None) -> Outcome:
    """No runtime serves this caller (no tenant, another tenant's, every tenant busy): the
    call was refused before anything ran."""
    data = {"status": "unavailable", "capability": capability, "message": UNAVAILABLE_TEXT}
    return Outcome(False, "refused", capability, UNAVAILABLE_TEXT, data)


async def _finish(updater: TaskUpdater, state: TaskState, outcome: Outcome) -> None:
    message = _agent_message(updater, outcome.text, outcome.data)
    await _quietly(updater.update_status(state, message=message))


def _new_task(task_id: str, context_id: str, message: Message | None) -> Task:
    task = Task(
        id=task_id, context_id=context_id, status=TaskStatus(state=TaskState.TASK_STATE_SUBMITTED)
    )
    if message is not None:
        task.history.append(message)
    return task
