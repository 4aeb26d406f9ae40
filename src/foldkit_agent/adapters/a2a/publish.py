"""What a task says: an outcome, a refusal or a sign of life as the SDK's task events.

The mapping of an :class:`~foldkit_agent.runtime.Outcome` onto task states (the table is in
:mod:`foldkit_agent.adapters.a2a.app`): success is ``COMPLETED`` with a ``result`` artifact;
a cancellation ``CANCELED``; a refusal ``REJECTED``; a failure, an unknown outcome or a defect
``FAILED``. Every status message carries the outcome's text and its data as a data part.
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import Awaitable, Mapping
from contextlib import suppress
from typing import Any

from a2a.helpers import new_data_part, new_text_part
from a2a.server.agent_execution import RequestContext
from a2a.server.events import EventQueue
from a2a.server.tasks import TaskUpdater
from a2a.types import Artifact, Message, Part, Task, TaskState, TaskStatus

from ...contract.declare import Capability
from ...edge.progress import Beat, waiting_text
from ...edge.resolve import UNAVAILABLE_TEXT
from ...errors import AgentCancelledError
from ...runtime.outcome import Outcome, defect

__all__ = [
    "agent_message",
    "cancelled",
    "end_early",
    "ended_state",
    "finish",
    "new_task",
    "progress_beat",
    "publish",
    "quietly",
    "stored_end",
    "unavailable",
]

_log = logging.getLogger("foldkit_agent.adapters.a2a")


async def quietly(step: Awaitable[None]) -> None:
    """Run ``step``; a task that already reached a terminal state ignores it."""
    with suppress(RuntimeError):
        await step


def agent_message(updater: TaskUpdater, text: str, data: Mapping[str, Any] | None) -> Message:
    """An agent message of the task: ``text``, and ``data`` as a data part when given."""
    parts: list[Part] = [new_text_part(text)]
    if data is not None:
        parts.append(new_data_part(dict(data)))
    return updater.new_agent_message(parts)


def cancelled(outcome: Outcome) -> bool:
    """Whether ``outcome`` is the runtime's answer to a cancelled call."""
    return outcome.data.get("_tag") == AgentCancelledError.tag


def ended_state(outcome: Outcome) -> TaskState:
    """The terminal state of a task whose call did not succeed."""
    if cancelled(outcome):
        return TaskState.TASK_STATE_CANCELED
    if outcome.kind == "refused":
        return TaskState.TASK_STATE_REJECTED
    return TaskState.TASK_STATE_FAILED  # failed, unknown (timeout, delivery unknown), defect


async def publish(updater: TaskUpdater, outcome: Outcome) -> None:
    """The task's end for ``outcome``: ``COMPLETED`` with a ``result`` artifact, else
    ``CANCELED``, ``REJECTED`` (refused) or ``FAILED`` (failed, outcome unknown, defect)."""
    if outcome.ok:
        await updater.add_artifact([new_data_part(outcome.data)], name="result")
        await updater.complete()
        return
    await finish(updater, ended_state(outcome), outcome)


def stored_end(task: Task, updater: TaskUpdater, outcome: Outcome) -> None:
    """Write :func:`publish`'s end for ``outcome`` into a stored ``task`` (for a call that
    ended while no request of its caller was open to publish it on: answered at the console,
    timed out)."""
    if outcome.ok:
        result = Artifact(
            artifact_id=str(uuid.uuid4()), name="result", parts=[new_data_part(outcome.data)]
        )
        task.artifacts.append(result)
        task.status.CopyFrom(TaskStatus(state=TaskState.TASK_STATE_COMPLETED))
    else:
        message = agent_message(updater, outcome.text, dict(outcome.data))
        task.status.CopyFrom(TaskStatus(state=ended_state(outcome), message=message))
    task.status.timestamp.GetCurrentTime()


async def finish(updater: TaskUpdater, state: TaskState, outcome: Outcome) -> None:
    """End the task in ``state``, saying ``outcome``."""
    message = agent_message(updater, outcome.text, outcome.data)
    await quietly(updater.update_status(state, message=message))


def new_task(task_id: str, context_id: str, message: Message | None) -> Task:
    """A ``SUBMITTED`` task with ``message`` as its first history entry."""
    task = Task(
        id=task_id, context_id=context_id, status=TaskStatus(state=TaskState.TASK_STATE_SUBMITTED)
    )
    if message is not None:
        task.history.append(message)
    return task


def unavailable(capability: str | None) -> Outcome:
    """No runtime serves this caller (no tenant, another tenant's, every tenant busy): the
    call was refused before anything ran."""
    data = {"status": "unavailable", "capability": capability, "message": UNAVAILABLE_TEXT}
    return Outcome(False, "refused", capability, UNAVAILABLE_TEXT, data)


async def end_early(
    queue: EventQueue,
    updater: TaskUpdater,
    context: RequestContext,
    outcome: Outcome | str | None,
    *,
    submitted: bool,
) -> None:
    """End the call's task with ``outcome`` (a capability name or ``None``: ``FAILED`` with
    the generic defect text, the error having been logged), creating the task first when it
    was not ``submitted`` yet."""
    try:
        if not submitted and context.current_task is None:
            task = new_task(updater.task_id, updater.context_id, context.message)
            await queue.enqueue_event(task)
        if isinstance(outcome, Outcome):
            await finish(updater, ended_state(outcome), outcome)
        else:
            await finish(updater, TaskState.TASK_STATE_FAILED, defect(outcome))
    except Exception:
        _log.debug("could not record the end of task %s", updater.task_id, exc_info=True)


def progress_beat(updater: TaskUpdater, cap: Capability, interval: float) -> Beat:
    """A ``WORKING`` status update for a call of ``cap`` that is still waiting.

    It carries a text part (what the call waits for) and a data part
    ``{"waited_seconds", "timeout_seconds"}``; the edge sends none after the call resolved, so
    the terminal state is always the last event.
    """
    total, text = waiting_text(cap, cap.name)

    async def beat(n: int) -> None:
        data = {"waited_seconds": n * interval, "timeout_seconds": total}
        message = agent_message(updater, text, data)
        await updater.update_status(TaskState.TASK_STATE_WORKING, message=message)

    return beat
