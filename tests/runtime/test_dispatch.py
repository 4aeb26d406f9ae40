"""The five dispatch steps (DESIGN §4.3, §4.6, §4.7, §4.10), F20 and F23 in-process."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from pydantic import BaseModel

from foldkit_agent import (
    AgentAuthorizationError,
    AgentCancelledError,
    AgentCapabilityUnavailableError,
    AgentContractError,
    AgentError,
    AgentHostError,
    AgentInvalidInputError,
    AgentUnknownCapabilityError,
    Invocation,
    Message,
    Program,
    agent,
    message_union,
    projection,
    surface,
)
from tests.support.hosts import RecordingHost

# MODEL


class Model(BaseModel, frozen=True):
    count: int = 0
    selected: str | None = None
    locked: bool = False


# MESSAGE


class Incremented(Message):
    by: int


class Selected(Message):
    id: str


class DeletedSelected(Message):
    id: str


class Locked(Message):
    pass


class Internal(Message):
    pass


Msg = message_union(Incremented, Selected, DeletedSelected, Locked, Internal)
App = surface.application(model=Model, message=Msg)


# UPDATE


def update(model: Model, msg: Message) -> Model:
    match msg:
        case Incremented(by=by):
            return model.model_copy(update={"count": model.count + by})
        case Selected(id=i):
            return model.model_copy(update={"selected": i})
        case DeletedSelected():
            return model.model_copy(update={"selected": None})
        case Locked():
            return model.model_copy(update={"locked": True})
        case _:
            return model


class NoInput(BaseModel):
    pass


def make_contract(log: list[str] | None = None, **hooks: Any) -> Any:
    calls = log if log is not None else []

    def available(model: Model) -> bool:
        calls.append("available")
        return model.selected is not None

    def authorize(request: Any) -> Any:
        calls.append("authorize")
        return hooks.get("verdict", True)

    def to_message(_: NoInput, ctx: Any) -> DeletedSelected:
        calls.append("to_message")
        return DeletedSelected(id=ctx.model.selected)

    builder = agent.for_application(App)
    return builder.make(
        context=projection.pick(App.model.count, App.model.selected),
        messages=builder.expose(
            {
                Incremented: builder.variant(
                    description="Add to the counter",
                    available=lambda m: not m.locked,
                    authorize=hooks.get("inc_authorize"),
                ),
                Selected: "Select an item",
                DeletedSelected: builder.variant(
                    name="delete_selected",
                    description="Delete the selected item",
                    available=available,
                    authorize=authorize,
                    input=NoInput,
                    to_message=to_message,
                ),
                Locked: "Lock the counter",
            }
        ),
    )


def principal(inv: Invocation) -> Any:
    return inv.credentials


def bind(host: Any, contract: Any = None, **kw: Any) -> Any:
    return agent.bind(definition=contract or make_contract(), host=host, principal=principal, **kw)


async def test_dispatch_by_class_tag_and_name_reach_the_same_capability() -> None:
    host = RecordingHost(Model(), update=update)
    rt = bind(host)
    a = await rt.messages.dispatch(Incremented, {"by": 1})
    b = await rt.messages.dispatch("Incremented", {"by": 2})
    c = await rt.messages.dispatch("incremented", {"by": 3})
    assert [r.name for r in (a, b, c)] == ["incremented"] * 3
    assert host.dispatched == [Incremented(by=1), Incremented(by=2), Incremented(by=3)]
    assert host.current.count == 6


async def test_the_five_steps_run_in_order_and_read_the_model_once() -> None:
    log: list[str] = []
    host = RecordingHost(Model(selected="a"), update=update)
    rt = bind(host, make_contract(log))
    host.events.clear()
    result = await rt.messages.dispatch("delete_selected", {}, Invocation(credentials="alice"))
    assert log == ["available", "authorize", "to_message"]
    assert host.events == ["model", "dispatch"]
    assert host.model_reads == 1
    assert result.message == DeletedSelected(id="a")
    assert result.tag == "DeletedSelected"


async def test_an_unknown_capability_never_reads_the_model() -> None:
    host = RecordingHost(Model(), update=update)
    rt = bind(host)
    with pytest.raises(AgentUnknownCapabilityError) as info:
        await rt.messages.dispatch_unknown("delete_todoo", {"id": "1"})
    assert host.model_reads == 0
    assert host.dispatched == []
    assert "delete_todoo" in str(info.value)


async def test_an_unknown_name_is_answered_with_the_closest_capability() -> None:
    rt = bind(RecordingHost(Model(), update=update))
    with pytest.raises(AgentUnknownCapabilityError, match="Did you mean 'delete_selected'"):
        await rt.messages.dispatch("delete_selectd", {})
    with pytest.raises(AgentUnknownCapabilityError) as far:
        await rt.messages.dispatch_unknown("zzzz", {})
    assert "Did you mean" not in str(far.value)


async def test_an_input_model_is_decoded_as_its_json_data() -> None:
    host = RecordingHost(Model(selected="a"), update=update)
    rt = bind(host)
    await rt.messages.dispatch(Incremented, Incremented(by=2))
    await rt.messages.dispatch(DeletedSelected, NoInput(), Invocation(credentials="alice"))
    assert host.dispatched == [Incremented(by=2), DeletedSelected(id="a")]
    with pytest.raises(AgentInvalidInputError, match="'incremented'"):
        await rt.messages.dispatch(Incremented, Selected(id="x"))
    assert len(host.dispatched) == 2


async def test_a_message_that_is_not_exposed_is_unknown() -> None:
    host = RecordingHost(Model(), update=update)
    rt = bind(host)
    with pytest.raises(AgentUnknownCapabilityError):
        await rt.messages.dispatch(Internal, {})
    assert host.model_reads == 0


async def test_tags_do_not_resolve_over_the_wire() -> None:
    rt = bind(RecordingHost(Model(), update=update))
    with pytest.raises(AgentUnknownCapabilityError):
        await rt.messages.dispatch_unknown("Incremented", {"by": 1})


async def test_unavailable_capability_is_refused_before_authorize_runs() -> None:
    log: list[str] = []
    host = RecordingHost(Model(selected=None), update=update)
    rt = bind(host, make_contract(log, verdict=False))
    with pytest.raises(AgentCapabilityUnavailableError) as info:
        await rt.messages.dispatch("delete_selected", {}, Invocation(credentials="mallory"))
    assert log == ["available"]
    assert host.dispatched == []
    assert info.value.capability == "delete_selected"


async def test_invalid_input_is_refused_before_authorize_runs() -> None:
    log: list[str] = []
    host = RecordingHost(Model(selected="a"), update=update)
    rt = bind(host, make_contract(log))
    with pytest.raises(AgentInvalidInputError):
        await rt.messages.dispatch("delete_selected", {"id": "other"})
    assert log == ["available"]
    assert host.dispatched == []


@pytest.mark.parametrize(
    ("verdict", "reason"),
    [
        (False, None),
        (agent.Deny("only owners may delete"), "only owners may delete"),
        ({"allowed": False, "reason": "read-only session"}, "read-only session"),
        ({"allowed": False}, None),
        ("yes", None),  # anything but True refuses
    ],
)
async def test_authorize_refusals_carry_the_hooks_reason(verdict: Any, reason: str | None) -> None:
    host = RecordingHost(Model(selected="a"), update=update)
    rt = bind(host, make_contract(verdict=verdict))
    with pytest.raises(AgentAuthorizationError) as info:
        await rt.messages.dispatch("delete_selected", {}, Invocation(credentials="mallory"))
    assert info.value.reason == reason
    if reason:
        assert reason in info.value.message
    assert host.dispatched == []


async def test_an_async_authorize_is_awaited() -> None:
    async def allow(request: Any) -> Any:
        await asyncio.sleep(0)
        return request.principal == "alice" or agent.Deny("alice only")

    host = RecordingHost(Model(), update=update)
    rt = bind(host, make_contract(inc_authorize=allow))
    await rt.messages.dispatch("incremented", {"by": 1}, Invocation(credentials="alice"))
    with pytest.raises(AgentAuthorizationError, match="alice only"):
        await rt.messages.dispatch("incremented", {"by": 1}, Invocation(credentials="bob"))
    assert host.dispatched == [Incremented(by=1)]


async def test_authorize_sees_principal_input_model_and_transport() -> None:
    seen: list[Any] = []

    def record(request: Any) -> bool:
        seen.append(request)
        return True

    host = RecordingHost(Model(count=4), update=update)
    rt = bind(host, make_contract(inc_authorize=record))
    inv = Invocation(transport="mcp", credentials="alice")
    await rt.messages.dispatch("incremented", {"by": 2}, inv)
    (request,) = seen
    assert (
        request.principal,
        request.input,
        request.model.count,
        request.transport,
        request.invocation,
    ) == (
        "alice",
        Incremented(by=2),
        4,
        "mcp",
        inv,
    )


async def test_a_contract_with_authorize_needs_a_principal_provider_at_bind() -> None:
    with pytest.raises(AgentContractError) as info:
        agent.bind(definition=make_contract(), host=RecordingHost(Model()))
    assert str(info.value).startswith(
        "the capability 'delete_selected' has an authorize hook, so bind needs principal=: "
        "a provider that reads the caller from invocation.credentials"
    )
    with pytest.raises(AgentContractError) as info:
        agent.bind(
            definition=make_contract(inc_authorize=lambda r: True), host=RecordingHost(Model())
        )
    assert str(info.value).startswith(
        "the capabilities 'incremented', 'delete_selected' have authorize hooks, so bind"
    )


async def test_the_principal_comes_from_the_provider_never_from_arguments() -> None:
    seen: list[Any] = []
    host = RecordingHost(Model(), update=update)
    rt = bind(host, make_contract(inc_authorize=lambda r: seen.append(r.principal) or True))
    with pytest.raises(AgentInvalidInputError):
        await rt.messages.dispatch("incremented", {"by": 1, "principal": "admin"})
    await rt.messages.dispatch("incremented", {"by": 1})
    assert seen == [None]


async def test_a_principal_provider_that_raises_fails_closed() -> None:
    def broken(_: Invocation) -> Any:
        raise RuntimeError("session store down")

    host = RecordingHost(Model(), update=update)
    rt = agent.bind(
        definition=make_contract(inc_authorize=lambda r: True), host=host, principal=broken
    )
    with pytest.raises(AgentAuthorizationError) as info:
        await rt.messages.dispatch("incremented", {"by": 1})
    assert "session store" not in info.value.message
    assert host.dispatched == []


async def test_f20_an_available_predicate_that_raises_makes_only_that_capability_unavailable() -> (
    None
):
    def fragile(model: Model) -> bool:
        raise KeyError("boom")

    builder = agent.for_application(App)
    contract = builder.make(
        messages=builder.expose(
            {
                Incremented: builder.variant(description="Add", available=fragile),
                Selected: "Select",
                Locked: "Lock",
            }
        )
    )
    audit = agent.audit_log()
    host = RecordingHost(Model(), update=update)
    rt = agent.bind(definition=contract, host=host, audit=audit)
    assert [c.name for c in rt.messages.available()] == ["selected", "locked"]
    with pytest.raises(AgentCapabilityUnavailableError):
        await rt.messages.dispatch("incremented", {"by": 1})
    assert host.dispatched == []
    (entry,) = audit.entries()
    assert (entry.capability, entry.decision, entry.outcome) == (
        "incremented",
        "refused",
        "AgentCapabilityUnavailableError",
    )


async def test_an_authorize_hook_that_raises_refuses_only_that_invocation() -> None:
    def broken(_: Any) -> bool:
        raise ValueError("internal detail")

    host = RecordingHost(Model(), update=update)
    rt = bind(host, make_contract(inc_authorize=broken))
    with pytest.raises(AgentAuthorizationError) as info:
        await rt.messages.dispatch("incremented", {"by": 1})
    assert "internal detail" not in str(info.value)
    await rt.messages.dispatch("selected", {"id": "x"})
    assert host.dispatched == [Selected(id="x")]


async def test_a_to_message_that_raises_sends_nothing() -> None:
    class In(BaseModel):
        n: int

    def broken(_: In, __: Any) -> Incremented:
        raise RuntimeError("no")

    d = agent.make(
        messages=agent.expose(
            Msg, {Incremented: agent.variant(description="a", input=In, to_message=broken)}
        )
    )
    host = RecordingHost(Model(), update=update)
    rt = agent.bind(definition=d, host=host)
    with pytest.raises(AgentHostError) as info:
        await rt.messages.dispatch("incremented", {"n": 1})
    assert info.value.dispatched is False
    assert host.dispatched == []


async def test_a_to_message_for_another_tag_is_refused_as_a_contract_error() -> None:
    class In(BaseModel):
        n: int

    d = agent.make(
        messages=agent.expose(
            Msg,
            {
                Incremented: agent.variant(
                    description="a", input=In, to_message=lambda i, c: Locked()
                )
            },
        )
    )
    host = RecordingHost(Model(), update=update)
    rt = agent.bind(definition=d, host=host)
    with pytest.raises(AgentContractError, match="'Incremented'"):
        await rt.messages.dispatch("incremented", {"n": 1})
    assert host.dispatched == []


async def test_to_message_may_return_a_payload_for_the_keyed_message() -> None:
    class In(BaseModel):
        n: int

    d = agent.make(
        messages=agent.expose(
            Msg,
            {
                Incremented: agent.variant(
                    description="a", input=In, to_message=lambda i, c: {"by": i.n * 2}
                )
            },
        )
    )
    host = RecordingHost(Model(), update=update)
    rt = agent.bind(definition=d, host=host)
    result = await rt.messages.dispatch("incremented", {"n": 2})
    assert result.message == Incremented(by=4)


async def test_one_snapshot_even_when_the_model_changes_during_authorize() -> None:
    host = RecordingHost(Model(selected="a"), update=update)
    gate = asyncio.Event()

    async def slow(_: Any) -> bool:
        await gate.wait()
        return True

    builder = agent.for_application(App)
    contract = builder.make(
        messages=builder.expose(
            {
                DeletedSelected: builder.variant(
                    name="delete_selected",
                    description="Delete",
                    available=lambda m: m.selected is not None,
                    authorize=slow,
                    input=NoInput,
                    to_message=lambda _, ctx: DeletedSelected(id=ctx.model.selected),
                )
            }
        )
    )
    rt = agent.bind(definition=contract, host=host, principal=principal)
    task = asyncio.create_task(rt.messages.dispatch("delete_selected", {}))
    await asyncio.sleep(0)
    host.set_model(Model(selected=None))  # the user clears the selection meanwhile
    gate.set()
    result = await task
    assert result.message == DeletedSelected(id="a")
    assert host.model_reads == 1


async def test_an_already_cancelled_invocation_never_reads_the_model() -> None:
    host = RecordingHost(Model(), update=update)
    rt = bind(host)
    signal = asyncio.Event()
    signal.set()
    with pytest.raises(AgentCancelledError) as info:
        await rt.messages.dispatch("incremented", {"by": 1}, Invocation(signal=signal))
    assert info.value.dispatched is False
    assert host.model_reads == 0
    assert host.dispatched == []


async def test_cancelled_during_authorize_never_constructs_the_message() -> None:
    built: list[str] = []
    signal = asyncio.Event()
    gate = asyncio.Event()

    async def slow(_: Any) -> bool:
        await gate.wait()
        return True

    class In(BaseModel):
        n: int

    def to_message(i: In, _: Any) -> Incremented:
        built.append("built")
        return Incremented(by=i.n)

    d = agent.make(
        messages=agent.expose(
            Msg,
            {
                Incremented: agent.variant(
                    description="a", input=In, to_message=to_message, authorize=slow
                )
            },
        )
    )
    host = RecordingHost(Model(), update=update)
    rt = agent.bind(definition=d, host=host, principal=principal)
    task = asyncio.create_task(
        rt.messages.dispatch("incremented", {"n": 1}, Invocation(signal=signal))
    )
    await asyncio.sleep(0)
    signal.set()
    with pytest.raises(AgentCancelledError) as info:
        await task
    assert info.value.dispatched is False
    assert built == []
    assert host.dispatched == []
    assert rt.pending() == 0


async def test_f23_n_concurrent_calls_dispatch_exactly_n_messages() -> None:
    program = Program(init=Model(), update=update)
    async with program.run() as running:
        rt = bind(running.host)
        results = await asyncio.gather(
            *(rt.messages.dispatch("incremented", {"by": 1}) for _ in range(10))
        )
        assert len({r.invocation.id for r in results}) == 10
        assert running.model().count == 10
        assert running.applied == 10
        assert rt.pending() == 0


async def test_every_refusal_is_an_agent_error_naming_the_capability() -> None:
    host = RecordingHost(Model(selected=None), update=update)
    rt = bind(host, make_contract(verdict=False))
    calls = [("nope", {}), ("delete_selected", {}), ("incremented", {"by": "x"})]
    for name, payload in calls:
        with pytest.raises(AgentError) as info:
            await rt.messages.dispatch_unknown(name, payload)
        assert info.value.capability == name
        assert name in info.value.message


async def test_available_lists_only_capabilities_whose_predicate_holds() -> None:
    host = RecordingHost(Model(), update=update)
    rt = bind(host)
    assert [c.name for c in rt.messages.available()] == ["incremented", "selected", "locked"]
    await rt.messages.dispatch("selected", {"id": "a"})
    assert [c.name for c in rt.messages.available()] == [
        "incremented",
        "selected",
        "delete_selected",
        "locked",
    ]
    await rt.messages.dispatch("locked", {})
    assert [c.name for c in rt.messages.available()] == ["selected", "delete_selected", "locked"]
    assert [c.name for c in rt.messages.all()] == [
        "incremented",
        "selected",
        "delete_selected",
        "locked",
    ]


async def test_context_is_the_projection_as_json() -> None:
    host = RecordingHost(Model(count=3, selected="z"), update=update)
    rt = bind(host)
    assert rt.context() == {"count": 3, "selected": "z"}


async def test_a_host_dispatch_that_raises_reports_delivery_unknown() -> None:
    class Broken(RecordingHost):
        def dispatch(self, message: Any) -> None:
            raise RuntimeError("db down: password=hunter2")

    audit = agent.audit_log()
    rt = bind(Broken(Model()), audit=audit)
    with pytest.raises(AgentHostError) as info:
        await rt.messages.dispatch("incremented", {"by": 1})
    assert info.value.dispatched is None
    assert "hunter2" not in info.value.message
    assert audit.entries()[0].decision == "unknown"


async def test_to_message_rejecting_the_input_is_an_invalid_input_refusal_naming_the_field() -> (
    None
):
    from examples.todo import run_todo

    async with run_todo() as (running, rt):
        await rt.messages.dispatch("create_todo", {"title": "Milk"})
        with pytest.raises(AgentInvalidInputError) as info:
            await rt.messages.dispatch("select_todo", {"id": "todo-999"})
        assert info.value.issues == [
            {"path": "id", "problem": "no todo has this id; read the context for the ids"}
        ]
        assert info.value.accepted == ["id"]
        assert running.model().selected_todo_id is None
        assert rt.audit is not None
        assert rt.audit.entries()[-1].outcome == "AgentInvalidInputError"
