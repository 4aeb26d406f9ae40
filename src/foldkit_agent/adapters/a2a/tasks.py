"""The A2A task store :func:`~foldkit_agent.adapters.a2a.a2a_app` uses by default: bounded.

``a2a-sdk``'s ``InMemoryTaskStore`` keeps every task (with the request message that created
it) for as long as the process runs, so each call grows the server for ever. A
:class:`BoundedTaskStore` keeps the same tasks, scoped to their owner as the SDK's store does,
within three bounds:

=====================  =======  ==========================================================
bound                  default  what happens past it
=====================  =======  ==========================================================
``max_tasks``          10,000   the oldest finished task (``COMPLETED``, ``FAILED``,
                                ``CANCELED``, ``REJECTED``) is evicted, or, when none is
                                finished, the oldest task
``max_per_caller``     1,000    the same, among that owner's tasks only
``max_age``            3,600 s  a task not updated for this long is evicted
=====================  =======  ==========================================================

"Oldest" is by last update. An evicted task is gone: ``GetTask`` answers "task not found". A
finished task also drops the parts of the caller's messages in its history (the request's
input, up to the body limit), since nothing reads them once the call has ended; the agent's
messages, the status and the artifacts stay.

Any other ``a2a.server.tasks.TaskStore`` can be passed as ``a2a_app(..., task_store=...)``,
for example :class:`~foldkit_agent.adapters.a2a.SqlTaskStore`: the SDK's
``DatabaseTaskStore`` on SQLite or PostgreSQL, within the same bounds
(``pip install 'foldkit-agent[a2a-db]'``).

Example:
    >>> store = BoundedTaskStore(max_tasks=1000, max_age=600)
    >>> app = a2a_app(rt, name="todo", version="1.0", base_url=url, task_store=store)
"""

from __future__ import annotations

import hashlib
import time
from collections import OrderedDict
from collections.abc import Callable
from typing import Final

from a2a.server.context import ServerCallContext
from a2a.server.owner_resolver import OwnerResolver, resolve_user_scope
from a2a.server.tasks import InMemoryTaskStore, TaskStore
from a2a.types import ListTasksRequest, ListTasksResponse, Role, Task, TaskState

from ...edge.callers import DEFAULT_TASK_MAX_AGE, DEFAULT_TASKS, DEFAULT_TASKS_PER_CALLER
from ...edge.tenants import PATH_TENANT_KEY

__all__ = [
    "DEFAULT_MAX_TASKS",
    "DEFAULT_MAX_TASKS_PER_CALLER",
    "DEFAULT_TASK_MAX_AGE",
    "BoundedTaskStore",
    "tenant_owner",
]

DEFAULT_MAX_TASKS: Final = DEFAULT_TASKS
DEFAULT_MAX_TASKS_PER_CALLER: Final = DEFAULT_TASKS_PER_CALLER

FINISHED: Final = frozenset(
    {
        TaskState.TASK_STATE_COMPLETED,
        TaskState.TASK_STATE_FAILED,
        TaskState.TASK_STATE_CANCELED,
        TaskState.TASK_STATE_REJECTED,
    }
)
"""The states a task never leaves."""

_OWNER: Final = "foldkit_agent.a2a.owner"

MAX_OWNER: Final = 255
"""The longest owner the SDK's task table holds (its ``owner`` column is ``VARCHAR(255)``)."""


def tenant_owner(context: ServerCallContext) -> str:
    """The owner of a call's tasks: the caller (the SDK's ``resolve_user_scope``: the
    authenticated user name, every anonymous caller one owner), within the tenant of the
    path it came through when it came through one (``serve --tenant-from path``).

    So a task of tenant ``alice`` is never found through ``/bob/...``, whoever asks and with
    whatever ``tenant`` the body names (:func:`~foldkit_agent.edge.path_tenant`). The
    default owner of :class:`BoundedTaskStore` and
    :class:`~foldkit_agent.adapters.a2a.SqlTaskStore`.

    Returns:
        the user name alone outside a tenant's path; else ``"<len>:<tenant>/<user>"`` (the
        length makes it unambiguous), or ``"sha256:<hex>"`` of that when it is longer than
        :data:`MAX_OWNER` characters.

    Example:
        >>> tenant_owner(ctx_of("/alice/a2a/jsonrpc", user="alice"))
        '5:alice/alice'
    """
    user = resolve_user_scope(context)
    tenant = context.state.get(PATH_TENANT_KEY)
    if not isinstance(tenant, str) or not tenant:
        return user
    owner = f"{len(tenant)}:{tenant}/{user}"
    if len(owner) <= MAX_OWNER:
        return owner
    return "sha256:" + hashlib.sha256(owner.encode()).hexdigest()


Key = tuple[str, str]  # (owner, task id)


class _Held:
    """Keys in order of last update, finished ones apart (evicted first)."""

    __slots__ = ("finished", "running")

    def __init__(self) -> None:
        self.finished: OrderedDict[Key, float] = OrderedDict()
        self.running: OrderedDict[Key, float] = OrderedDict()

    def __len__(self) -> int:
        return len(self.finished) + len(self.running)

    def put(self, key: Key, at: float, finished: bool) -> None:
        self.discard(key)
        (self.finished if finished else self.running)[key] = at

    def discard(self, key: Key) -> None:
        self.finished.pop(key, None)
        self.running.pop(key, None)

    def victim(self) -> Key:
        return next(iter(self.finished or self.running))

    def oldest(self) -> tuple[Key, float] | None:
        """The key updated longest ago, and when."""
        heads = [next(iter(d.items())) for d in (self.finished, self.running) if d]
        return min(heads, key=lambda item: item[1]) if heads else None


class TaskBounds(TaskStore):
    """What the bounded task stores share: their three bounds, checked, and ``evicted``.

    Raises:
        ValueError: a bound below 1 (or ``max_age`` not positive).
    """

    def __init__(self, max_tasks: int, max_per_caller: int, max_age: float) -> None:
        if max_tasks < 1 or max_per_caller < 1:
            raise ValueError("max_tasks and max_per_caller must be at least 1")
        if not max_age > 0:
            raise ValueError(f"max_age must be a positive number of seconds, got {max_age}")
        self.max_tasks = max_tasks
        self.max_per_caller = max_per_caller
        self.max_age = max_age
        self.evicted = 0
        """Tasks dropped past a bound so far."""


class BoundedTaskStore(TaskBounds):
    """A ``TaskStore`` in memory, bounded by count (overall and per owner) and age.

    Args:
        max_tasks: most tasks held in all (default 10,000).
        max_per_caller: most tasks held for one owner (default 1,000).
        max_age: seconds after its last update when a task is evicted (default 3,600).
        owner_resolver: the owner of a call (default :func:`tenant_owner`: the authenticated
            user name, every anonymous caller one owner, within the path's tenant).
        clock: seconds, monotonic (for tests).

    Raises:
        ValueError: a bound below 1 (or ``max_age`` not positive).

    ``len(store)`` is the number of tasks held.
    """

    def __init__(
        self,
        *,
        max_tasks: int = DEFAULT_MAX_TASKS,
        max_per_caller: int = DEFAULT_MAX_TASKS_PER_CALLER,
        max_age: float = DEFAULT_TASK_MAX_AGE,
        owner_resolver: OwnerResolver = tenant_owner,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        super().__init__(max_tasks, max_per_caller, max_age)
        self._owner_of = owner_resolver
        self._clock = clock
        self._tasks = InMemoryTaskStore(owner_resolver=_stored_owner)
        self._all = _Held()
        self._owners: dict[str, _Held] = {}

    def __len__(self) -> int:
        return len(self._all)

    async def save(self, task: Task, context: ServerCallContext) -> None:
        """Save ``task`` for the caller of ``context``, then evict past the bounds."""
        owner = self._owner_of(context)
        finished = task.status.state in FINISHED
        if finished:
            task = without_request_parts(task)
        await self._tasks.save(task, _as_owner(owner))
        now = self._clock()
        key = (owner, task.id)
        self._all.put(key, now, finished)
        self._owners.setdefault(owner, _Held()).put(key, now, finished)
        await self._evict(owner, now)

    async def get(self, task_id: str, context: ServerCallContext) -> Task | None:
        """The caller's task ``task_id``, or ``None`` (never another owner's)."""
        return await self._tasks.get(task_id, _as_owner(self._owner_of(context)))

    async def list(self, params: ListTasksRequest, context: ServerCallContext) -> ListTasksResponse:
        """The caller's tasks, filtered and paged as the SDK's in-memory store does."""
        return await self._tasks.list(params, _as_owner(self._owner_of(context)))

    async def delete(self, task_id: str, context: ServerCallContext) -> None:
        """Delete the caller's task ``task_id`` (nothing when there is none)."""
        await self._drop((self._owner_of(context), task_id))

    async def _drop(self, key: Key) -> None:
        owner, task_id = key
        self._all.discard(key)
        held = self._owners.get(owner)
        if held is not None:
            held.discard(key)
            if not held:
                del self._owners[owner]
        await self._tasks.delete(task_id, _as_owner(owner))

    async def _evict(self, owner: str, now: float) -> None:
        while (oldest := self._all.oldest()) is not None and now - oldest[1] > self.max_age:
            await self._gone(oldest[0])
        held = self._owners.get(owner)
        while held is not None and len(held) > self.max_per_caller:
            await self._gone(held.victim())
        while len(self._all) > self.max_tasks:
            await self._gone(self._all.victim())

    async def _gone(self, key: Key) -> None:
        self.evicted += 1
        await self._drop(key)


def _stored_owner(context: ServerCallContext) -> str:
    return str(context.state[_OWNER])


def _as_owner(owner: str) -> ServerCallContext:
    return ServerCallContext(state={_OWNER: owner})


def without_request_parts(task: Task) -> Task:
    """``task`` with the parts of the caller's messages in its history removed."""
    if not any(m.role == Role.ROLE_USER and m.parts for m in task.history):
        return task
    kept = Task()
    kept.CopyFrom(task)
    for message in kept.history:
        if message.role == Role.ROLE_USER:
            del message.parts[:]
    return kept
