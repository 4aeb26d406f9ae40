"""The app behind the conformance suite's fixtures: a Model the suite's calls change.

``@modelcontextprotocol/conformance`` calls tools by fixed names (``test_simple_text``,
``test_tool_with_progress``, ...); here each is one of this app's Messages, and what it answers
comes from the Model or from the Message a Command sends back, as in any other app.
"""

from __future__ import annotations

import asyncio
from typing import Any

from pydantic import BaseModel

from foldkit_agent import Message, message_union, surface

SLOW_WORK = 0.3
"""Seconds the slow work takes: long enough for several signs of life at the suite's
``--progress-interval 0.05``."""


# MODEL


class Address(BaseModel, frozen=True):
    street: str | None = None
    city: str | None = None


class Model(BaseModel, frozen=True):
    texts_asked: int = 0
    work_started: int = 0
    work_finished: int = 0
    failures: int = 0
    last_response: str | None = None
    last_name: str | None = None
    last_address: Address | None = None


# MESSAGE


class AskedForText(Message):
    pass


class StartedSlowWork(Message):
    request_id: str | None = None


class FinishedSlowWork(Message):
    request_id: str | None = None


class RequestedFailingWork(Message):
    request_id: str | None = None


class WorkFailed(Message):
    reason: str
    request_id: str | None = None


class GaveResponse(Message):
    message: str


class SentStructuredInput(Message):
    name: str | None = None
    address: Address | None = None


ConformanceMessage = message_union(
    AskedForText,
    StartedSlowWork,
    FinishedSlowWork,
    RequestedFailingWork,
    WorkFailed,
    GaveResponse,
    SentStructuredInput,
)


# COMMAND


def finish_slow_work(request_id: str | None) -> Any:
    async def run() -> Message:
        await asyncio.sleep(SLOW_WORK)
        return FinishedSlowWork(request_id=request_id)

    return run


def fail_work(request_id: str | None) -> Any:
    async def run() -> Message:
        return WorkFailed(
            reason="This tool intentionally returns an error for testing", request_id=request_id
        )

    return run


# UPDATE


def update(model: Model, message: Message) -> Model | tuple[Model, list[Any]]:
    """The fixtures' transitions: counters, the last input seen, and the two Commands."""
    match message:
        case AskedForText():
            return model.model_copy(update={"texts_asked": model.texts_asked + 1})
        case StartedSlowWork(request_id=request_id):
            started = model.model_copy(update={"work_started": model.work_started + 1})
            return started, [finish_slow_work(request_id)]
        case FinishedSlowWork():
            return model.model_copy(update={"work_finished": model.work_finished + 1})
        case RequestedFailingWork(request_id=request_id):
            return model, [fail_work(request_id)]
        case WorkFailed():
            return model.model_copy(update={"failures": model.failures + 1})
        case GaveResponse(message=text):
            return model.model_copy(update={"last_response": text})
        case SentStructuredInput(name=name, address=address):
            return model.model_copy(update={"last_name": name, "last_address": address})
        case _:
            return model


App = surface.application(model=Model, message=ConformanceMessage, initial=Model(), update=update)
