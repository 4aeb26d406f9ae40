"""A2A tasks in SQLite or PostgreSQL: :class:`SqlTaskStore`, the SDK's ``DatabaseTaskStore``
with the bounds and guarantees of :class:`~foldkit_agent.adapters.a2a.BoundedTaskStore`.

``a2a-sdk``'s ``DatabaseTaskStore`` (``a2a.server.tasks``, on SQLAlchemy's asyncio engine)
keeps tasks in a table, scoped to their owner (the authenticated user name), so a task
survives the server's restart and a ``GetTask`` after it finds it. On its own it keeps every
task for ever, with the request's input in its history, and its row key is the task id alone.
:class:`SqlTaskStore` wraps it:

- a finished task (``COMPLETED``, ``FAILED``, ``CANCELED``, ``REJECTED``) is stored without
  the parts of the caller's messages (the request's input), as in memory;
- a task is saved only for the owner that holds it: a save of a task id another owner holds
  is refused (:class:`ForeignTaskError`) instead of taking that owner's row over;
- when a new task is saved, tasks not updated for ``max_age`` seconds are deleted, and past
  ``max_per_caller`` tasks of that owner or ``max_tasks`` in all, the oldest ones (finished
  first) are.

Stores, by the spec :class:`SqlTaskStore` takes (as ``serve --a2a-task-store`` does):

=================================  ==========================================================
spec                               store
=================================  ==========================================================
``sqlite:PATH``, ``sqlite:///PATH``  a SQLite file (aiosqlite), created when missing
``postgres:DSN``, ``postgresql://``  PostgreSQL through psycopg 3's async connection (any
                                   libpq DSN: ``host=... dbname=...`` or a URI)
=================================  ==========================================================

Install with ``pip install 'foldkit-agent[a2a-db]'``.

Example:
    >>> async with SqlTaskStore("sqlite:tasks.db") as store:
    ...     app = a2a_app(rt, name="todo", version="1.0", base_url=url, task_store=store)
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any

from a2a.server.context import ServerCallContext
from a2a.server.owner_resolver import OwnerResolver
from a2a.types import ListTasksRequest, ListTasksResponse, Task, TaskState

from ...edge.callers import DEFAULT_TASK_MAX_AGE, DEFAULT_TASKS, DEFAULT_TASKS_PER_CALLER
from ...errors import needs_extra
from .tasks import FINISHED, TaskBounds, tenant_owner, without_request_parts

if TYPE_CHECKING:
    from sqlalchemy.ext.asyncio import AsyncEngine

__all__ = ["TASK_STORE_HELP", "ForeignTaskError", "SqlTaskStore"]

TASK_STORE_HELP = "sqlite:PATH (or sqlite:///PATH), postgres:DSN or postgresql://..."
"""The spec forms :class:`SqlTaskStore` takes, for error messages and ``--help``."""

_FINISHED_NAMES = [TaskState.Name(state) for state in FINISHED]


class ForeignTaskError(Exception):
    """A save named a task id that another owner's task holds in the table."""


def _engine(spec: str) -> tuple[AsyncEngine, str]:
    """The SQLAlchemy async engine a spec names (see the module docs), and what it is in
    words (no password)."""
    from sqlalchemy import URL
    from sqlalchemy.ext.asyncio import create_async_engine

    if spec.startswith(("postgresql://", "postgres://")):
        kind, target = "postgres", spec
    elif spec.startswith("sqlite://"):
        kind, target = "sqlite", spec.removeprefix("sqlite://").removeprefix("/")
    else:
        kind, _, target = spec.partition(":")
    if not target or kind not in ("sqlite", "postgres", "postgresql"):
        raise ValueError(f"an A2A task store is {TASK_STORE_HELP}, got {spec!r}")
    if kind == "sqlite":
        if target == ":memory:":
            raise ValueError(
                "an A2A task store in SQLite needs a file (sqlite:PATH); in memory, leave the "
                "default bounded store"
            )
        engine = create_async_engine(URL.create("sqlite+aiosqlite", database=target))
        return engine, f"the SQLite file {target}"
    import psycopg

    async def connect() -> Any:
        return await psycopg.AsyncConnection.connect(target)

    engine = create_async_engine("postgresql+psycopg://", async_creator=connect)
    return engine, "the PostgreSQL database"


class SqlTaskStore(TaskBounds):
    """The SDK's ``DatabaseTaskStore`` on SQLite or PostgreSQL, bounded and owner-bound.

    Args:
        spec: where: ``sqlite:PATH``, ``sqlite:///PATH``, ``postgres:DSN`` or
            ``postgresql://...`` (the module docs).
        max_tasks: most tasks in the table (default 10,000).
        max_per_caller: most tasks of one owner (default 1,000).
        max_age: seconds after its last update when a task is deleted (default 3,600).
        owner_resolver: the owner of a call (default
            :func:`~foldkit_agent.adapters.a2a.tasks.tenant_owner`: the authenticated user
            name, every anonymous caller one owner, within the path's tenant).

    Raises:
        ValueError: an unknown spec, ``sqlite::memory:``, or a bound below 1.
        MissingExtra: SQLAlchemy or the driver is missing (its text says
            ``pip install 'foldkit-agent[a2a-db]'``).

    The tasks are in the SDK's own table, ``tasks``. Enter it (``async with store:``) to
    create the table at once and close its connections on
    exit; otherwise the table is created at the first call and :meth:`close` closes them.
    Several processes may share one PostgreSQL table (each bounds it as it saves).
    """

    def __init__(
        self,
        spec: str,
        *,
        max_tasks: int = DEFAULT_TASKS,
        max_per_caller: int = DEFAULT_TASKS_PER_CALLER,
        max_age: float = DEFAULT_TASK_MAX_AGE,
        owner_resolver: OwnerResolver = tenant_owner,
    ) -> None:
        from a2a.server.tasks import DatabaseTaskStore

        super().__init__(max_tasks, max_per_caller, max_age)
        with needs_extra(__name__):  # SQLAlchemy and the driver come with the a2a-db extra
            self.engine, self.where = _engine(spec)
        self._owner_of = owner_resolver
        self._db = DatabaseTaskStore(self.engine, owner_resolver=owner_resolver)

    async def __aenter__(self) -> SqlTaskStore:
        await self.initialize()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    async def initialize(self) -> None:
        """Create the table when missing (and check the store can be reached)."""
        await self._db.initialize()

    async def close(self) -> None:
        """Close the store's connections."""
        await self.engine.dispose()

    async def save(self, task: Task, context: ServerCallContext) -> None:
        """Save ``task`` for the caller of ``context``; after a new one, bound the table.

        Raises:
            ForeignTaskError: another owner holds a task with this id.
        """
        from sqlalchemy import select

        await self._db.initialize()
        owner = self._owner_of(context)
        model = self._db.task_model
        async with self._db.async_session_maker() as session:
            held = await session.execute(select(model.owner).where(model.id == task.id))
            row = held.first()
        if row is not None and row[0] != owner:
            raise ForeignTaskError(f"task {task.id} belongs to another caller")
        if task.status.state in FINISHED:
            task = without_request_parts(task)
        await self._db.save(task, context)
        if row is None:
            await self._evict(owner)

    async def get(self, task_id: str, context: ServerCallContext) -> Task | None:
        """The caller's task ``task_id``, or ``None`` (never another owner's)."""
        return await self._db.get(task_id, context)

    async def list(self, params: ListTasksRequest, context: ServerCallContext) -> ListTasksResponse:
        """The caller's tasks, filtered and paged by the SDK's store."""
        return await self._db.list(params, context)

    async def delete(self, task_id: str, context: ServerCallContext) -> None:
        """Delete the caller's task ``task_id`` (nothing when there is none)."""
        await self._db.delete(task_id, context)

    async def _evict(self, owner: str) -> None:
        from sqlalchemy import and_, case, delete, func, select, true

        model = self._db.task_model
        cutoff = datetime.now(UTC).replace(tzinfo=None) - timedelta(seconds=self.max_age)
        finished_first = case((model.status["state"].as_string().in_(_FINISHED_NAMES), 0), else_=1)
        async with self._db.async_session_maker.begin() as session:
            aged = await session.execute(delete(model).where(model.last_updated < cutoff))
            self.evicted += int(getattr(aged, "rowcount", 0) or 0)
            for scope, limit in (
                (model.owner == owner, self.max_per_caller),
                (true(), self.max_tasks),
            ):
                count = await session.execute(select(func.count()).select_from(model).where(scope))
                over = int(count.scalar_one()) - limit
                if over <= 0:
                    continue
                oldest = (
                    select(model.id, model.owner)
                    .where(scope)
                    .order_by(finished_first, model.last_updated.asc().nulls_first())
                    .limit(over)
                )
                for task_id, task_owner in (await session.execute(oldest)).all():
                    await session.execute(
                        delete(model).where(and_(model.id == task_id, model.owner == task_owner))
                    )
                    self.evicted += 1
