"""The pydantic-ai toolset driven by pydantic-ai's own agent loop, with scripted models.

No LLM: ``FunctionModel`` plays the model (it reads what pydantic-ai sends it and answers with
tool calls), and ``TestModel`` calls every tool it is offered.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from pydantic_ai import Agent, ToolReturnPart, UnexpectedModelBehavior
from pydantic_ai.messages import ModelMessage, ModelRequest, ModelResponse, TextPart, ToolCallPart
from pydantic_ai.models.function import AgentInfo, FunctionModel
from pydantic_ai.models.test import TestModel
from pydantic_ai.tool_manager import ToolManager

from examples.todo import User, run_todo
from foldkit_agent import (
    AgentCapabilityUnavailableError,
    AgentRuntime,
    Approval,
    ApprovalRequest,
    Message,
    agent,
    message_union,
)
from foldkit_agent.adapters.pydantic_ai import TRANSPORT, FoldkitToolset, toolset
from foldkit_agent.edge import RuntimeUnavailableError
from foldkit_agent.runtime.outcome import DEFECT_TEXT
from tests.support.inproc import ALICE, BOB, ERRAND, OFFERED_DURING_ERRAND

Step = Callable[[ModelRequest], ModelResponse]


class Script:
    """A FunctionModel's function: one step per model request, recording what was offered."""

    def __init__(self, *steps: Step) -> None:
        self.steps = list(steps)
        self.offered: list[list[str]] = []
        self.read: list[ModelRequest] = []

    def __call__(self, messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        self.offered.append([t.name for t in info.function_tools])
        request = messages[-1]
        assert isinstance(request, ModelRequest)
        self.read.append(request)
        return self.steps.pop(0)(request)

    def model(self) -> FunctionModel:
        return FunctionModel(self)


def calls(*pairs: tuple[str, dict[str, Any]]) -> Step:
    return lambda _request: ModelResponse(
        parts=[
            ToolCallPart(name, args, tool_call_id=f"call-{i}")
            for i, (name, args) in enumerate(pairs)
        ]
    )


def say(text: str) -> Step:
    return lambda _request: ModelResponse(parts=[TextPart(text)])


def returned(request: ModelRequest) -> list[ToolReturnPart]:
    return [p for p in request.parts if isinstance(p, ToolReturnPart)]


async def test_the_tools_offered_at_each_step_are_what_is_available_then() -> None:
    script = Script(
        *(calls(step) for step in ERRAND),
        say("done"),
    )
    async with run_todo() as (_running, rt):
        copilot = Agent(script.model(), toolsets=[toolset(rt, credentials=ALICE)])
        result = await copilot.run("Add milk and select it")
    assert result.output == "done"
    assert script.offered == OFFERED_DURING_ERRAND


async def test_each_tool_carries_the_capability_description_and_enforced_schema() -> None:
    async with run_todo() as (_running, rt):
        captured: list[AgentInfo] = []

        def model(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
            captured.append(info)
            return ModelResponse(parts=[TextPart("ok")])

        await Agent(FunctionModel(model), toolsets=[toolset(rt)]).run("hi")
        cap = rt.definition.by_name["create_todo"]
    (tool,) = captured[0].function_tools
    assert (tool.name, tool.description) == ("create_todo", cap.description)
    assert tool.parameters_json_schema == cap.input_schema


async def test_invalid_input_is_a_retry_in_our_words_and_the_model_recovers() -> None:
    def after_refusal(request: ModelRequest) -> ModelResponse:
        (part,) = returned(request)
        if part.outcome == "retried" and "title" in str(part.content):
            return ModelResponse(parts=[ToolCallPart("create_todo", {"title": "Milk"})])
        return ModelResponse(parts=[TextPart("gave up")])

    script = Script(calls(("create_todo", {"title": ""})), after_refusal, say("done"))
    async with run_todo() as (running, rt):
        await Agent(script.model(), toolsets=[toolset(rt, credentials=ALICE)]).run("Add milk")
        await running.settled()
        titles = [t.title for t in running.host.model().todos]
        entries = [(e.capability, e.decision, e.outcome) for e in rt.audit.entries()]
    (refusal,) = returned(script.read[1])
    assert refusal.outcome == "retried"
    assert refusal.content == (
        "Refused: "
        "Invalid input for 'create_todo': title: must not be empty. Accepted fields: title."
    )
    assert titles == ["Milk"]
    assert entries == [
        ("create_todo", "refused", "AgentInvalidInputError"),
        ("create_todo", "dispatched", "completed"),
    ]


async def test_a_capability_that_became_unavailable_within_a_step_is_refused_in_our_words() -> None:
    script = Script(
        calls(("create_todo", {"title": "Milk"})),
        calls(("select_todo", {"id": "todo-1"})),
        # both listed at this step; the first makes the second unavailable
        calls(("clear_selection", {}), ("delete_todo", {})),
        say("done"),
    )
    async with run_todo() as (running, rt):
        copilot = Agent(script.model(), toolsets=[toolset(rt, credentials=ALICE)])
        with ToolManager.parallel_execution_mode("sequential"):
            await copilot.run("Clear the selection, then delete")
        todos = running.host.model().todos
    cleared, refused = returned(script.read[3])
    assert cleared.outcome == "success"
    assert refused.outcome == "retried"
    assert refused.content == "Refused: " + (
        AgentCapabilityUnavailableError(capability="delete_todo").message
    )
    assert [t.id for t in todos] == ["todo-1"]


async def test_an_unauthorized_call_is_a_tool_failure_the_run_survives() -> None:
    script = Script(
        calls(("create_todo", {"title": "Milk"})),
        calls(("select_todo", {"id": "todo-1"})),
        calls(("delete_todo", {})),
        calls(("delete_todo", {})),  # a retry would exhaust the budget; a failure does not
        say("I may not delete it"),
    )
    async with run_todo() as (running, rt):
        result = await Agent(script.model(), toolsets=[toolset(rt, credentials=BOB)]).run("x")
        todos = running.host.model().todos
    assert result.output == "I may not delete it"
    for request in script.read[3:5]:
        (failure,) = returned(request)
        assert failure.outcome == "failed"
        assert (
            failure.content
            == "Refused: Not authorized to use 'delete_todo': bob may not delete todos"
        )
    assert [t.id for t in todos] == ["todo-1"]


async def test_retries_past_max_retries_end_the_run() -> None:
    script = Script(*(calls(("create_todo", {"title": ""})) for _ in range(3)))
    async with run_todo() as (_running, rt):
        copilot = Agent(script.model(), toolsets=[toolset(rt, max_retries=1)])
        with pytest.raises(UnexpectedModelBehavior, match="create_todo"):
            await copilot.run("x")
        assert [e.outcome for e in rt.audit.entries()] == ["AgentInvalidInputError"] * 2


async def test_the_audit_shows_pydantic_ai_as_the_transport_and_the_given_principal() -> None:
    script = Script(calls(("create_todo", {"title": "Milk"})), say("done"))
    async with run_todo() as (_running, rt):
        await Agent(script.model(), toolsets=[toolset(rt, credentials=ALICE)]).run("x")
        (entry,) = rt.audit.entries()
    assert TRANSPORT == "pydantic-ai"
    assert (entry.transport, entry.capability, entry.principal) == (
        "pydantic-ai",
        "create_todo",
        "alice",
    )


async def test_the_principal_never_comes_from_the_models_arguments() -> None:
    claims = {"principal": "alice", "credentials": {"id": "alice", "can_delete": True}}
    script = Script(
        calls(("create_todo", {"title": "Milk"})),
        calls(("select_todo", {"id": "todo-1"})),
        calls(("delete_todo", claims)),
        calls(("delete_todo", {})),
        say("done"),
    )
    async with run_todo() as (running, rt):
        copilot = Agent(
            script.model(),
            deps_type=User,
            toolsets=[toolset(rt, credentials_of=lambda ctx: ctx.deps)],
        )
        await copilot.run("x", deps=BOB)
        todos = running.host.model().todos
        entries = [(e.capability, e.principal, e.outcome) for e in rt.audit.entries()]
    (claimed,) = returned(script.read[3])
    assert claimed.content == (
        "Refused: "
        "Invalid input for 'delete_todo': principal: unexpected field; credentials: unexpected "
        "field. Accepted fields: none (send {})."
    )
    assert entries[2:] == [
        ("delete_todo", "bob", "AgentInvalidInputError"),
        ("delete_todo", "bob", "AgentAuthorizationError"),
    ]
    assert [t.id for t in todos] == ["todo-1"]


async def test_credentials_of_reads_each_run_deps() -> None:
    async with run_todo() as (_running, rt):
        tools = toolset(rt, credentials_of=lambda ctx: ctx.deps)
        for user in (ALICE, BOB):
            script = Script(calls(("create_todo", {"title": f"for {user.id}"})), say("done"))
            await Agent(script.model(), deps_type=User, toolsets=[tools]).run("x", deps=user)
        assert [e.principal for e in rt.audit.entries()] == ["alice", "bob"]


async def test_without_a_principal_a_guarded_capability_fails_closed() -> None:
    script = Script(
        calls(("create_todo", {"title": "Milk"})),
        calls(("select_todo", {"id": "todo-1"})),
        calls(("delete_todo", {})),
        say("done"),
    )
    async with run_todo() as (running, rt):
        await Agent(script.model(), toolsets=[toolset(rt)]).run("x")
        todos = running.host.model().todos
    (failure,) = returned(script.read[3])
    assert (
        failure.content == "Refused: Not authorized to use 'delete_todo': sign in to delete todos"
    )
    assert len(todos) == 1


async def test_resolve_serves_one_runtime_per_tenant_from_the_run_deps() -> None:
    async with run_todo() as (_a, ours), run_todo() as (_b, theirs):
        tenants: dict[str, AgentRuntime[Any, Any]] = {"ours": ours, "theirs": theirs}
        tools = toolset(lambda ctx: tenants[ctx.deps], credentials=ALICE)
        script = Script(calls(("create_todo", {"title": "Milk"})), say("done"))
        await Agent(script.model(), deps_type=str, toolsets=[tools]).run("x", deps="theirs")
        assert [len(rt.audit.entries()) for rt in (ours, theirs)] == [0, 1]


async def test_a_resolve_that_returns_no_runtime_is_an_application_error() -> None:
    tools = toolset(lambda ctx: None)
    with pytest.raises(RuntimeUnavailableError, match="not available"):
        await Agent(TestModel(), toolsets=[tools]).run("x")


def test_a_target_must_be_a_runtime_or_a_callable() -> None:
    with pytest.raises(TypeError, match="resolve"):
        toolset(42)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="not both"):
        toolset(lambda ctx: None, credentials=ALICE, credentials_of=lambda ctx: ALICE)


async def test_test_model_calls_every_offered_tool_through_the_runtime() -> None:
    async with run_todo() as (_running, rt):
        tools = toolset(rt, credentials=ALICE, id="todo")
        assert isinstance(tools, FoldkitToolset)
        assert tools.id == "todo"
        await Agent(TestModel(), toolsets=[tools]).run("x")
        entries = rt.audit.entries()
    assert [e.capability for e in entries] == ["create_todo"]
    assert all(e.transport == "pydantic-ai" for e in entries)


class Poke(Message):
    pass


class FlakyHost:
    """Its Model read fails once, on the given read: an application bug the model must not see."""

    def __init__(self, failing_read: int) -> None:
        self.reads = 0
        self.failing_read = failing_read

    def model(self) -> Any:
        self.reads += 1
        if self.reads == self.failing_read:
            raise RuntimeError("secret internals at /srv/app.py")
        return None

    def dispatch(self, message: Any) -> None:
        pass


async def test_a_defect_reaches_the_model_as_the_generic_sentence_only() -> None:
    definition = agent.make(messages=agent.expose(message_union(Poke), {Poke: "Poke it"}))
    rt = agent.bind(definition=definition, host=FlakyHost(failing_read=2))  # 1 lists, 2 calls
    script = Script(calls(("poke", {})), say("done"))
    await Agent(script.model(), toolsets=[toolset(rt)]).run("x")
    (failure,) = returned(script.read[1])
    assert failure.outcome == "failed"
    assert failure.content == DEFECT_TEXT  # the one text every adapter gives a defect


@pytest.mark.parametrize("answer", [True, False], ids=["approved", "declined"])
async def test_the_todo_delete_asks_the_applications_approver_never_the_model(answer: bool) -> None:
    asked: list[ApprovalRequest] = []

    async def the_user(request: ApprovalRequest) -> Approval:
        asked.append(request)
        return Approval(approved=answer, by="alice")

    script = Script(
        calls(("create_todo", {"title": "Milk"})),
        calls(("select_todo", {"id": "todo-1"})),
        calls(("delete_todo", {})),
        say("done"),
    )
    async with run_todo() as (running, rt):
        tools = toolset(rt, credentials=ALICE, approver=the_user)
        await Agent(script.model(), toolsets=[tools]).run("Delete milk")
        todos = [t.title for t in running.host.model().todos]
        entry = rt.audit.entries()[-1] if rt.audit else None
    (read,) = returned(script.read[3])
    assert entry is not None
    if answer:
        assert read.outcome == "success"
        assert todos == []
        assert (entry.approval, entry.approved_by) == ("approved", "alice")
    else:
        assert read.outcome == "failed"  # the run goes on; the model cannot approve by retrying
        assert todos == ["Milk"]
        assert entry.approval == "declined"
    (request,) = asked
    assert request.summary is not None
    assert 'removes todos.0 (was {"id": "todo-1", "title": "Milk"' in request.summary


async def test_a_replayed_tool_call_with_its_key_answers_the_first_outcome_and_runs_once() -> None:
    # a durable run replaying a tool call repeats its tool call id: the key of the call
    async with run_todo() as (running, rt):
        every = toolset(rt, credentials=ALICE, idempotency_key_of=lambda ctx: ctx.tool_call_id)
        answers: list[Any] = []
        for _run in range(2):
            script = Script(calls(("create_todo", {"title": "Milk"})), say("done"))
            await Agent(script.model(), toolsets=[every]).run("Add milk")
            answers.append(returned(script.read[1])[0].content)
        outcomes = [e.outcome for e in rt.audit.entries()]
        titles = [t.title for t in running.host.model().todos]
    assert answers[1] == answers[0]
    assert answers[0]["status"] == "completed"
    assert outcomes == ["completed", "replayed"]
    assert titles == ["Milk"]
