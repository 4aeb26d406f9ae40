"""The executor: one capability per A2A task, translated in and out of the runtime.

Reads the skill from the extension metadata and the input from the one data part, dispatches
through the bound runtime and publishes the outcome as task events (the mapping is in
:mod:`foldkit_agent.adapters.a2a.app`).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import (
    AsyncIterator,
    Awaitable,
    Callable,
    Mapping,
)
from contextlib import suppress
from dataclasses import dataclass
from typing import Any, cast

from a2a.helpers import new_data_part, new_text_part
from a2a.server.agent_execution import AgentExecutor, RequestContext
from a2a.server.context import ServerCallContext
from a2a.server.events import EventQueue
from a2a.server.request_handlers import DefaultRequestHandler
from a2a.server.tasks import TaskUpdater
from a2a.types import (
    Message,
    Part,
    SendMessageRequest,
    Task,
    TaskState,
    TaskStatus,
)
from a2a.utils.errors import (
    InvalidParamsError,
)
from google.protobuf.json_format import MessageToDict

from ...contract.calls import Invocation, new_invocation_id
from ...contract.declare import Capability
from ...contract.numbers import integers_from_doubles
from ...errors import AgentCancelledError, AgentUnknownCapabilityError
from ...runtime.bound import AgentRuntime
from ...runtime.outcome import Outcome, summarize
from .auth import CREDENTIALS_KEY
from .card import EXTENSION_URI
from .errors import ours

__all__ = [
    "CapabilityExecutor",
]

_log = logging.getLogger("foldkit_agent.adapters.a2a")

CANCEL_GRACE = 2.0  # seconds cancel() waits for the running call to record its own answer
_GENERIC_FAILURE = "The call failed unexpectedly; whether it was applied is unknown."


# ---------------------------------------------------------------------------------------------
# the executor
# ---------------------------------------------------------------------------------------------


@dataclass(slots=True)
class _Run:
    signal: asyncio.Event
    updater: TaskUpdater
    done: asyncio.Event


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

    Example:
        >>> DefaultRequestHandler(agent_executor=CapabilityExecutor(resolve), ...)
    """

    def __init__(
        self, resolve: Callable[[ServerCallContext], Awaitable[AgentRuntime[Any, Any]]]
    ) -> None:
        self._resolve = resolve
        self._runs: dict[str, _Run] = {}

    async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
        """Run the call named by ``context`` and publish its outcome (see the module docs).

        Raises:
            InvalidParamsError: no skill named, an unknown skill, or the input split over more
                than one data part (raised before any task is created).
        """
        task_id = context.task_id or ""
        context_id = context.context_id or ""
        updater = TaskUpdater(event_queue, task_id, context_id)
        run = _Run(asyncio.Event(), updater, asyncio.Event())
        self._runs[task_id] = run
        started = False
        name: str | None = None
        try:
            message = context.message
            name = _skill_name(context.metadata, message)
            payload = _payload(message)
            runtime = await self._resolve(context.call_context)
            invocation = Invocation(
                id=task_id or new_invocation_id(),
                transport="a2a",
                signal=run.signal,
                credentials=context.call_context.state.get(CREDENTIALS_KEY),
            )
            cap = await _known(runtime, name, payload, invocation)
            payload = integers_from_doubles(payload, cap.input_schema)
            if context.current_task is None:
                await event_queue.enqueue_event(_new_task(task_id, context_id, message))
            started = True
            await _quietly(updater.start_work())
            try:
                result: Any = await runtime.messages.dispatch_unknown(name, payload, invocation)
            except asyncio.CancelledError:
                raise
            except Exception as exc:
                result = exc
            await self._publish(updater, result, name)
        except InvalidParamsError as err:
            raise ours(context.call_context, err) from None
        except asyncio.CancelledError:
            raise
        except Exception:
            _log.exception("A2A call of %r failed unexpectedly", name)
            try:
                if not started and context.current_task is None:
                    await event_queue.enqueue_event(_new_task(task_id, context_id, context.message))
                await _finish(
                    updater, TaskState.TASK_STATE_FAILED, summarize(RuntimeError(), capability=name)
                )
            except Exception:
                _log.debug("could not record the failure of task %s", task_id, exc_info=True)
        finally:
            run.done.set()
            self._runs.pop(task_id, None)

    async def _publish(self, updater: TaskUpdater, result: Any, name: str) -> None:
        outcome = summarize(result, capability=name)
        if outcome.ok:
            await updater.add_artifact([new_data_part(outcome.data)], name="result")
            await updater.complete()
            return
        if isinstance(result, AgentCancelledError):
            state = TaskState.TASK_STATE_CANCELED
        elif outcome.kind == "refused":
            state = TaskState.TASK_STATE_REJECTED
        else:  # failed, unknown (timeout, delivery unknown), defect
            state = TaskState.TASK_STATE_FAILED
            if outcome.kind == "defect" and isinstance(result, BaseException):
                _log.error("capability %r raised", name, exc_info=result)
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
        if run is None:
            updater = TaskUpdater(event_queue, context.task_id or "", context.context_id or "")
            await _quietly(updater.cancel(_agent_message(updater, "The call was cancelled.", None)))
            return
        run.signal.set()
        with suppress(TimeoutError):
            await asyncio.wait_for(run.done.wait(), CANCEL_GRACE)
        await _quietly(
            run.updater.cancel(_agent_message(run.updater, "The call was cancelled.", None))
        )


async def settle(handler: DefaultRequestHandler, grace: float) -> None:
    """Wait up to ``grace`` seconds for the SDK to deliver the events already published.

    ``aclose`` force-closes its active tasks; one closed before it consumed a task's last
    status update would answer the caller with a task still ``WORKING``. The registry has no
    public accessor in a2a-sdk 1.3, hence the guarded private reads.
    """
    registry = getattr(handler, "_active_task_registry", None)
    active: Any = getattr(registry, "_active_tasks", None)
    if not isinstance(active, dict):
        return
    events = [getattr(t, "_is_finished", None) for t in cast(dict[str, Any], active).values()]
    waits = [asyncio.ensure_future(e.wait()) for e in events if isinstance(e, asyncio.Event)]
    if waits:
        await asyncio.wait(waits, timeout=grace)
    for wait in waits:
        wait.cancel()
    await asyncio.sleep(0)  # let the requests waiting on those events write their answers


async def _quietly(step: Awaitable[None]) -> None:
    with suppress(RuntimeError):  # the task already reached a terminal state
        await step


def _agent_message(updater: TaskUpdater, text: str, data: Mapping[str, Any] | None) -> Message:
    parts: list[Part] = [new_text_part(text)]
    if data is not None:
        parts.append(new_data_part(dict(data)))
    return updater.new_agent_message(parts)


async def _finish(updater: TaskUpdater, state: TaskState, outcome: Outcome) -> None:
    text = _GENERIC_FAILURE if outcome.kind == "defect" else outcome.text
    data = dict(outcome.data)
    if outcome.kind == "defect":
        data["message"] = text
    await _quietly(updater.update_status(state, message=_agent_message(updater, text, data)))


def _new_task(task_id: str, context_id: str, message: Message | None) -> Task:
    task = Task(
        id=task_id, context_id=context_id, status=TaskStatus(state=TaskState.TASK_STATE_SUBMITTED)
    )
    if message is not None:
        task.history.append(message)
    return task


async def _known(
    runtime: AgentRuntime[Any, Any], name: str, payload: Any, invocation: Invocation
) -> Capability:
    """The capability named ``name``; an unknown name is audited and raised as invalid params."""
    cap = runtime.definition.by_name.get(name)
    if cap is not None:
        return cap
    with suppress(AgentUnknownCapabilityError):
        await runtime.messages.dispatch_unknown(name, payload, invocation)
    raise InvalidParamsError(
        message=(
            f"There is no skill named {name!r}. Fetch the agent card (or the extended card) and "
            "use the id of one of its skills."
        )
    )


class Handler(DefaultRequestHandler):
    """Refuses a call without a known skill before the SDK creates a task for it."""

    def __init__(
        self,
        *,
        resolve: Callable[[ServerCallContext], Awaitable[AgentRuntime[Any, Any]]],
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        self._resolve_runtime = resolve

    async def _precheck(self, params: SendMessageRequest, context: ServerCallContext) -> None:
        try:
            metadata = MessageToDict(params.metadata) if params.HasField("metadata") else {}
            message = params.message if params.HasField("message") else None
            name = _skill_name(metadata, message)
            payload = _payload(message)
            try:
                runtime = await self._resolve_runtime(context)
            except Exception:
                return  # the call itself reports the failure, as a FAILED task (generic text)
            if name not in runtime.definition.by_name:
                invocation = Invocation(
                    transport="a2a", credentials=context.state.get(CREDENTIALS_KEY)
                )
                await _known(runtime, name, payload, invocation)
        except InvalidParamsError as err:
            raise ours(context, err) from None

    async def on_message_send(
        self, params: SendMessageRequest, context: ServerCallContext
    ) -> Message | Task:
        await self._precheck(params, context)
        parent: Any = super()
        return cast(Message | Task, await parent.on_message_send(params, context))

    async def on_message_send_stream(  # pyright: ignore[reportIncompatibleMethodOverride]
        self, params: SendMessageRequest, context: ServerCallContext
    ) -> AsyncIterator[Any]:
        await self._precheck(params, context)
        parent: Any = super()
        events = cast(AsyncIterator[Any], parent.on_message_send_stream(params, context))
        async for event in events:
            yield event


def _skill_name(metadata: Mapping[str, Any], message: Message | None) -> str:
    """The skill named in request metadata, else in message metadata."""
    sources: list[Any] = [metadata.get(EXTENSION_URI)]
    if message is not None and message.HasField("metadata"):
        sources.append(MessageToDict(message.metadata).get(EXTENSION_URI))
    for entry in sources:
        if isinstance(entry, Mapping):
            skill = cast(Mapping[str, Any], entry).get("skill")
            if isinstance(skill, str) and skill:
                return skill[:200]
            if skill is not None:
                raise InvalidParamsError(message="The skill must be named by its id, a string.")
    raise InvalidParamsError(
        message=(
            f'Name the skill to run: set metadata[{EXTENSION_URI!r}] = {{"skill": <skill id>}} '
            "on the request or the message, and send the input as one data part."
        )
    )


def _payload(message: Message | None) -> Any:
    """The one data part's value, ``{}`` without one."""
    if message is None:
        return {}
    data = [_value(p) for p in message.parts if p.HasField("data")]
    if len(data) > 1:
        raise InvalidParamsError(message="Send the skill's input as exactly one data part.")
    return data[0] if data else {}


def _value(part: Part) -> Any:
    # MessageToDict on a non-struct Value returns the plain value (list, str, float, ...).
    return cast(Any, MessageToDict(part.data))
