"""Waiting on results (DESIGN §4.8, §4.9; F14, F15): deadlines, late results that reach
nobody, state completions over the Model or an outside source, and aborts that settle a
host that never answers."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from typing import Any

import pytest
from pydantic import BaseModel

from foldkit_agent import (
    AgentCancelledError,
    AgentCompletionTimeoutError,
    AgentHostError,
    Host,
    Invocation,
    Message,
    agent,
    message_union,
    projection,
    surface,
)
from foldkit_agent.app.projection import Projection
from foldkit_agent.runtime.waiting import MAX_ABANDONED
from tests.support.hosts import RecordingHost


class Model(BaseModel, frozen=True):
    titles: tuple[str, ...] = ()
    version: int = 0


class RequestedCreate(Message):
    title: str


class Created(Message):
    title: str


class RequestedRename(Message):
    title: str


class RequestedPublish(Message):
    key: str


Msg = message_union(RequestedCreate, Created, RequestedRename, RequestedPublish)
App = surface.application(model=Model, message=Msg)
Titles = projection.pick(App.model.titles)


def same_title(request: RequestedCreate, result: Created, _call: Any) -> bool:
    return request.title == result.title  # cannot tell two "Milk" calls apart


def create_contract(*, timeout: float | None = None, correlate: Any = same_title) -> Any:
    return agent.make(
        messages=agent.expose(
            Msg,
            {
                RequestedCreate: agent.variant(
                    name="create",
                    description="Create",
                    completion=agent.Completion(
                        success=Created, correlate=correlate, timeout=timeout
                    ),
                )
            },
        )
    )


def rename_contract(*, timeout: float | None = None) -> Any:
    return agent.make(
        messages=agent.expose(
            Msg,
            {
                RequestedRename: agent.variant(
                    name="rename",
                    description="Rename",
                    completion=agent.when(
                        projection=Titles,
                        predicate=lambda v, req: req.title in v["titles"],
                        timeout=timeout,
                    ),
                )
            },
        )
    )


class Published:
    """An outside source (not the Model): a set that is mutated in place."""

    def __init__(self) -> None:
        self.keys: set[str] = set()
        self.callbacks: list[Callable[..., None]] = []
        self.reads = 0
        self.events: list[str] = []

    def get(self) -> set[str]:
        self.reads += 1
        return self.keys

    def subscribe(self, callback: Callable[..., None]) -> Callable[[], None]:
        self.events.append("subscribe")
        self.callbacks.append(callback)
        return lambda: self.callbacks.remove(callback)

    def publish(self, key: str | None = None) -> None:
        if key is not None:
            self.keys.add(key)
        for cb in list(self.callbacks):
            cb()


def publish_contract(source: Published, *, timeout: float | None = None) -> Any:
    return agent.make(
        messages=agent.expose(
            Msg,
            {
                RequestedPublish: agent.variant(
                    name="publish",
                    description="Publish",
                    completion=agent.when(
                        source=source,
                        predicate=lambda keys, req: req.key in keys,
                        timeout=timeout,
                    ),
                )
            },
        )
    )


class ModelOnlyHost:
    """A host with model() and dispatch() only: no subscribe, no observe."""

    def __init__(self, on_dispatch: Callable[[Any], None] | None = None) -> None:
        self.dispatched: list[Any] = []
        self.on_dispatch = on_dispatch

    def model(self) -> Model:
        return Model()

    def dispatch(self, message: Any) -> None:
        self.dispatched.append(message)
        if self.on_dispatch is not None:
            self.on_dispatch(message)


async def reached(host: Any, count: int = 1) -> None:
    for _ in range(1000):
        if len(host.dispatched) >= count:
            return
        await asyncio.sleep(0)
    raise AssertionError("the host was never called")


@pytest.fixture
async def clock() -> AsyncIterator[list[float]]:
    """Shift the running loop's clock forward without waiting (``clock[0] += seconds``)."""
    loop = asyncio.get_running_loop()
    real = loop.time
    offset = [0.0]
    loop.time = lambda: real() + offset[0]  # type: ignore[method-assign]
    try:
        yield offset
    finally:
        loop.time = real  # type: ignore[method-assign]


async def spin() -> None:
    for _ in range(20):
        await asyncio.sleep(0)


# -- deadlines ------------------------------------------------------------------------------


async def test_a_completion_without_a_timeout_gives_up_after_thirty_seconds(
    clock: list[float],
) -> None:
    host = RecordingHost(Model())
    rt = agent.bind(definition=create_contract(), host=host)
    task = asyncio.create_task(rt.messages.dispatch("create", {"title": "Milk"}))
    await reached(host)
    clock[0] += 29.9
    await spin()
    assert not task.done()
    clock[0] += 0.2
    with pytest.raises(AgentCompletionTimeoutError) as info:
        await task
    assert info.value.timeout == 30.0


async def test_a_state_completion_times_out_as_unknown_and_leaves_no_waiter() -> None:
    host = RecordingHost(Model())
    audit = agent.audit_log()
    rt = agent.bind(definition=rename_contract(timeout=0.05), host=host, audit=audit)
    with pytest.raises(AgentCompletionTimeoutError) as info:
        await rt.messages.dispatch("rename", {"title": "never"})
    assert "unknown" in info.value.message
    assert [(e.decision, e.outcome) for e in audit.entries()] == [
        ("unknown", "AgentCompletionTimeoutError")
    ]
    assert rt.state_hub().count() == 0
    assert rt.pending() == 0


async def test_cancelling_a_state_completion_says_it_was_applied_and_leaves_no_waiter() -> None:
    host = RecordingHost(Model())
    audit = agent.audit_log()
    rt = agent.bind(definition=rename_contract(), host=host, audit=audit)
    signal = asyncio.Event()
    task = asyncio.create_task(
        rt.messages.dispatch("rename", {"title": "x"}, Invocation(signal=signal))
    )
    await reached(host)
    signal.set()
    with pytest.raises(AgentCancelledError) as info:
        await task
    assert info.value.dispatched is True
    assert rt.state_hub().count() == 0
    assert audit.entries()[0].decision == "unknown"


async def test_an_abort_settles_a_host_that_never_returns_even_with_a_completion_contract() -> None:
    never = asyncio.Event()
    called = asyncio.Event()

    async def hang(_: Any) -> None:
        called.set()
        await never.wait()

    recording = RecordingHost(Model())
    host = Host(model=recording.model, dispatch=hang, observe=recording.observe)
    audit = agent.audit_log()
    rt = agent.bind(definition=create_contract(), host=host, audit=audit)
    signal = asyncio.Event()
    task = asyncio.create_task(
        rt.messages.dispatch("create", {"title": "Milk"}, Invocation(signal=signal))
    )
    await called.wait()
    signal.set()
    with pytest.raises(AgentCancelledError) as info:
        await task
    assert info.value.dispatched is None  # delivery unknown: the host never answered
    assert [(e.decision, e.outcome) for e in audit.entries()] == [
        ("unknown", "AgentCancelledError")
    ]
    assert rt.pending() == 0


# -- late results ---------------------------------------------------------------------------


async def test_f14_a_late_result_of_a_timed_out_call_goes_to_nobody_when_correlate_cannot_tell_calls_apart() -> (  # noqa: E501
    None
):
    host = RecordingHost(Model())
    rt = agent.bind(definition=create_contract(timeout=0.05), host=host)
    with pytest.raises(AgentCompletionTimeoutError):
        await rt.messages.dispatch("create", {"title": "Milk"})
    second = asyncio.create_task(rt.messages.dispatch("create", {"title": "Milk"}))
    await reached(host, 2)
    host.emit(Created(title="Milk"))  # the first call's late result
    await spin()
    assert not second.done()
    host.emit(Created(title="Milk"))  # the second call's own
    assert (await second).completion.status == "completed"
    assert rt.message_hub().abandoned() == 0


async def test_f15_a_late_result_of_a_cancelled_call_goes_to_nobody() -> None:
    host = RecordingHost(Model())
    rt = agent.bind(definition=create_contract(), host=host)
    signal = asyncio.Event()
    first = asyncio.create_task(
        rt.messages.dispatch("create", {"title": "Milk"}, Invocation(signal=signal))
    )
    await reached(host)
    second = asyncio.create_task(rt.messages.dispatch("create", {"title": "Milk"}))
    await reached(host, 2)
    signal.set()
    with pytest.raises(AgentCancelledError):
        await first
    host.emit(Created(title="Milk"))
    await spin()
    assert not second.done()
    host.emit(Created(title="Milk"))
    assert (await second).completion.status == "completed"


async def test_results_are_matched_in_the_order_the_calls_were_made() -> None:
    host = RecordingHost(Model())
    rt = agent.bind(definition=create_contract(timeout=0.05), host=host)
    with pytest.raises(AgentCompletionTimeoutError):
        await rt.messages.dispatch("create", {"title": "Milk"})
    eggs = asyncio.create_task(rt.messages.dispatch("create", {"title": "Eggs"}))
    await reached(host, 2)
    host.emit(Created(title="Eggs"))  # no abandoned call matches it: delivered
    assert (await eggs).completion.status == "completed"
    assert rt.message_hub().abandoned() == 1  # still waiting to absorb "Milk"


async def test_the_record_of_abandoned_calls_is_bounded() -> None:
    host = RecordingHost(Model())
    rt = agent.bind(definition=create_contract(), host=host)
    hub = rt.message_hub()
    for i in range(MAX_ABANDONED + 10):
        task = asyncio.create_task(rt.messages.dispatch("create", {"title": f"t{i}"}))
        await reached(host, i + 1)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
    assert hub.abandoned() == MAX_ABANDONED
    assert hub.count() == 0


# -- state completions ----------------------------------------------------------------------


async def test_a_source_completion_needs_no_host_subscribe_and_completes_on_notification() -> None:
    source = Published()
    host = ModelOnlyHost()
    rt = agent.bind(definition=publish_contract(source), host=host)  # no subscribe: accepted
    task = asyncio.create_task(rt.messages.dispatch("publish", {"key": "a"}))
    await reached(host)
    await spin()
    assert not task.done()
    source.publish("a")
    result = await task
    assert result.completion == agent.CompletionOutcome("completed", None)
    assert source.callbacks == []  # unsubscribed once nobody waits


async def test_a_source_is_subscribed_before_the_message_is_sent() -> None:
    source = Published()
    host = ModelOnlyHost(on_dispatch=lambda m: source.events.append("dispatch"))
    rt = agent.bind(definition=publish_contract(source, timeout=0.05), host=host)
    with pytest.raises(AgentCompletionTimeoutError):
        await rt.messages.dispatch("publish", {"key": "a"})
    assert source.events == ["subscribe", "dispatch"]


async def test_a_source_change_made_while_sending_is_not_missed() -> None:
    source = Published()
    host = ModelOnlyHost(on_dispatch=lambda m: source.publish(m.key))
    rt = agent.bind(definition=publish_contract(source), host=host)
    result = await rt.messages.dispatch("publish", {"key": "a"})
    assert result.completion == agent.CompletionOutcome("completed", None)


async def test_a_source_condition_already_true_completes_when_waiting_starts() -> None:
    source = Published()
    source.keys.add("a")  # changed silently: no notification will come
    rt = agent.bind(definition=publish_contract(source), host=ModelOnlyHost())
    result = await rt.messages.dispatch("publish", {"key": "a"})
    assert result.completion == agent.CompletionOutcome("completed", None)


async def test_a_source_is_re_evaluated_on_every_notification_even_when_mutated_in_place() -> None:
    source = Published()
    host = ModelOnlyHost()
    rt = agent.bind(definition=publish_contract(source), host=host)
    task = asyncio.create_task(rt.messages.dispatch("publish", {"key": "b"}))
    await reached(host)
    await spin()
    reads = source.reads
    source.publish()
    source.publish()
    assert source.reads == reads + 2  # the same set object each time, read again each time
    source.publish("b")
    assert (await task).completion is not None


async def test_a_source_that_raises_fails_that_call_and_never_the_notifier() -> None:
    source = Published()
    host = ModelOnlyHost()
    rt = agent.bind(definition=publish_contract(source), host=host)
    task = asyncio.create_task(rt.messages.dispatch("publish", {"key": "b"}))
    await reached(host)
    await spin()

    def broken() -> set[str]:
        raise RuntimeError("store offline")

    source.get = broken  # type: ignore[method-assign]
    source.publish()  # does not raise into the source
    with pytest.raises(AgentHostError) as info:
        await task
    assert info.value.dispatched is True


async def test_a_projection_that_raises_fails_the_call_and_never_the_host() -> None:
    def titles(model: Model) -> tuple[str, ...]:
        if model.version:
            raise KeyError("gone")
        return model.titles

    broken = Projection({"titles": tuple[str, ...]}, {"titles": titles}, root=Model)
    completion = agent.when(projection=broken, predicate=lambda v, r: False)
    d = agent.make(
        messages=agent.expose(
            Msg,
            {RequestedRename: agent.variant(description="Rename", completion=completion)},
        )
    )
    host = RecordingHost(Model())
    rt = agent.bind(definition=d, host=host)
    task = asyncio.create_task(rt.messages.dispatch("requested_rename", {"title": "x"}))
    await reached(host)
    await spin()
    host.set_model(Model(version=1))  # the host's notification does not raise
    with pytest.raises(AgentHostError):
        await task
