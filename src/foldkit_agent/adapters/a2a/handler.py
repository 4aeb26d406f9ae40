"""The A2A request handler: the SDK's ``DefaultRequestHandler`` with our checks before it.

A ``SendMessage`` naming no known skill is refused (and audited) before the SDK creates a task
for it; every id a request carries is checked against what the task store can hold
(:mod:`.ids`); a ``CancelTask`` of a task no longer running on this worker says its outcome is
unknown. Refusals are raised as the SDK's errors, marked as ours (:func:`.errors.ours`) so
their text reaches the caller.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any, cast

from a2a.helpers import new_data_part, new_text_part
from a2a.server.context import ServerCallContext
from a2a.server.request_handlers import DefaultRequestHandler
from a2a.server.tasks import TaskStore
from a2a.types import (
    CancelTaskRequest,
    GetTaskRequest,
    ListTasksRequest,
    ListTasksResponse,
    Message,
    Role,
    SendMessageRequest,
    SubscribeToTaskRequest,
    Task,
    TaskState,
)
from a2a.utils.errors import InvalidParamsError
from google.protobuf.json_format import MessageToDict

from ...contract.calls import Invocation, new_invocation_id
from ...runtime.bound import AgentRuntime
from ._sdk import below_required_check, check_required_fields, unfinished_tasks
from .auth import CREDENTIALS_KEY
from .errors import ours
from .executor import ORPHANED_TEXT
from .ids import check_id
from .request import check_message_ids, data_part, known, skill_name, value
from .tasks import without_request_parts

__all__ = ["Handler", "settle"]

_log = logging.getLogger("foldkit_agent.adapters.a2a")


class Handler(DefaultRequestHandler):
    """Refuses a call without a known skill before the SDK creates a task for it.

    Args:
        resolve: ``async (call_context) -> AgentRuntime``, as the executor's.
        **kwargs: the SDK's ``DefaultRequestHandler`` arguments (``agent_executor``,
            ``task_store``, the cards).
    """

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
            if message is not None:
                check_message_ids(message)
            if message is not None and message.task_id:
                executor: Any = self.agent_executor
                if executor.waits_for_answer(message.task_id):
                    return  # an answer to a waiting approval names no skill
            try:
                runtime = await self._resolve_runtime(context)
            except Exception:
                runtime = None  # the call itself reports the failure, as a FAILED task
            skills = () if runtime is None else tuple(runtime.definition.by_name)
            name = skill_name(metadata, message, skills)
            data = data_part(message)
            if runtime is None:
                return
            if name not in runtime.definition.by_name:
                invocation = Invocation(
                    transport="a2a", credentials=context.state.get(CREDENTIALS_KEY)
                )
                given: Any = {} if data is None else value(data)  # only to audit the refusal
                await known(runtime, name, given, invocation)
        except InvalidParamsError as err:
            raise ours(context, err) from None

    async def on_get_task(self, params: GetTaskRequest, context: ServerCallContext) -> Task | None:
        _checked(context, "id", params.id)
        parent: Any = super()
        return cast(Task | None, await parent.on_get_task(params, context))

    async def on_cancel_task(
        self, params: CancelTaskRequest, context: ServerCallContext
    ) -> Task | None:
        _checked(context, "id", params.id)
        executor: Any = self.agent_executor
        here = executor.running(params.id)
        parent: Any = super()
        result = cast(Task | None, await parent.on_cancel_task(params, context))
        if here or result is None or result.status.state != TaskState.TASK_STATE_CANCELED:
            return result
        # Not running on this worker: the SDK recorded CANCELED with no word on the outcome.
        # The server that ran it stopped (kill -9, a crash): say the outcome is unknown.
        result.status.message.CopyFrom(
            Message(
                role=Role.ROLE_AGENT,
                message_id=new_invocation_id(),
                task_id=result.id,
                context_id=result.context_id,
                parts=[
                    new_text_part(ORPHANED_TEXT),
                    new_data_part({"status": "unknown", "message": ORPHANED_TEXT}),
                ],
            )
        )
        try:
            await cast(TaskStore, self.task_store).save(result, context)
        except Exception:
            _log.warning("could not record the cancellation text of task %s", result.id)
        return without_request_parts(result)

    async def on_subscribe_to_task(  # pyright: ignore[reportIncompatibleMethodOverride]
        self, params: SubscribeToTaskRequest, context: ServerCallContext
    ) -> AsyncIterator[Any]:
        _checked(context, "id", params.id)
        parent: Any = super()
        async for event in _relayed(parent.on_subscribe_to_task(params, context)):
            yield event

    async def on_list_tasks(
        self, params: ListTasksRequest, context: ServerCallContext
    ) -> ListTasksResponse:
        if params.context_id:
            _checked(context, "contextId", params.context_id)
        parent: Any = super()
        return cast(ListTasksResponse, await parent.on_list_tasks(params, context))

    async def on_message_send(
        self, params: SendMessageRequest, context: ServerCallContext
    ) -> Message | Task:
        await self._precheck(params, context)
        if _SEND is None:  # the SDK moved its check: let it run its own (slower) walk
            parent: Any = super()
            return cast(Message | Task, await parent.on_message_send(params, context))
        check_required_fields(params)
        return cast(Message | Task, await _SEND(self, params, context))

    async def on_message_send_stream(  # pyright: ignore[reportIncompatibleMethodOverride]
        self, params: SendMessageRequest, context: ServerCallContext
    ) -> AsyncIterator[Any]:
        await self._precheck(params, context)
        if _STREAM is None:
            parent: Any = super()
            events = parent.on_message_send_stream(params, context)
        else:
            check_required_fields(params)
            events = _STREAM(self, params, context)
        async for event in _relayed(events):
            yield event


# The SDK's send methods below its required-field check, which walks every JSON value of a data
# part (see _sdk.check_required_fields, which the two methods above run instead).
_SDK_HANDLER: Any = DefaultRequestHandler
_SEND = below_required_check(_SDK_HANDLER.on_message_send)
_STREAM = below_required_check(_SDK_HANDLER.on_message_send_stream)


async def _relayed(events: Any) -> AsyncIterator[Any]:
    """The SDK's events, closed as the SDK's own wrapper closes them, so its cleanup runs when
    the client goes away mid-stream."""
    stream = cast(AsyncIterator[Any], events)
    try:
        async for event in stream:
            yield event
    finally:
        closing = getattr(stream, "aclose", None)
        if closing is not None:
            await closing()


def _checked(context: ServerCallContext, field: str, value: str) -> None:
    """:func:`~foldkit_agent.adapters.a2a.ids.check_id`, its refusal kept as ours."""
    try:
        check_id(field, value)
    except InvalidParamsError as err:
        raise ours(context, err) from None


async def settle(handler: DefaultRequestHandler, grace: float) -> None:
    """Wait up to ``grace`` seconds for the SDK to deliver the events already published.

    ``aclose`` force-closes its active tasks; one closed before it consumed a task's last
    status update would answer the caller with a task still ``WORKING``.
    """
    waits = [asyncio.ensure_future(e.wait()) for e in unfinished_tasks(handler)]
    if waits:
        await asyncio.wait(waits, timeout=grace)
    for wait in waits:
        wait.cancel()
    await asyncio.sleep(0)  # let the requests waiting on those events write their answers
