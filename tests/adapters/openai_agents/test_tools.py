"""The OpenAI Agents SDK function tools driven by the SDK's own ``Runner``, with a scripted model.

No LLM: the SDK's ``ScriptedModel`` plays the model; each step reads the call the runner made
(the tools it offered, the outputs of earlier tool calls) and answers with tool calls.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from agents import Agent, FunctionTool, RunConfig, Runner
from agents.testing import ModelCall, ModelStep, ScriptedModel, assistant_message, function_call
from pydantic import BaseModel, Field

from examples.todo import run_todo
from foldkit_agent import (
    AgentRuntime,
    Approval,
    ApprovalRequest,
    Message,
    Program,
    agent,
    message_union,
)
from foldkit_agent.adapters.openai_agents import TRANSPORT, tools
from tests.support.inproc import ALICE, BOB, ERRAND, OFFERED_DURING_ERRAND

NO_TRACES = RunConfig(tracing_disabled=True)

Responder = Callable[[ModelCall], Any]


class Script:
    """Scripted model steps that record what the runner offered and sent at each turn."""

    def __init__(self, *steps: Responder) -> None:
        self.offered: list[list[str]] = []
        self.calls: list[ModelCall] = []
        self.model = ScriptedModel([ModelStep.respond(self._wrap(step)) for step in steps])

    def _wrap(self, step: Responder) -> Responder:
        def respond(call: ModelCall) -> Any:
            self.offered.append([t.name for t in call.tools])
            self.calls.append(call)
            return step(call)

        return respond

    def output(self, call_id: str) -> str:
        """What the model was sent as the output of the tool call ``call_id``."""
        for call in self.calls:
            for item in call.input if isinstance(call.input, list) else []:
                if isinstance(item, dict) and item.get("call_id") == call_id and "output" in item:
                    return str(item["output"])
        raise AssertionError(f"no output for {call_id}")


def calls(*pairs: tuple[str, dict[str, Any]]) -> Responder:
    def respond(call: ModelCall) -> Any:
        n = (
            len([i for i in call.input if isinstance(i, dict)])
            if isinstance(call.input, list)
            else 0
        )
        return [
            function_call(name, args, call_id=f"{name}-{n}-{i}")
            for i, (name, args) in enumerate(pairs)
        ]

    return respond


def say(text: str) -> Responder:
    return lambda call: [assistant_message(text)]


def call_ids(script: Script) -> Iterator[str]:
    for call in script.calls:
        for item in call.input if isinstance(call.input, list) else []:
            if isinstance(item, dict) and item.get("type") == "function_call_output":
                yield str(item["call_id"])


async def test_the_tools_enabled_at_each_turn_are_what_is_available_then() -> None:
    script = Script(
        *(calls(step) for step in ERRAND),
        say("done"),
    )
    async with run_todo() as (_running, rt):
        copilot = Agent(name="copilot", model=script.model, tools=tools(rt, credentials=ALICE))
        result = await Runner.run(copilot, "Add milk and select it", run_config=NO_TRACES)
    assert result.final_output == "done"
    assert script.offered == OFFERED_DURING_ERRAND


async def test_an_invalid_input_is_the_tool_output_in_our_words_and_the_model_recovers() -> None:
    def after_refusal(call: ModelCall) -> Any:
        last = call.input[-1] if isinstance(call.input, list) else {}
        if isinstance(last, dict) and str(last.get("output", "")).startswith(
            "Refused: Invalid input"
        ):
            return [function_call("create_todo", {"title": "Milk"}, call_id="retry")]
        return [assistant_message("gave up")]

    script = Script(calls(("create_todo", {"title": ""})), after_refusal, say("done"))
    async with run_todo() as (running, rt):
        copilot = Agent(name="copilot", model=script.model, tools=tools(rt, credentials=ALICE))
        await Runner.run(copilot, "Add milk", run_config=NO_TRACES)
        await running.settled()
        titles = [t.title for t in running.host.model().todos]
    first = next(call_ids(script))
    assert script.output(first) == (
        "Refused: "
        "Invalid input for 'create_todo': title: must not be empty. Accepted fields: title."
    )
    assert json.loads(script.output("retry"))["status"] == "completed"
    assert titles == ["Milk"]


async def test_a_refusal_never_fails_the_run_and_nothing_is_sent() -> None:
    script = Script(
        calls(("create_todo", {"title": "Milk"})),
        calls(("select_todo", {"id": "todo-1"})),
        calls(("delete_todo", {})),
        say("I may not delete it"),
    )
    async with run_todo() as (running, rt):
        copilot = Agent(name="copilot", model=script.model, tools=tools(rt, credentials=BOB))
        result = await Runner.run(copilot, "Delete it", run_config=NO_TRACES)
        todos = running.host.model().todos
    assert result.final_output == "I may not delete it"
    last = list(call_ids(script))[-1]
    assert (
        script.output(last)
        == "Refused: Not authorized to use 'delete_todo': bob may not delete todos"
    )
    assert len(todos) == 1


async def test_the_todo_delete_is_sent_only_after_the_applications_approver_said_yes() -> None:
    asked: list[ApprovalRequest] = []

    async def alice_approves(request: ApprovalRequest) -> Approval:
        asked.append(request)
        return Approval(approved=True, by="alice")

    script = Script(
        calls(("create_todo", {"title": "Milk"})),
        calls(("select_todo", {"id": "todo-1"})),
        calls(("delete_todo", {})),
        say("done"),
    )
    async with run_todo() as (running, rt):
        built = tools(rt, credentials=ALICE, approver=alice_approves)
        copilot = Agent(name="copilot", model=script.model, tools=built)
        await Runner.run(copilot, "Delete milk", run_config=NO_TRACES)
        todos = [t.title for t in running.host.model().todos]
        entry = rt.audit.entries()[-1] if rt.audit else None
    last = list(call_ids(script))[-1]
    assert json.loads(script.output(last))["status"] == "dispatched"
    assert todos == []
    assert [r.capability for r in asked] == ["delete_todo"]
    assert entry is not None
    assert (entry.approval, entry.approved_by) == ("approved", "alice")


async def test_the_audit_shows_openai_agents_as_the_transport() -> None:
    script = Script(calls(("create_todo", {"title": "Milk"})), say("done"))
    async with run_todo() as (_running, rt):
        copilot = Agent(name="copilot", model=script.model, tools=tools(rt, credentials=ALICE))
        await Runner.run(copilot, "x", run_config=NO_TRACES)
        (entry,) = rt.audit.entries()
    assert TRANSPORT == "openai-agents"
    assert (entry.transport, entry.capability, entry.principal) == (
        "openai-agents",
        "create_todo",
        "alice",
    )


async def test_the_principal_comes_from_the_run_context_never_from_the_arguments() -> None:
    script = Script(
        calls(("create_todo", {"title": "Milk"})),
        calls(("select_todo", {"id": "todo-1"})),
        calls(("delete_todo", {"principal": "alice"})),
        calls(("delete_todo", {})),
        say("done"),
    )
    async with run_todo() as (running, rt):
        every = tools(rt, credentials_of=lambda ctx: ctx.context)
        copilot = Agent(name="copilot", model=script.model, tools=every)
        await Runner.run(copilot, "x", context=BOB, run_config=NO_TRACES)
        entries = [(e.capability, e.principal, e.outcome) for e in rt.audit.entries()]
        todos = running.host.model().todos
    assert entries[2:] == [
        ("delete_todo", "bob", "AgentInvalidInputError"),
        ("delete_todo", "bob", "AgentAuthorizationError"),
    ]
    assert len(todos) == 1


async def test_malformed_json_arguments_are_refused_and_audited() -> None:
    def broken(call: ModelCall) -> Any:
        return [function_call("create_todo", '{"title": "a", "title": "b"}', call_id="dup")]

    script = Script(broken, say("done"))
    async with run_todo() as (_running, rt):
        copilot = Agent(name="copilot", model=script.model, tools=tools(rt))
        await Runner.run(copilot, "x", run_config=NO_TRACES)
        (entry,) = rt.audit.entries()
    assert entry.outcome == "AgentInvalidInputError"
    assert script.output("dup").startswith("Refused: Invalid input for 'create_todo'")


async def test_resolve_serves_one_runtime_per_tenant_from_the_run_context() -> None:
    async with run_todo() as (_a, ours), run_todo() as (_b, theirs):
        tenants: dict[str, AgentRuntime[Any, Any]] = {"ours": ours, "theirs": theirs}
        every = tools(
            lambda ctx: tenants[ctx.context], definition=ours.definition, credentials=ALICE
        )
        script = Script(calls(("create_todo", {"title": "Milk"})), say("done"))
        copilot = Agent(name="copilot", model=script.model, tools=every)
        await Runner.run(copilot, "x", context="theirs", run_config=NO_TRACES)
        assert [len(rt.audit.entries()) for rt in (ours, theirs)] == [0, 1]


def test_a_resolve_target_needs_the_contract() -> None:
    with pytest.raises(TypeError, match="definition="):
        tools(lambda ctx: None)
    with pytest.raises(TypeError, match="not both"):
        tools(lambda ctx: None, credentials=ALICE, credentials_of=lambda ctx: ALICE)
    with pytest.raises(TypeError, match="resolve"):
        tools(42)  # type: ignore[arg-type]


# -- strict mode ------------------------------------------------------------------------------


class Item(BaseModel):
    sku: str
    note: str | None = None
    qty: int = 1


class Ordered(Message):
    items: list[Item] = Field(min_length=1)
    gift: bool = False
    message: str | None = Field(default=None, max_length=80, description="For the card")


class Fixed(Message):
    pair: tuple[int, str]


Orders = message_union(Ordered, Fixed)
ORDERS = agent.make(messages=agent.expose(Orders, {Ordered: "Order items", Fixed: "Fixed pair"}))


class OrderModel(BaseModel, frozen=True):
    orders: tuple[Ordered, ...] = ()


def record(model: OrderModel, msg: Message) -> OrderModel:
    if isinstance(msg, Ordered):
        return model.model_copy(update={"orders": (*model.orders, msg)})
    return model


def objects(schema: Any) -> Iterator[dict[str, Any]]:
    if isinstance(schema, dict):
        if schema.get("type") == "object":
            yield schema
        for value in schema.values():
            yield from objects(value)
    elif isinstance(schema, list):
        for value in schema:
            yield from objects(value)


def keywords(schema: Any) -> set[str]:
    if isinstance(schema, dict):
        found = set(schema)
        for key, value in schema.items():
            if key != "properties":
                found |= keywords(value)
            else:
                for prop in value.values():
                    found |= keywords(prop)
        return found
    if isinstance(schema, list):
        return set().union(*(keywords(v) for v in schema)) if schema else set()
    return set()


def test_strict_schemas_require_every_field_and_use_only_what_strict_mode_knows() -> None:
    async_free = agent.bind(definition=ORDERS, host=_NullHost())
    by_name = {t.name: t for t in tools(async_free)}
    ordered = by_name["ordered"]
    assert isinstance(ordered, FunctionTool)
    assert ordered.strict_json_schema
    for obj in objects(ordered.params_json_schema):
        assert obj["additionalProperties"] is False
        assert obj["required"] == list(obj["properties"])
    assert not keywords(ordered.params_json_schema) & {"default", "title", "maxLength", "minLength"}
    props = ordered.params_json_schema["properties"]
    assert props["gift"] == {"anyOf": [{"type": "boolean"}, {"type": "null"}]}
    assert props["message"] == {
        "anyOf": [{"type": "string", "description": "(maxLength=80)"}, {"type": "null"}],
        "description": "For the card",
    }
    assert props["items"]["minItems"] == 1  # strict mode keeps array bounds


def test_a_schema_strict_mode_cannot_express_is_sent_non_strict() -> None:
    by_name = {t.name: t for t in tools(agent.bind(definition=ORDERS, host=_NullHost()))}
    fixed = by_name["fixed"]
    assert not fixed.strict_json_schema
    assert fixed.params_json_schema == ORDERS.by_name["fixed"].input_schema
    assert all(
        not t.strict_json_schema
        for t in tools(agent.bind(definition=ORDERS, host=_NullHost()), strict=False)
    )


async def test_null_for_an_optional_field_means_left_out_so_its_default_applies() -> None:
    args = {
        "items": [{"sku": "a", "note": None, "qty": None}, {"sku": "b", "note": "gift", "qty": 2}],
        "gift": None,
        "message": None,
    }
    script = Script(calls(("ordered", args)), say("done"))
    async with Program(init=OrderModel(), update=record).run() as running:
        rt = agent.bind(definition=ORDERS, host=running.host, audit=agent.audit_log(capacity=10))
        copilot = Agent(name="copilot", model=script.model, tools=tools(rt))
        await Runner.run(copilot, "x", run_config=NO_TRACES)
        await running.settled()
        (order,) = running.host.model().orders
    assert order == Ordered(items=[Item(sku="a"), Item(sku="b", note="gift", qty=2)])


class _NullHost:
    def model(self) -> Any:
        return OrderModel()

    def dispatch(self, message: Any) -> None:
        pass


async def test_a_replayed_tool_call_with_its_key_answers_the_first_outcome_and_runs_once() -> None:
    async with run_todo() as (running, rt):
        every = tools(rt, credentials=ALICE, idempotency_key_of=lambda ctx: ctx.tool_call_id)
        outputs: list[str] = []
        ids: list[str] = []
        for _run in range(2):  # the scripted model gives the call the same id each run
            script = Script(calls(("create_todo", {"title": "Milk"})), say("done"))
            copilot = Agent(name="copilot", model=script.model, tools=every)
            await Runner.run(copilot, "Add milk", run_config=NO_TRACES)
            ids.extend(call_ids(script))
            outputs.append(script.output(ids[-1]))
        outcomes = [e.outcome for e in rt.audit.entries()]
        titles = [t.title for t in running.host.model().todos]
    assert ids[1] == ids[0]
    assert outputs[1] == outputs[0]
    assert json.loads(outputs[0])["status"] == "completed"
    assert outcomes == ["completed", "replayed"]
    assert titles == ["Milk"]
