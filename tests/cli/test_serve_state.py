"""``serve examples.todo:runtime`` with FOLDKIT_TODO_STORE: a kill -9 loses no saved todo."""

from __future__ import annotations

from examples.todo.store import STORE_ENV
from tests.support.serving import mcp_client, serving, todos_of


async def test_todos_saved_before_a_kill_9_are_back_after_a_restart(todo_store: str) -> None:
    env = {STORE_ENV: todo_store}
    async with serving("--mcp", "http", env=env) as first:
        async with mcp_client(f"{first.origin}/mcp") as client:
            for title in ("Milk", "Eggs"):
                created = await client.call_tool("create_todo", {"title": title})
                assert created.structured_content is not None
                assert created.structured_content["status"] == "completed"  # it was saved
            await client.call_tool("toggle_todo", {"id": "todo-1"})
            # answered once saved; the toggle's write was queued before this save
            await client.call_tool("create_todo", {"title": "Bread"})
        await first.kill()
    async with serving("--mcp", "http", env=env) as second:
        async with mcp_client(f"{second.origin}/mcp") as client:
            assert await todos_of(client) == [
                {"id": "todo-1", "title": "Milk", "completed": True, "saved": True},
                {"id": "todo-2", "title": "Eggs", "completed": False, "saved": True},
                {"id": "todo-3", "title": "Bread", "completed": False, "saved": True},
            ]
