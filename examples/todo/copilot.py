"""The todo app driven by an in-process pydantic-ai agent: a copilot inside the application.

    python -m examples.todo.copilot

No protocol hop and no LLM: the capabilities are a pydantic-ai toolset over the running app
(``foldkit_agent.adapters.pydantic_ai.toolset``), and a scripted model (pydantic-ai's
``FunctionModel``) stands in for the LLM so this runs offline. The script behaves as a model
does: it only calls tools it is offered at that step, reads each tool's answer, and corrects
itself when a call is refused. Swap ``FunctionModel(ScriptedCopilot())`` for a real model name
(``"openai:gpt-5"``, ...) and nothing else changes.

The signed-in user is the run's ``deps``; the toolset reads it (``credentials_of``) and the
runtime's principal provider decides what that user may do. The model's arguments never name
the caller. ``delete_todo`` asks a person first: the toolset's ``approver`` is where the
application asks its user (a dialog in a real UI; here a scripted person who approves), and
the model never answers it.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Generator
from dataclasses import dataclass
from typing import Any, cast

from pydantic_ai import Agent, ToolReturnPart
from pydantic_ai.messages import ModelMessage, ModelRequest, ModelResponse, TextPart, ToolCallPart
from pydantic_ai.models.function import AgentInfo, FunctionModel

from foldkit_agent import Approval, ApprovalRequest
from foldkit_agent.adapters.pydantic_ai import toolset

from .contract import User
from .host import run_todo


@dataclass
class Turn:
    """What the model is sent at one step: the conversation so far and the tools offered."""

    messages: list[ModelMessage]
    info: AgentInfo

    @property
    def offered(self) -> list[str]:
        return [t.name for t in self.info.function_tools]

    def answers(self) -> list[ToolReturnPart]:
        last = self.messages[-1]
        assert isinstance(last, ModelRequest)
        return [p for p in last.parts if isinstance(p, ToolReturnPart)]


Plan = Generator[ModelResponse | None, Turn, None]
"""A script: primed with a bare ``yield``, then one response per turn it is sent."""


def call(name: str, args: dict[str, Any]) -> ModelResponse:
    print(f"  model calls {name} {json.dumps(args)}")
    return ModelResponse(parts=[ToolCallPart(name, args)])


def reply(text: str) -> ModelResponse:
    print(f"  model says: {text}")
    return ModelResponse(parts=[TextPart(text)])


def read(turn: Turn) -> ToolReturnPart:
    """The one tool answer of this step, printed as the model reads it."""
    (answer,) = turn.answers()
    content = answer.content
    shown = content if isinstance(content, str) else json.dumps(content)
    print(f"  model reads ({answer.outcome}): {shown}")
    return answer


def result_of(answer: ToolReturnPart) -> dict[str, Any]:
    """The result Message a completed call answered with (its ``"result"`` object)."""
    content = cast(dict[str, Any], answer.content)
    return content["result"]


class ScriptedCopilot:
    """A ``FunctionModel`` function: each request resumes the plan of the current run."""

    def __init__(self) -> None:
        self._plan: Plan | None = None

    def start(self, plan: Plan) -> None:
        self._plan = plan
        next(plan)

    def __call__(self, messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        assert self._plan is not None
        turn = Turn(messages, info)
        print(f"  tools offered: {', '.join(turn.offered)}")
        response = self._plan.send(turn)
        assert response is not None  # only the priming yield is bare
        return response


def add_two_and_delete_one() -> Plan:
    yield  # primed; the first step sends the user's request
    # A plausible slip: the wrong field name. The refusal says which fields are accepted.
    turn = yield call("create_todo", {"name": "Buy milk"})
    refusal = str(read(turn).content)
    field = refusal.rsplit("Accepted fields: ", 1)[1].rstrip(".")  # what the refusal names
    turn = yield call("create_todo", {field: "Buy milk"})
    milk = result_of(read(turn))["id"]  # the SavedTodo the app answered with
    turn = yield call("create_todo", {"title": "Call mom"})
    read(turn)
    turn = yield call("select_todo", {"id": milk})
    read(turn)
    if "delete_todo" not in turn.offered:  # offered only while a todo is selected
        yield reply("I cannot delete anything right now.")
        return
    turn = yield call("delete_todo", {})
    read(turn)
    yield reply("Added 'Buy milk' and 'Call mom', then deleted 'Buy milk'.")


def delete_without_permission() -> Plan:
    yield  # primed; the first step sends the user's request
    turn = yield call("select_todo", {"id": "todo-2"})
    read(turn)
    turn = yield call("delete_todo", {})
    failure = read(turn)
    yield reply(f"I could not delete it: {failure.content}")


async def the_user_approves(request: ApprovalRequest) -> Approval:
    """The application asks its user, shown what would change; this one approves."""
    print(f"  the app asks the user: {request.title}? {request.summary}")
    print("  the user approves")
    return Approval(approved=True, by="alice")


async def main() -> None:
    copilot_model = ScriptedCopilot()
    async with run_todo() as (running, rt):
        copilot = Agent(
            FunctionModel(copilot_model),
            deps_type=User,
            toolsets=[toolset(rt, credentials_of=lambda ctx: ctx.deps, approver=the_user_approves)],
            instructions="You manage the user's todo list with the tools you are given.",
        )

        print("== alice: add two todos, then delete the first")
        copilot_model.start(add_two_and_delete_one())
        alice = User(id="alice", can_delete=True)
        result = await copilot.run("Add 'Buy milk' and 'Call mom', then delete milk", deps=alice)
        print(f"  => {result.output}")

        print("\n== bob (may not delete): delete 'Call mom'")
        copilot_model.start(delete_without_permission())
        result = await copilot.run("Delete 'Call mom'", deps=User(id="bob"))
        print(f"  => {result.output}")

        await running.settled()
        print("\n== the todos")
        for todo in running.host.model().todos:
            print(f"  {todo.id}: {todo.title} (saved: {todo.saved})")
        print("\n== the audit trail")
        assert rt.audit is not None
        for e in rt.audit.entries():
            approval = f" ({e.approval} by {e.approved_by})" if e.approval else ""
            print(
                f"  {e.transport} {e.principal} {e.capability} {e.decision} {e.outcome}{approval}"
            )


if __name__ == "__main__":
    asyncio.run(main())
