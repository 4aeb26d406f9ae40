"""The LangChain structured tools driven by LangChain's own agent loop, with a scripted chat model.

No LLM: :class:`ScriptedChatModel` is a ``BaseChatModel`` whose answers are scripted steps that
read the messages they are sent. It runs in ``langchain.agents.create_agent`` (the LangGraph
agent loop, with a middleware following availability) and in a hand-written langchain-core
loop (``bind_tools`` + ``tool.ainvoke(tool_call)``), as the docs show both.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from typing import Any

import pytest
from langchain.agents import create_agent
from langchain.agents.middleware import AgentMiddleware, ModelRequest, ModelResponse
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from langchain_core.runnables import Runnable
from langchain_core.tools import StructuredTool
from langchain_core.utils.function_calling import convert_to_openai_tool
from pydantic import PrivateAttr

from examples.todo import User, run_todo
from foldkit_agent import AgentRuntime, Approval, ApprovalRequest, Message, agent, message_union
from foldkit_agent.adapters.langchain import TRANSPORT, CapabilityTool, available, tools
from tests.support.inproc import ALICE, BOB, ERRAND, OFFERED_DURING_ERRAND

Step = Callable[[list[BaseMessage]], AIMessage]


class ScriptedChatModel(BaseChatModel):
    """A chat model that answers with scripted steps and records the tools it was offered."""

    _steps: list[Step] = PrivateAttr(default_factory=list)
    offered: list[list[str]] = []
    read: list[list[BaseMessage]] = []

    def __init__(self, *steps: Step) -> None:
        super().__init__(offered=[], read=[])
        self._steps = list(steps)

    @property
    def _llm_type(self) -> str:
        return "scripted"

    def bind_tools(self, tools: Any, **kwargs: Any) -> Runnable[Any, AIMessage]:
        return self.bind(tools=[convert_to_openai_tool(t) for t in tools], **kwargs)

    def _generate(
        self, messages: list[BaseMessage], stop: Any = None, run_manager: Any = None, **kwargs: Any
    ) -> ChatResult:
        self.offered.append([t["function"]["name"] for t in kwargs.get("tools", [])])
        self.read.append(list(messages))
        return ChatResult(generations=[ChatGeneration(message=self._steps.pop(0)(messages))])


def calls(*pairs: tuple[str, dict[str, Any]]) -> Step:
    def step(messages: list[BaseMessage]) -> AIMessage:
        n = len(messages)
        return AIMessage(
            content="",
            tool_calls=[
                {"name": name, "args": args, "id": f"{name}-{n}-{i}", "type": "tool_call"}
                for i, (name, args) in enumerate(pairs)
            ],
        )

    return step


def say(text: str) -> Step:
    return lambda messages: AIMessage(content=text)


class FollowAvailability(AgentMiddleware):
    """Offer the model, at each call, only the tools whose capability is available now."""

    def __init__(self, runtime: AgentRuntime[Any, Any]) -> None:
        super().__init__()
        self.runtime = runtime

    async def awrap_model_call(
        self, request: ModelRequest, handler: Callable[[ModelRequest], Awaitable[ModelResponse]]
    ) -> ModelResponse:
        return await handler(request.override(tools=available(request.tools, self.runtime)))


def answer(model: ScriptedChatModel, turn: int) -> ToolMessage:
    """The last tool message the model read at its ``turn``-th call."""
    last = model.read[turn][-1]
    assert isinstance(last, ToolMessage)
    return last


async def run_agent(
    model: ScriptedChatModel, rt: AgentRuntime[Any, Any], every: list[CapabilityTool], user: User
) -> dict[str, Any]:
    graph = create_agent(model, tools=every, middleware=[FollowAvailability(rt)])
    return await graph.ainvoke(
        {"messages": [HumanMessage("Tidy my list")]}, {"configurable": {"user": user}}
    )


def user_of(config: Any) -> User:
    return config["configurable"]["user"]


async def test_the_tools_offered_at_each_model_call_are_what_is_available_then() -> None:
    model = ScriptedChatModel(
        *(calls(step) for step in ERRAND),
        say("done"),
    )
    async with run_todo() as (_running, rt):
        result = await run_agent(model, rt, tools(rt, credentials_of=user_of), ALICE)
    assert result["messages"][-1].content == "done"
    assert model.offered == OFFERED_DURING_ERRAND


async def test_a_refusal_is_an_error_tool_message_in_our_words_and_the_model_recovers() -> None:
    def after_refusal(messages: list[BaseMessage]) -> AIMessage:
        last = messages[-1]
        if isinstance(last, ToolMessage) and last.status == "error":
            return calls(("create_todo", {"title": "Milk"}))(messages)
        return AIMessage(content="gave up")

    model = ScriptedChatModel(calls(("create_todo", {"title": ""})), after_refusal, say("done"))
    async with run_todo() as (running, rt):
        await run_agent(model, rt, tools(rt, credentials_of=user_of), ALICE)
        await running.settled()
        titles = [t.title for t in running.host.model().todos]
    refusal = answer(model, 1)
    assert (refusal.status, refusal.content) == (
        "error",
        "Refused: "
        "Invalid input for 'create_todo': title: must not be empty. Accepted fields: title.",
    )
    success = answer(model, 2)
    assert success.status == "success"
    assert json.loads(str(success.content)) == success.artifact
    assert success.artifact["status"] == "completed"
    assert titles == ["Milk"]


async def test_the_audit_shows_langchain_and_the_principal_from_the_run_config() -> None:
    model = ScriptedChatModel(
        calls(("create_todo", {"title": "Milk"})),
        calls(("select_todo", {"id": "todo-1"})),
        calls(("delete_todo", {})),
        say("done"),
    )
    async with run_todo() as (running, rt):
        await run_agent(model, rt, tools(rt, credentials_of=user_of), BOB)
        entries = [(e.transport, e.capability, e.principal, e.outcome) for e in rt.audit.entries()]
        todos = running.host.model().todos
    assert TRANSPORT == "langchain"
    assert entries == [
        ("langchain", "create_todo", "bob", "completed"),
        ("langchain", "select_todo", "bob", "ok"),
        ("langchain", "delete_todo", "bob", "AgentAuthorizationError"),
    ]
    refusal = answer(model, 3)
    assert (
        refusal.content == "Refused: Not authorized to use 'delete_todo': bob may not delete todos"
    )
    assert len(todos) == 1


async def test_the_principal_never_comes_from_the_models_arguments() -> None:
    claims = {"principal": "alice", "config": {"configurable": {"user": "alice"}}}
    model = ScriptedChatModel(
        calls(("create_todo", {"title": "Milk"})),
        calls(("select_todo", {"id": "todo-1"})),
        calls(("delete_todo", claims)),
        say("done"),
    )
    async with run_todo() as (running, rt):
        await run_agent(model, rt, tools(rt, credentials_of=user_of), BOB)
        (entry,) = [e for e in rt.audit.entries() if e.capability == "delete_todo"]
        todos = running.host.model().todos
    refusal = answer(model, 3)
    assert refusal.content == (
        "Refused: "
        "Invalid input for 'delete_todo': principal: unexpected field; config: unexpected field. "
        "Accepted fields: none (send {})."
    )
    assert (entry.principal, entry.outcome) == ("bob", "AgentInvalidInputError")
    assert len(todos) == 1


class Configured(Message):
    config: str
    run_manager: int = 0


async def test_a_capability_may_declare_fields_langchain_uses_for_its_own_arguments() -> None:
    seen: list[Message] = []

    class Host:
        def model(self) -> None:
            return None

        def dispatch(self, message: Message) -> None:
            seen.append(message)

    contract = agent.make(messages=agent.expose(message_union(Configured), {Configured: "Set"}))
    (tool,) = tools(agent.bind(definition=contract, host=Host()))
    call = {
        "name": "configured",
        "args": {"config": "dark", "run_manager": 2},
        "id": "1",
        "type": "tool_call",
    }
    answer = await tool.ainvoke(call)
    assert isinstance(answer, ToolMessage)
    assert answer.status == "success"
    assert seen == [Configured(config="dark", run_manager=2)]


async def test_a_langchain_core_loop_binds_what_is_available_before_each_model_call() -> None:
    model = ScriptedChatModel(
        calls(("create_todo", {"title": "Milk"})),
        calls(("select_todo", {"id": "todo-1"}), ("delete_todo", {})),  # delete is not bound yet
        say("done"),
    )
    asked: list[ApprovalRequest] = []

    async def alice_approves(request: ApprovalRequest) -> Approval:  # delete_todo asks first
        asked.append(request)
        return Approval(approved=True, by="alice")

    async with run_todo() as (running, rt):
        every = tools(rt, credentials=ALICE, approver=alice_approves)
        by_name = {t.name: t for t in every}
        messages: list[BaseMessage] = [HumanMessage("Add milk, then delete it")]
        while True:
            ai = await model.bind_tools(available(every, rt)).ainvoke(messages)
            messages.append(ai)
            if not ai.tool_calls:
                break
            for call in ai.tool_calls:
                messages.append(await by_name[call["name"]].ainvoke(call))
        todos = running.host.model().todos
    assert model.offered[0] == ["create_todo"]
    deleted = [m for m in messages if isinstance(m, ToolMessage) and m.name == "delete_todo"]
    assert [m.status for m in deleted] == ["success"]  # select_todo made it available
    assert todos == ()
    assert [r.capability for r in asked] == ["delete_todo"]


async def test_a_confirmed_capability_without_an_approver_is_refused_as_nobody_to_ask() -> None:
    async with run_todo() as (running, rt):
        by_name = {t.name: t for t in tools(rt, credentials=ALICE)}
        for name, args in (("create_todo", {"title": "Milk"}), ("select_todo", {"id": "todo-1"})):
            await by_name[name].ainvoke(
                {"name": name, "args": args, "id": "1", "type": "tool_call"}
            )
        call = {"name": "delete_todo", "args": {}, "id": "2", "type": "tool_call"}
        answer = await by_name["delete_todo"].ainvoke(call)
        todos = [t.title for t in running.host.model().todos]
        entry = rt.audit.entries()[-1] if rt.audit else None
    assert isinstance(answer, ToolMessage)
    assert answer.status == "error"
    assert isinstance(answer.content, str)
    assert "cannot ask" in answer.content
    assert todos == ["Milk"]
    assert entry is not None
    assert (entry.capability, entry.approval) == (
        "delete_todo",
        "unavailable",
    )


async def test_a_tool_called_while_its_capability_is_unavailable_is_refused() -> None:
    async with run_todo() as (_running, rt):
        by_name = {t.name: t for t in tools(rt, credentials=ALICE)}
        call = {"name": "delete_todo", "args": {}, "id": "1", "type": "tool_call"}
        answer = await by_name["delete_todo"].ainvoke(call)
    assert isinstance(answer, ToolMessage)
    assert (answer.status, answer.content) == (
        "error",
        "Refused: 'delete_todo' is not available in the application's current state. Read the "
        "context or list the capabilities again before retrying.",
    )


async def test_available_keeps_tools_that_are_not_capabilities() -> None:
    other = StructuredTool.from_function(lambda: "hi", name="greet", description="Say hi")
    async with run_todo() as (_running, rt):
        kept = available([other, *tools(rt)], rt)
    assert [t.name for t in kept] == ["greet", "create_todo"]


async def test_resolve_serves_one_runtime_per_tenant_from_the_run_config() -> None:
    async with run_todo() as (_a, ours), run_todo() as (_b, theirs):
        tenants: dict[str, AgentRuntime[Any, Any]] = {"ours": ours, "theirs": theirs}
        every = tools(
            lambda config: tenants[config["configurable"]["tenant"]],
            definition=ours.definition,
            credentials=ALICE,
        )
        create = next(t for t in every if t.name == "create_todo")
        call = {"name": "create_todo", "args": {"title": "Milk"}, "id": "1", "type": "tool_call"}
        await create.ainvoke(call, {"configurable": {"tenant": "theirs"}})
        assert [len(rt.audit.entries()) for rt in (ours, theirs)] == [0, 1]


def test_a_resolve_target_needs_the_contract() -> None:
    with pytest.raises(TypeError, match="definition="):
        tools(lambda config: None)
    with pytest.raises(TypeError, match="not both"):
        tools(lambda config: None, credentials=ALICE, credentials_of=user_of)


async def test_a_retried_call_with_its_key_answers_the_first_outcome_and_runs_once() -> None:
    async with run_todo() as (running, rt):
        every = tools(
            rt, credentials=ALICE, idempotency_key_of=lambda cfg: cfg["configurable"]["call_key"]
        )
        create = next(t for t in every if t.name == "create_todo")
        config: Any = {"configurable": {"call_key": "add-milk-1"}}
        first = await create.ainvoke({"title": "Milk"}, config)
        again = await create.ainvoke({"title": "Milk"}, config)
        other = await create.ainvoke({"title": "Eggs"}, config)
        outcomes = [e.outcome for e in rt.audit.entries()]
        titles = [t.title for t in running.host.model().todos]
    assert again == first
    assert json.loads(first)["status"] == "completed"
    assert "first used with other input" in other
    assert outcomes == ["completed", "replayed", "AgentIdempotencyError"]
    assert titles == ["Milk"]
