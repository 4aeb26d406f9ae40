"""The todo example keeps its todos in SQLite or PostgreSQL and reads them back on start."""

from __future__ import annotations

import asyncio
from typing import Any

from examples.todo import AppAgent, run_todo
from examples.todo.app import FailedToSaveTodo, ReceivedTodos, RequestedDeleteTodo, Todo
from examples.todo.contract import User
from examples.todo.store import open_store
from foldkit_agent import Invocation


def alice() -> Invocation:
    return Invocation(credentials=User(id="alice", can_delete=True))


async def test_a_store_keeps_each_tenants_todos_in_creation_order(todo_store: str) -> None:
    a = await open_store(todo_store, tenant="alice")
    b = await open_store(todo_store, tenant="bob")
    try:
        await a.save(Todo(id="todo-2", title="Second"))
        await a.save(Todo(id="todo-1", title="First"))
        await b.save(Todo(id="todo-1", title="Bob's"))
        await a.save(Todo(id="todo-2", title="Second, renamed", completed=True))
        await a.delete("todo-9")  # nothing to delete: nothing happens
        assert await a.load() == (
            Todo(id="todo-2", title="Second, renamed", completed=True, saved=True),
            Todo(id="todo-1", title="First", saved=True),
        )
        await a.delete("todo-2")
        assert [t.id for t in await a.load()] == ["todo-1"]
        assert await b.load() == (Todo(id="todo-1", title="Bob's", saved=True),)
    finally:
        await a.close()
        await b.close()


async def test_twelve_tenants_opening_at_once_on_a_new_database_all_open(
    postgres_dsn: str,
) -> None:
    # the deploy test's six tenants on three workers first failed here: concurrent
    # CREATE TABLE IF NOT EXISTS collide in PostgreSQL's catalog without the schema lock
    stores = await asyncio.gather(
        *(open_store(f"postgres:{postgres_dsn}", tenant=f"t{n}") for n in range(12))
    )
    try:
        await asyncio.gather(*(s.save(Todo(id="todo-1", title=s.tenant)) for s in stores))
        assert [[t.title for t in await s.load()] for s in stores] == [[f"t{n}"] for n in range(12)]
    finally:
        await asyncio.gather(*(s.close() for s in stores))


async def test_what_was_saved_is_back_after_a_restart_through_received_todos(
    todo_store: str,
) -> None:
    async with run_todo(store=todo_store) as (running, rt):
        for title in ("Milk", "Eggs", "Bread"):
            await rt.messages.dispatch("create_todo", {"title": title}, alice())
        await rt.messages.dispatch("toggle_todo", {"id": "todo-1"}, alice())
        await rt.messages.dispatch("rename_todo", {"id": "todo-2", "title": "Ham"}, alice())
        # delete_todo asks a person first (approval); the app's own Message is what deletes
        running.dispatch(RequestedDeleteTodo(id="todo-3"))
        refused = await rt.messages.dispatch("create_todo", {"title": "milk"}, alice())
        assert refused.completion is not None
        assert refused.completion.status == "failed"
        await running.settled()
    async with run_todo(store=todo_store) as (running, rt):
        assert running.model().todos == (
            Todo(id="todo-1", title="Milk", completed=True, saved=True),
            Todo(id="todo-2", title="Ham", saved=True),
        )
        created = await rt.messages.dispatch("create_todo", {"title": "Jam"}, alice())
        assert created.completion is not None
        assert created.completion.status == "completed"
        # ids continue after the highest one saved (a deleted todo's id may come back)
        assert [t.id for t in running.model().todos] == ["todo-1", "todo-2", "todo-3"]


async def test_the_saved_todos_arrive_as_the_apps_own_message_which_no_agent_can_send() -> None:
    seen: list[Any] = []

    class Store:
        async def load(self) -> tuple[Todo, ...]:
            return (Todo(id="todo-7", title="Kept", saved=True),)

        async def create(self, todo: Todo) -> bool:
            seen.append(todo)
            return True

        async def save(self, todo: Todo) -> None:
            seen.append(todo)

        async def delete(self, todo_id: str) -> None:
            seen.append(todo_id)

        async def close(self) -> None:
            seen.append("closed")

    async with run_todo(store=Store()) as (running, rt):
        assert running.model().todos == (Todo(id="todo-7", title="Kept", saved=True),)
        assert running.model().next_id == 8
        assert ReceivedTodos.tag not in {c.tag for c in AppAgent.capabilities}
        assert "received_todos" not in {c.name for c in rt.messages.all()}
    assert seen == []  # a store passed in is the caller's to close


async def test_without_a_store_the_todos_live_in_memory_only() -> None:
    async with run_todo() as (running, rt):
        await rt.messages.dispatch("create_todo", {"title": "Milk"}, alice())
        assert [t.saved for t in running.model().todos] == [True]
    async with run_todo() as (running, _rt):
        assert running.model().todos == ()


async def test_a_second_model_of_a_tenant_never_overwrites_a_saved_todo(todo_store: str) -> None:
    # issue 21: two workers holding one tenant (a request sent straight to a worker that does
    # not own it) both created todo-1; the second save overwrote the first, confirmed todo
    async with run_todo(store=todo_store) as (_first, rt_a):
        async with run_todo(store=todo_store) as (second, rt_b):
            made = await rt_a.messages.dispatch("create_todo", {"title": "Milk"}, alice())
            assert made.completion is not None
            assert made.completion.status == "completed"
            clash = await rt_b.messages.dispatch("create_todo", {"title": "Eggs"}, alice())
            assert clash.completion is not None
            assert clash.completion.status == "failed"
            assert clash.completion.message == FailedToSaveTodo(
                id="todo-1",
                reason="the id todo-1 is already taken by a todo saved elsewhere; "
                "reload the todos resource and create it again",
                request_id=clash.completion.message.request_id,
            )
            assert second.model().todos == ()
    store = await open_store(todo_store)
    try:
        assert await store.load() == (Todo(id="todo-1", title="Milk", saved=True),)
        assert await store.create(Todo(id="todo-1", title="Eggs")) is False
        assert await store.load() == (Todo(id="todo-1", title="Milk", saved=True),)
    finally:
        await store.close()


async def test_f21_a_store_failure_reaches_the_agent_without_the_drivers_name() -> None:
    # issue 21: a NUL in a title failed in PostgreSQL and "DataError" reached the agent
    class DataError(Exception):
        pass

    class Failing:
        async def load(self) -> tuple[Todo, ...]:
            return ()

        async def create(self, todo: Todo) -> bool:
            raise DataError("PostgreSQL text fields cannot contain NUL (0x00) bytes")

        async def save(self, todo: Todo) -> None: ...
        async def delete(self, todo_id: str) -> None: ...
        async def close(self) -> None: ...

    async with run_todo(store=Failing()) as (running, rt):
        failed = await rt.messages.dispatch("create_todo", {"title": "Milk"}, alice())
        assert failed.completion is not None
        assert failed.completion.status == "failed"
        assert isinstance(failed.completion.message, FailedToSaveTodo)
        reason = failed.completion.message.reason
        assert reason == "the todo could not be saved (the store failed); try again"
        assert running.model().todos == ()
