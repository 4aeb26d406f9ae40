"""Where the todo app keeps its todos: SQLite (a file, or memory) or PostgreSQL.

The app's Commands call a :class:`TodoStore`; the app never sees SQL. One table holds every
tenant's todos (``tenant`` is part of the key), in the order they were created:

    todos(tenant, id, title, completed, seq)   PRIMARY KEY (tenant, id)

:func:`open_store` picks the backend from one string: ``None`` or ``":memory:"`` (an
in-memory SQLite database, gone when the store closes), a ``postgresql://`` / ``postgres://``
URI or a ``postgres:DSN`` (PostgreSQL, through psycopg 3), or else a SQLite file path.
``foldkit-agent serve examples.todo:runtime`` reads that string from the environment variable
:data:`STORE_ENV` (see docs/deploy.md).
"""

from __future__ import annotations

import asyncio
import sqlite3
from pathlib import Path
from typing import Any, Protocol

from .app import Todo

STORE_ENV = "FOLDKIT_TODO_STORE"
"""The environment variable ``examples.todo:runtime`` reads the store from."""

DEFAULT_TENANT = "default"
"""The tenant of a store opened without one (a single-tenant server)."""

_SCHEMA_LOCK = 0x666B_746F_646F  # pg_advisory_xact_lock key: the todos table is made once


class TodoStore(Protocol):
    """One tenant's todos, as the app's Commands read and write them.

    ``create`` writes a new todo and never overwrites one: it answers ``False`` when the
    tenant already has a todo with that id (another Model of the tenant saved it first, see
    docs/deploy.md). ``save`` writes a changed todo, last writer wins.
    """

    async def load(self) -> tuple[Todo, ...]: ...
    async def create(self, todo: Todo) -> bool: ...
    async def save(self, todo: Todo) -> None: ...
    async def delete(self, todo_id: str) -> None: ...
    async def close(self) -> None: ...


class SqliteTodoStore:
    """A tenant's todos in a SQLite file (WAL, one connection used from one thread at a time).

    Example:
        >>> store = SqliteTodoStore("todos.db", tenant="alice")
        >>> await store.create(Todo(id="todo-1", title="Milk"))
        True
        >>> await store.load()
        (Todo(id='todo-1', title='Milk', completed=False, saved=True),)
    """

    def __init__(self, path: str | Path = ":memory:", *, tenant: str = DEFAULT_TENANT) -> None:
        self.tenant = tenant
        if str(path) != ":memory:":
            Path(path).parent.mkdir(parents=True, exist_ok=True)
        self._db = sqlite3.connect(str(path), isolation_level=None, check_same_thread=False)
        self._lock = asyncio.Lock()
        if str(path) != ":memory:":
            self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute(
            "CREATE TABLE IF NOT EXISTS todos (tenant TEXT NOT NULL, id TEXT NOT NULL, "
            "title TEXT NOT NULL, completed INTEGER NOT NULL, seq INTEGER NOT NULL, "
            "PRIMARY KEY (tenant, id))"
        )

    async def _run(self, sql: str, *args: Any) -> list[tuple[Any, ...]]:
        async with self._lock:  # one statement at a time on the one connection
            return await asyncio.to_thread(lambda: self._db.execute(sql, args).fetchall())

    async def load(self) -> tuple[Todo, ...]:
        rows = await self._run(
            "SELECT id, title, completed FROM todos WHERE tenant = ? ORDER BY seq", self.tenant
        )
        return tuple(Todo(id=i, title=t, completed=bool(c), saved=True) for i, t, c in rows)

    async def create(self, todo: Todo) -> bool:
        """Insert ``todo``; ``False`` (nothing written) when its id is taken."""
        rows = await self._run(
            "INSERT INTO todos (tenant, id, title, completed, seq) VALUES (?, ?, ?, ?, "
            "(SELECT COALESCE(MAX(seq), 0) + 1 FROM todos)) ON CONFLICT (tenant, id) "
            "DO NOTHING RETURNING id",
            self.tenant,
            todo.id,
            todo.title,
            int(todo.completed),
        )
        return bool(rows)

    async def save(self, todo: Todo) -> None:
        await self._run(
            "INSERT INTO todos (tenant, id, title, completed, seq) VALUES (?, ?, ?, ?, "
            "(SELECT COALESCE(MAX(seq), 0) + 1 FROM todos)) ON CONFLICT (tenant, id) "
            "DO UPDATE SET title = excluded.title, completed = excluded.completed",
            self.tenant,
            todo.id,
            todo.title,
            int(todo.completed),
        )

    async def delete(self, todo_id: str) -> None:
        await self._run("DELETE FROM todos WHERE tenant = ? AND id = ?", self.tenant, todo_id)

    async def close(self) -> None:
        async with self._lock:
            self._db.close()


class PostgresTodoStore:
    """A tenant's todos in PostgreSQL (psycopg 3, one async connection, autocommit).

    Open it with :meth:`connect`, which creates the table when it is missing.

    Example:
        >>> store = await PostgresTodoStore.connect("postgresql:///todos", tenant="alice")
    """

    def __init__(self, conn: Any, tenant: str) -> None:
        self._conn = conn
        self.tenant = tenant
        self._lock = asyncio.Lock()

    @classmethod
    async def connect(cls, dsn: str, *, tenant: str = DEFAULT_TENANT) -> PostgresTodoStore:
        import psycopg

        conn = await psycopg.AsyncConnection.connect(dsn, autocommit=True)
        # tenants opening at once, in one worker or several, create the table once: two
        # concurrent CREATE TABLE IF NOT EXISTS collide in PostgreSQL's catalog otherwise
        async with conn.transaction():
            await conn.execute("SELECT pg_advisory_xact_lock(%s)", (_SCHEMA_LOCK,))
            await conn.execute(
                "CREATE TABLE IF NOT EXISTS todos (tenant TEXT NOT NULL, id TEXT NOT NULL, "
                "title TEXT NOT NULL, completed BOOLEAN NOT NULL, seq BIGSERIAL, "
                "PRIMARY KEY (tenant, id))"
            )
        return cls(conn, tenant)

    async def load(self) -> tuple[Todo, ...]:
        async with self._lock:
            cur = await self._conn.execute(
                "SELECT id, title, completed FROM todos WHERE tenant = %s ORDER BY seq",
                (self.tenant,),
            )
            rows = await cur.fetchall()
        return tuple(Todo(id=i, title=t, completed=c, saved=True) for i, t, c in rows)

    async def create(self, todo: Todo) -> bool:
        """Insert ``todo``; ``False`` (nothing written) when its id is taken."""
        async with self._lock:
            cur = await self._conn.execute(
                "INSERT INTO todos (tenant, id, title, completed) VALUES (%s, %s, %s, %s) "
                "ON CONFLICT (tenant, id) DO NOTHING",
                (self.tenant, todo.id, todo.title, todo.completed),
            )
            return cur.rowcount == 1

    async def save(self, todo: Todo) -> None:
        async with self._lock:
            await self._conn.execute(
                "INSERT INTO todos (tenant, id, title, completed) VALUES (%s, %s, %s, %s) "
                "ON CONFLICT (tenant, id) DO UPDATE SET title = EXCLUDED.title, "
                "completed = EXCLUDED.completed",
                (self.tenant, todo.id, todo.title, todo.completed),
            )

    async def delete(self, todo_id: str) -> None:
        async with self._lock:
            await self._conn.execute(
                "DELETE FROM todos WHERE tenant = %s AND id = %s", (self.tenant, todo_id)
            )

    async def close(self) -> None:
        await self._conn.close()


def is_postgres(where: str) -> bool:
    """Whether ``where`` names a PostgreSQL database rather than a SQLite file."""
    return where.startswith(("postgresql://", "postgres://", "postgres:"))


async def open_store(where: str | None = None, *, tenant: str = DEFAULT_TENANT) -> TodoStore:
    """The store ``where`` names, for ``tenant``.

    Args:
        where: ``None`` or ``":memory:"`` (in-memory SQLite), ``postgresql://...`` or
            ``postgres:DSN`` (PostgreSQL), or a SQLite file path (created when missing).
        tenant: whose todos these are.

    Raises:
        sqlite3.Error / psycopg.Error: the database cannot be opened.
    """
    if where is None or where == ":memory:":
        return SqliteTodoStore(":memory:", tenant=tenant)
    if is_postgres(where):
        dsn = where.removeprefix("postgres:") if where.startswith("postgres:") else where
        if dsn.startswith("//"):  # postgres://... is a URI, not a postgres:DSN
            dsn = where
        return await PostgresTodoStore.connect(dsn, tenant=tenant)
    return SqliteTodoStore(where, tenant=tenant)
