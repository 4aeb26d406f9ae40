"""Drive the todo app in-process, the way an adapter would, and print each step.

python -m examples.todo
"""

from __future__ import annotations

import asyncio
import json

from foldkit_agent import AgentError, Approval, ApprovalRequest, Invocation, agent

from .contract import User
from .host import run_todo


def show(step: str, value: object) -> None:
    print(f"\n== {step}")
    print(json.dumps(value, indent=2, default=str))


async def approve_at_the_keyboard(request: ApprovalRequest) -> Approval:
    """The person in front of the app: shown what would change, and approving it."""
    show("alice is asked", request.text().splitlines())
    return Approval(approved=True, by="alice")


async def main() -> None:
    def alice() -> Invocation:
        return Invocation(
            transport="in-app",
            credentials=User(id="alice", can_delete=True),
            approver=approve_at_the_keyboard,  # delete_todo asks a person first
        )

    async with run_todo() as (running, rt):
        show("available", [c.name for c in rt.messages.available()])
        for title in ("Read the guide", "Write the tests"):
            result = await rt.messages.dispatch("create_todo", {"title": title}, alice())
            show(f"create_todo {title!r}", agent.summarize(result).data)
        dup = await rt.messages.dispatch("create_todo", {"title": "read the guide"}, alice())
        show("duplicate title (completion reports failure)", agent.summarize(dup).data)
        await rt.messages.dispatch("select_todo", {"id": "todo-1"}, alice())
        show("available after selecting", [c.name for c in rt.messages.available()])
        try:
            await rt.messages.dispatch("delete_todo", {}, Invocation(credentials=User(id="bob")))
        except AgentError as err:
            show("bob deletes", err.to_json())
        await rt.messages.dispatch("delete_todo", {}, alice())
        try:
            await rt.messages.dispatch("create_todo", {"title": "x", "priority": 1}, alice())
        except AgentError as err:
            show("invalid input", err.to_json())
        await running.settled()
        show("context", rt.context())
        assert rt.audit is not None
        show("audit", [e.to_json() for e in rt.audit.entries()])


if __name__ == "__main__":
    asyncio.run(main())
