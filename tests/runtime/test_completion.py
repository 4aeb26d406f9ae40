"""Completion, cancellation and concurrency (DESIGN §4.8–4.10): F14, F15, F23."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from pydantic import BaseModel

from foldkit_agent import (
    AgentCancelledError,
    AgentCompletionTimeoutError,
    AgentContractError,
    AgentHostError,
    Host,
    Invocation,
    Message,
    agent,
    message_union,
    projection,
    surface,
)
from tests.support.hosts import RecordingHost


class Model(BaseModel, frozen=True):
    name: str = ""
    version: int = 0


class RequestedPlaceOrder(Message):
    item: str
    request_id: str | None = None


class PlacedOrder(Message):
    request_id: str | None = None


class FailedToPlaceOrder(Message):
    request_id: str | None = None
    reason: str = ""


class RequestedRename(Message):
    name: str


class Bumped(Message):
    pass


Msg = message_union(RequestedPlaceOrder, PlacedOrder, FailedToPlaceOrder, RequestedRename, Bumped)
App = surface.application(model=Model, message=Msg)
Name = projection.pick(App.model.name)


class OrderInput(BaseModel):
    item: str


def update(model: Model, msg: Message) -> Model:
    match msg:
        case RequestedRename(name=n):
            return model.model_copy(update={"name": n})
        case Bumped():
            return model.model_copy(update={"version": model.version + 1})
        case _:
            return model


def contract(*, timeout: float = 5.0, correlate: Any = "key", predicate: Any = None) -> Any:
    if correlate == "key":
        correlate = agent.by_invocation_id("request_id")
    return agent.make(
        messages=agent.expose(
            Msg,
            {
                RequestedPlaceOrder: agent.variant(
                    name="place_order",
                    description="Place an order",
                    input=OrderInput,
                    to_message=lambda i, ctx: RequestedPlaceOrder(
                        item=i.item, request_id=ctx.invocation.id
                    ),
                    completion=agent.Completion(
                        success=PlacedOrder,
                        failure=FailedToPlaceOrder,
                        correlate=correlate,
                        timeout=timeout,
                    ),
                ),
                RequestedRename: agent.variant(
                    name="rename",
                    description="Rename",
                    completion=agent.when(
                        projection=Name,
                        predicate=predicate or (lambda v, req: v["name"] == req.name),
                        timeout=timeout,
                    ),
                ),
            },
        )
    )


def setup(**kw: Any) -> tuple[Any, RecordingHost, Any]:
    host = RecordingHost(Model(), update=update)
    audit = agent.audit_log()
    rt = agent.bind(definition=contract(**kw), host=host, audit=audit)
    return rt, host, audit


async def started(host: RecordingHost, count: int = 1) -> list[RequestedPlaceOrder]:
    """Wait (by yielding to the loop) until the host received ``count`` orders."""
    for _ in range(1000):
        orders = [m for m in host.dispatched if isinstance(m, RequestedPlaceOrder)]
        if len(orders) >= count:
            return orders
        await asyncio.sleep(0)
    raise AssertionError("the orders never reached the host")


async def test_completion_waits_for_the_correlated_success_message() -> None:
    rt, host, audit = setup()
    task = asyncio.create_task(rt.messages.dispatch("place_order", {"item": "tea"}))
    (order,) = await started(host)
    assert not task.done()
    host.emit(PlacedOrder(request_id=order.request_id))
    result = await task
    assert result.completion == agent.CompletionOutcome(
        "completed", PlacedOrder(request_id=order.request_id)
    )
    assert result.invocation.id == order.request_id
    assert (audit.entries()[0].decision, audit.entries()[0].outcome) == ("dispatched", "completed")
    assert rt.pending() == 0


async def test_a_failure_message_resolves_as_failed() -> None:
    rt, host, audit = setup()
    task = asyncio.create_task(rt.messages.dispatch("place_order", {"item": "tea"}))
    (order,) = await started(host)
    host.emit(FailedToPlaceOrder(request_id=order.request_id, reason="out of stock"))
    result = await task
    assert result.completion.status == "failed"
    assert result.completion.message.reason == "out of stock"
    assert audit.entries()[0].outcome == "failed"
    summary = agent.summarize(result)
    assert (summary.ok, summary.kind) == (False, "failed")


async def test_a_result_produced_while_the_host_dispatches_is_not_missed() -> None:
    def update_and_answer(model: Model, msg: Message) -> Model:
        return model

    host = RecordingHost(Model(), update=update_and_answer)
    original = host.dispatch

    def dispatch(message: Any) -> None:
        original(message)
        host.emit(PlacedOrder(request_id=message.request_id))  # synchronously, inside dispatch

    host.dispatch = dispatch  # type: ignore[method-assign]
    rt = agent.bind(definition=contract(), host=host)
    result = await rt.messages.dispatch("place_order", {"item": "tea"})
    assert result.completion.status == "completed"


async def test_f14_timeout_says_outcome_unknown_and_the_late_result_reaches_no_other_waiter() -> (
    None
):
    rt, host, audit = setup(timeout=0.1)
    first = asyncio.create_task(rt.messages.dispatch("place_order", {"item": "a"}))
    (late,) = await started(host)
    with pytest.raises(AgentCompletionTimeoutError) as info:
        await first
    assert "unknown" in info.value.message
    assert "failed" not in info.value.message.lower()
    assert info.value.timeout == pytest.approx(0.1)
    assert audit.entries()[-1].decision == "unknown"

    rt2_task = asyncio.create_task(rt.messages.dispatch("place_order", {"item": "b"}))
    await started(host, 2)
    host.emit(PlacedOrder(request_id=late.request_id))  # the late fact of the first call
    await asyncio.sleep(0)
    assert not rt2_task.done()
    second = [m for m in host.dispatched if isinstance(m, RequestedPlaceOrder)][1]
    host.emit(PlacedOrder(request_id=second.request_id))
    assert (await rt2_task).completion.message.request_id == second.request_id
    assert rt.pending() == 0


async def test_overlapping_calls_whose_results_arrive_in_reverse_order_each_get_their_own() -> None:
    rt, host, _ = setup()
    tasks = [
        asyncio.create_task(rt.messages.dispatch("place_order", {"item": str(i)})) for i in range(3)
    ]
    orders = await started(host, 3)
    for order in reversed(orders):
        host.emit(PlacedOrder(request_id=order.request_id))
    results = await asyncio.gather(*tasks)
    for result, order in zip(results, orders, strict=True):
        assert result.message == order
        assert result.completion.message.request_id == order.request_id


async def test_a_predicate_correlate_gets_the_call_and_is_honoured() -> None:
    calls: list[str] = []

    def correlate(request: RequestedPlaceOrder, result: PlacedOrder, call: Any) -> bool:
        calls.append(call.invocation.id)
        return result.request_id == call.invocation.id

    rt, host, _ = setup(correlate=correlate)
    a = asyncio.create_task(rt.messages.dispatch("place_order", {"item": "a"}))
    b = asyncio.create_task(rt.messages.dispatch("place_order", {"item": "b"}))
    oa, ob = await started(host, 2)
    host.emit(PlacedOrder(request_id=ob.request_id))
    host.emit(PlacedOrder(request_id=oa.request_id))
    assert (await a).completion.message.request_id == oa.request_id
    assert (await b).completion.message.request_id == ob.request_id
    assert oa.request_id in calls
    assert ob.request_id in calls


async def test_without_correlate_the_first_matching_message_wins() -> None:
    rt, host, _ = setup(correlate=None)
    a = asyncio.create_task(rt.messages.dispatch("place_order", {"item": "a"}))
    await started(host)
    host.emit(PlacedOrder(request_id="someone-else"))
    assert (await a).completion.message.request_id == "someone-else"


async def test_a_correlate_that_raises_fails_only_that_invocation() -> None:
    def fragile(request: Any, result: Any, call: Any) -> bool:
        if request.item == "bad":
            raise KeyError("x")
        return result.request_id == call.invocation.id

    rt, host, _ = setup(correlate=fragile)
    bad = asyncio.create_task(rt.messages.dispatch("place_order", {"item": "bad"}))
    good = asyncio.create_task(rt.messages.dispatch("place_order", {"item": "good"}))
    _, og = await started(host, 2)
    host.emit(PlacedOrder(request_id=og.request_id))
    with pytest.raises(AgentHostError) as info:
        await bad
    assert info.value.dispatched is True
    assert (await good).completion.status == "completed"


async def test_f15_cancelling_while_waiting_answers_once_and_leaks_nothing() -> None:
    rt, host, audit = setup()
    signal = asyncio.Event()
    task = asyncio.create_task(
        rt.messages.dispatch("place_order", {"item": "a"}, Invocation(signal=signal))
    )
    (order,) = await started(host)
    assert rt.pending() == 1
    signal.set()
    with pytest.raises(AgentCancelledError) as info:
        await task
    assert info.value.dispatched is True
    assert "nothing was rolled back" in info.value.message
    assert rt.pending() == 0
    assert rt._message_hub.count() == 0  # no waiter left behind
    assert [(e.decision, e.outcome) for e in audit.entries()] == [
        ("unknown", "AgentCancelledError")
    ]
    host.emit(
        PlacedOrder(request_id=order.request_id)
    )  # a late result goes nowhere, raises nothing


async def test_cancelling_the_awaiting_task_is_audited_and_re_raised() -> None:
    rt, host, audit = setup()
    task = asyncio.create_task(rt.messages.dispatch("place_order", {"item": "a"}))
    await started(host)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert rt.pending() == 0
    assert rt._message_hub.count() == 0
    assert [(e.decision, e.outcome) for e in audit.entries()] == [
        ("unknown", "AgentCancelledError")
    ]


async def test_a_host_dispatch_that_never_returns_is_bounded_by_the_completion_deadline() -> None:
    never = asyncio.Event()

    async def hang(message: Any) -> None:
        await never.wait()

    host = RecordingHost(Model())
    h = Host(model=host.model, dispatch=hang, observe=host.observe, subscribe=host.subscribe)
    audit = agent.audit_log()
    rt = agent.bind(definition=contract(timeout=0.05), host=h, audit=audit)
    with pytest.raises(AgentCompletionTimeoutError) as info:
        await rt.messages.dispatch("place_order", {"item": "a"})
    assert info.value.dispatched is None
    assert audit.entries()[0].decision == "unknown"
    assert rt.pending() == 0


async def test_without_completion_only_the_signal_bounds_a_hanging_host() -> None:
    class Ping(Message):
        pass

    never = asyncio.Event()

    async def hang(message: Any) -> None:
        await never.wait()

    d = agent.make(messages=agent.expose(message_union(Ping), {Ping: "Ping"}))
    audit = agent.audit_log()
    rt = agent.bind(definition=d, host=Host(model=lambda: Model(), dispatch=hang), audit=audit)
    signal = asyncio.Event()
    task = asyncio.create_task(rt.messages.dispatch("ping", {}, Invocation(signal=signal)))
    await asyncio.sleep(0)
    await asyncio.sleep(0)
    assert not task.done()
    signal.set()
    with pytest.raises(AgentCancelledError) as info:
        await task
    assert info.value.dispatched is None
    assert "unknown" in info.value.message
    assert [(e.decision, e.outcome) for e in audit.entries()] == [
        ("unknown", "AgentCancelledError")
    ]


async def test_bind_refuses_a_message_completion_without_observe() -> None:
    host = RecordingHost(Model())
    with pytest.raises(AgentContractError, match="observe"):
        agent.bind(
            definition=contract(),
            host=Host(model=host.model, dispatch=host.dispatch, subscribe=host.subscribe),
        )


async def test_bind_refuses_a_state_completion_without_subscribe() -> None:
    host = RecordingHost(Model())
    with pytest.raises(AgentContractError, match="subscribe"):
        agent.bind(
            definition=contract(),
            host=Host(model=host.model, dispatch=host.dispatch, observe=host.observe),
        )


async def test_a_state_condition_that_the_update_makes_true_completes() -> None:
    rt, host, audit = setup()
    result = await rt.messages.dispatch("rename", {"name": "Ada"})
    assert result.completion == agent.CompletionOutcome("completed", None)
    assert host.current.name == "Ada"
    assert audit.entries()[0].outcome == "completed"


async def test_a_state_condition_already_true_completes_at_once() -> None:
    rt, host, _ = setup()
    host.current = Model(name="Ada")
    host.update = lambda model, msg: model  # the update changes nothing
    result = await rt.messages.dispatch("rename", {"name": "Ada"})
    assert result.completion.status == "completed"


async def test_a_state_condition_made_true_later_completes_then() -> None:
    rt, host, _ = setup()
    host.update = lambda model, msg: model  # the rename is applied elsewhere, later
    task = asyncio.create_task(rt.messages.dispatch("rename", {"name": "Ada"}))
    await started_any(host)
    host.set_model(Model(name="Bea"))
    await asyncio.sleep(0)
    assert not task.done()
    host.set_model(Model(name="Ada"))
    assert (await task).completion.status == "completed"
    assert rt._state_hub.count() == 0


async def started_any(host: RecordingHost) -> None:
    for _ in range(1000):
        if host.dispatched:
            return
        await asyncio.sleep(0)
    raise AssertionError("nothing reached the host")


async def test_an_unchanged_projected_value_is_not_re_evaluated() -> None:
    evaluated: list[str] = []

    def predicate(value: dict[str, Any], request: Any) -> bool:
        evaluated.append(value["name"])
        return value["name"] == "never"

    rt, host, _ = setup(predicate=predicate, timeout=5)
    host.update = lambda model, msg: model
    task = asyncio.create_task(rt.messages.dispatch("rename", {"name": "x"}))
    await started_any(host)
    await asyncio.sleep(0)
    before = len(evaluated)
    for _ in range(5):
        host.set_model(host.current.model_copy(update={"version": host.current.version + 1}))
    assert len(evaluated) == before  # the name never changed
    host.set_model(Model(name="y"))
    assert len(evaluated) == before + 1
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task


async def test_a_state_predicate_that_raises_fails_only_that_invocation() -> None:
    def predicate(value: dict[str, Any], request: Any) -> bool:
        if request.name == "bad":
            raise ZeroDivisionError
        return value["name"] == request.name

    rt, _host, _ = setup(predicate=predicate)
    with pytest.raises(AgentHostError) as info:
        await rt.messages.dispatch("rename", {"name": "bad"})
    assert info.value.dispatched is True
    assert (await rt.messages.dispatch("rename", {"name": "ok"})).completion.status == "completed"
    assert rt.pending() == 0


async def test_ten_thousand_invocations_in_flight_each_resolve_with_their_own_result() -> None:
    rt, host, _ = setup()
    n = 10_000
    tasks = [
        asyncio.create_task(rt.messages.dispatch("place_order", {"item": str(i)})) for i in range(n)
    ]
    orders = await started(host, n)
    assert rt.pending() == n
    for order in reversed(orders):
        host.emit(PlacedOrder(request_id=order.request_id))
    results = await asyncio.gather(*tasks)
    assert all(r.completion.message.request_id == r.invocation.id for r in results)
    assert len({r.invocation.id for r in results}) == n
    assert rt.pending() == 0
    assert rt._message_hub.count() == 0


async def test_the_todo_example_completes_create_on_the_save() -> None:
    from examples.todo import User, run_todo

    async with run_todo() as (running, rt):
        inv = Invocation(credentials=User(id="alice", can_delete=True))
        result = await rt.messages.dispatch("create_todo", {"title": "Milk"}, inv)
        assert result.completion.status == "completed"
        assert running.model().todos[0].saved is True
        dup = await rt.messages.dispatch("create_todo", {"title": "milk"}, Invocation())
        assert dup.completion.status == "failed"
        renamed = await rt.messages.dispatch(
            "rename_todo", {"id": "todo-1", "title": "Oat milk"}, Invocation()
        )
        assert renamed.completion.status == "completed"
        assert running.model().todos[0].title == "Oat milk"
        assert rt.pending() == 0
