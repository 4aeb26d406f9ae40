"""deploy/: nginx routes each tenant to its one worker of three, state and audit in PostgreSQL.

One stack for the module (``deploy.stack``, what ``python -m deploy`` runs): a database on the
session's throwaway cluster, three real ``foldkit-agent serve --tenant-from path`` workers and
Debian's nginx. Six tenants drive it concurrently with the official MCP client; nginx names the
worker that answered in ``X-Upstream``, and its access log names the worker of every request.
The same six drive A2A with the official ``a2a-sdk`` client, from each tenant's card fetched
through nginx; the tasks are rows of the PostgreSQL table every worker shares.
"""

from __future__ import annotations

import re
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from contextlib import asynccontextmanager
from typing import Any

import anyio
import httpx
import httpx2
import mcp.types as types
import psycopg
import pytest
from a2a.types import GetTaskRequest, TaskState
from a2a.utils.errors import TaskNotFoundError
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from deploy.stack import Stack, nginx_binary, owner, stack
from foldkit_agent import IDEMPOTENCY_META, PostgresAuditSink
from tests.support.a2a_lab import card_client, skill_request
from tests.support.mcp_helpers import INITIALIZE
from tests.support.serving import todos_of

TENANTS = ("acme", "globex", "initech", "umbrella", "hooli", "stark")


@pytest.fixture(scope="module")
def deployed(postgres_cluster: Any) -> Iterator[Stack]:
    if nginx_binary() is None:
        pytest.skip("nginx is not installed: run `make nginx`")
    with postgres_cluster.database() as dsn, stack(TENANTS, workers=3, dsn=dsn) as running:
        yield running


class Seen:
    """The ``X-Upstream`` of every response an MCP client got through nginx."""

    def __init__(self) -> None:
        self.upstreams: list[str] = []

    async def response(self, response: httpx2.Response) -> None:
        self.upstreams.append(response.headers.get("x-upstream", "none"))


@asynccontextmanager
async def tenant_client(
    deployed: Stack, tenant: str, seen: Seen | None = None, url: str | None = None, **options: Any
) -> AsyncIterator[Client]:
    """The official MCP client of ``tenant``, through nginx (or at ``url``: one worker
    itself), with the tenant's token."""
    hooks = {"response": [seen.response]} if seen is not None else {}
    http = httpx2.AsyncClient(
        headers={"Authorization": f"Bearer {deployed.tokens[tenant]}"},
        timeout=30,
        event_hooks=hooks,
    )
    async with Client(
        streamable_http_client(url or deployed.url(tenant), http_client=http), **options
    ) as c:
        yield c


def servers(deployed: Stack) -> list[str]:
    return [w.address for w in deployed.workers]


async def create(client: Client, title: str) -> str:
    """``create_todo``, answered once saved; the invocation id of the answer."""
    result = await client.call_tool("create_todo", {"title": title})
    assert not result.is_error, result
    assert result.structured_content is not None
    assert result.structured_content["status"] == "completed"
    return str(result.structured_content["invocation_id"])


async def every_tenant_at_once(drive: Callable[[str], Awaitable[None]]) -> None:
    """``drive(tenant)`` for the six tenants concurrently."""
    with anyio.fail_after(120):
        async with anyio.create_task_group() as tg:
            for tenant in TENANTS:
                tg.start_soon(drive, tenant)


def created_in_audit(deployed: Stack) -> dict[str, Any]:
    """The PostgreSQL audit's ``create_todo`` entries, by invocation id."""
    audit = PostgresAuditSink(deployed.dsn)
    try:
        return {e.invocation_id: e for e in audit.query(capability="create_todo", limit=10_000)}
    finally:
        audit.close()


async def test_six_tenants_at_once_each_land_on_the_worker_the_ring_names(
    deployed: Stack,
) -> None:
    seen = {tenant: Seen() for tenant in TENANTS}
    answered: dict[str, list[str]] = {tenant: [] for tenant in TENANTS}

    async def drive(tenant: str) -> None:
        async with tenant_client(deployed, tenant, seen[tenant]) as client:
            for n in range(3):
                answered[tenant].append(await create(client, f"{tenant} {n}"))
            assert [t["title"] for t in await todos_of(client)] == [
                f"{tenant} {n}" for n in range(3)
            ]

    await every_tenant_at_once(drive)
    ring = servers(deployed)
    for tenant in TENANTS:
        assert set(seen[tenant].upstreams) == {owner(tenant, ring)}, tenant
    # nginx's own log: every request of a tenant, handshake and streams included, went to it
    log = (deployed.root / "access.log").read_text()
    routed = set(re.findall(r"tenant=(\S+) upstream=(\S+)", log))
    assert {(t, u) for t, u in routed if t in TENANTS} == {(t, owner(t, ring)) for t in TENANTS}
    # every answered call is in the PostgreSQL audit, under its tenant
    entries = created_in_audit(deployed)
    for tenant, ids in answered.items():
        assert {(entries[i].principal, entries[i].decision) for i in ids} == {
            (tenant, "dispatched")
        }


async def test_a_tenants_token_is_served_only_at_its_own_path(deployed: Stack) -> None:
    foreign = {"Authorization": f"Bearer {deployed.tokens['globex']}"}
    # refused at the worker's edge: no session opened for acme, no body read
    init = httpx2.post(
        deployed.url("acme"),
        json=INITIALIZE,
        headers={**foreign, "Accept": "application/json, text/event-stream"},
        timeout=30,
    )
    assert init.status_code == 403
    assert "mcp-session-id" not in init.headers
    card = httpx2.get(deployed.card_url("acme"), headers=foreign, timeout=30)
    assert card.status_code == 403
    sent = httpx2.post(
        f"{deployed.a2a_base('acme')}/a2a/jsonrpc",
        content=b"{not json",
        headers=foreign,
        timeout=30,
    )
    assert sent.status_code == 403
    async with tenant_client(deployed, "acme") as acme:
        assert "not mine" not in [t["title"] for t in await todos_of(acme)]


@asynccontextmanager
async def tenant_a2a(deployed: Stack, tenant: str, seen: Seen | None = None) -> AsyncIterator[Any]:
    """The official A2A client of ``tenant``, made by the SDK's client factory from the card
    fetched through nginx, with the tenant's token."""
    hooks = {"response": [seen.response]} if seen is not None else {}
    async with (
        httpx.AsyncClient(
            headers={"Authorization": f"Bearer {deployed.tokens[tenant]}"},
            timeout=30,
            event_hooks=hooks,
        ) as http,
        card_client(http, deployed.a2a_base(tenant)) as client,
    ):
        yield client


async def a2a_create(client: Any, title: str) -> Any:
    """``create_todo`` over A2A; its task, answered (``COMPLETED``) once saved."""
    events = [
        event async for event in client.send_message(skill_request("create_todo", {"title": title}))
    ]
    tasks = [event.task for event in events if event.HasField("task")]
    assert tasks, events
    assert tasks[-1].status.state == TaskState.TASK_STATE_COMPLETED, tasks[-1]
    return tasks[-1]


def task_rows(dsn: str) -> dict[str, str]:
    """The PostgreSQL task table the workers share: task id -> owner."""
    with psycopg.connect(dsn) as db:
        return dict(db.execute("SELECT id, owner FROM tasks").fetchall())


async def test_six_tenants_over_a2a_at_once_land_on_their_mcp_worker_with_tasks_in_postgres(
    deployed: Stack,
) -> None:
    seen = {tenant: Seen() for tenant in TENANTS}
    cards: dict[str, Any] = {}
    tasks: dict[str, Any] = {}

    async def drive(tenant: str) -> None:
        async with httpx.AsyncClient(timeout=30) as http:
            cards[tenant] = (
                await http.get(
                    deployed.card_url(tenant),
                    headers={"Authorization": f"Bearer {deployed.tokens[tenant]}"},
                )
            ).json()
        async with tenant_a2a(deployed, tenant, seen[tenant]) as client:
            tasks[tenant] = await a2a_create(client, f"{tenant} over a2a")

    await every_tenant_at_once(drive)
    ring = servers(deployed)
    for tenant in TENANTS:
        # the card names nginx, so every call after it went through nginx too
        assert [i["url"] for i in cards[tenant]["supportedInterfaces"]] == [
            f"{deployed.a2a_base(tenant)}/a2a/jsonrpc",
            f"{deployed.a2a_base(tenant)}/a2a/rest",
        ]
        # card and calls on the worker that holds the tenant's MCP (the ring's)
        assert set(seen[tenant].upstreams) == {owner(tenant, ring)}, tenant
    entries = created_in_audit(deployed)
    rows = task_rows(deployed.dsn)
    for tenant, task in tasks.items():
        entry = entries[task.id]  # an A2A call's invocation id is its task id
        assert (entry.transport, entry.principal, entry.decision) == ("a2a", tenant, "dispatched")
        assert rows[task.id] == f"{len(tenant)}:{tenant}/{tenant}"
    for tenant in TENANTS:
        async with tenant_client(deployed, tenant) as client:
            assert f"{tenant} over a2a" in [t["title"] for t in await todos_of(client)]


async def test_an_a2a_task_answered_before_kill_9_is_read_after_the_restart(
    deployed: Stack,
) -> None:
    ring = servers(deployed)
    tenant = "initech"
    async with tenant_a2a(deployed, tenant) as client:
        done = await a2a_create(client, "before the a2a kill")
    victim = deployed.worker_at(owner(tenant, ring))
    victim.kill()
    victim.start()
    assert victim.address == owner(tenant, ring)
    async with tenant_a2a(deployed, tenant) as client:
        found = await client.get_task(GetTaskRequest(id=done.id))
        assert found.status.state == TaskState.TASK_STATE_COMPLETED
        assert found.artifacts[0].name == "result"
    async with tenant_client(deployed, tenant) as client:
        assert "before the a2a kill" in [t["title"] for t in await todos_of(client)]
    # another tenant's path never reads it, even through the same worker pool
    other = next(t for t in TENANTS if t != tenant)
    async with tenant_a2a(deployed, other) as client:
        with pytest.raises(TaskNotFoundError):
            await client.get_task(GetTaskRequest(id=done.id))


async def test_a_killed_worker_restarts_with_every_saved_todo_and_list_changed_reaches_its_client(
    deployed: Stack,
) -> None:
    ring = servers(deployed)
    victim = deployed.worker_at(owner("stark", ring))
    its_tenants = [t for t in TENANTS if owner(t, ring) == victim.address]
    saved: dict[str, list[str]] = {}
    for tenant in its_tenants:
        async with tenant_client(deployed, tenant) as client:
            await create(client, f"{tenant} before the kill")
            saved[tenant] = [t["title"] for t in await todos_of(client)]
    # a handshake-era session open on the worker when it dies
    init = httpx2.post(
        deployed.url("stark"),
        json=INITIALIZE,
        headers={
            "Authorization": f"Bearer {deployed.tokens['stark']}",
            "Accept": "application/json, text/event-stream",
        },
        timeout=30,
    )
    session = init.headers["mcp-session-id"]

    victim.kill()
    down = httpx2.post(
        deployed.url("stark"),
        json=INITIALIZE,
        headers={"Authorization": f"Bearer {deployed.tokens['stark']}"},
        timeout=30,
    )
    assert down.status_code == 502  # not opened on another worker meanwhile
    assert down.headers["x-upstream"] == victim.address
    victim.start()
    assert victim.address == owner("stark", ring)

    for tenant in its_tenants:
        async with tenant_client(deployed, tenant) as client:
            assert [t["title"] for t in await todos_of(client)] == saved[tenant]
    # the old session died with its worker: the client is told to start a new one
    gone = httpx2.post(
        deployed.url("stark"),
        json={"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
        headers={
            "Authorization": f"Bearer {deployed.tokens['stark']}",
            "Accept": "application/json, text/event-stream",
            "Mcp-Session-Id": session,
            "Mcp-Protocol-Version": INITIALIZE["params"]["protocolVersion"],
        },
        timeout=30,
    )
    assert gone.status_code == 404

    # a new handshake-era session hears list_changed on its GET stream through nginx when
    # another client of its tenant changes what is available
    changed = anyio.Event()

    async def on_message(message: Any) -> None:
        if isinstance(getattr(message, "root", message), types.ToolListChangedNotification):
            changed.set()

    async with tenant_client(
        deployed, "stark", mode="legacy", message_handler=on_message
    ) as legacy:
        before = {t.name for t in (await legacy.list_tools()).tools}
        assert "clear_selection" not in before
        async with tenant_client(deployed, "stark") as other:
            todo_id = (await todos_of(other))[0]["id"]
            selected = await other.call_tool("select_todo", {"id": todo_id})
            assert not selected.is_error
        with anyio.fail_after(30):
            await changed.wait()
        assert "clear_selection" in {t.name for t in (await legacy.list_tools()).tools}


def saved_titles(dsn: str, tenant: str) -> list[str]:
    """The titles of ``tenant``'s todos in the PostgreSQL store every worker shares."""
    with psycopg.connect(dsn) as db:
        rows = db.execute("SELECT title FROM todos WHERE tenant = %s", (tenant,)).fetchall()
    return [title for (title,) in rows]


async def test_a_retried_create_todo_with_one_key_makes_one_todo_across_two_workers(
    deployed: Stack,
) -> None:
    tenant = "hooli"
    home = deployed.worker_at(owner(tenant, servers(deployed)))
    other = next(w for w in deployed.workers if w is not home)
    elsewhere = f"http://127.0.0.1:{other.port}/{tenant}/mcp"  # as after the tenant moved
    args = {"title": "hooli retried"}
    key = {IDEMPOTENCY_META: "hooli-retried-1"}
    async with tenant_client(deployed, tenant) as via_nginx:
        first = await via_nginx.call_tool("create_todo", args, meta=key)
    async with tenant_client(deployed, tenant, url=elsewhere) as direct:
        again = await direct.call_tool("create_todo", args, meta=key)
    assert first.structured_content is not None
    assert first.structured_content["status"] == "completed"
    assert again.structured_content == first.structured_content  # the first answer
    assert saved_titles(deployed.dsn, tenant).count("hooli retried") == 1

    # two tries racing with one key, one on each worker: one runs, the other does not
    raced = {IDEMPOTENCY_META: "hooli-raced-1"}
    answers: list[Any] = []

    async def attempt(url: str | None) -> None:
        async with tenant_client(deployed, tenant, url=url) as client:
            answers.append(
                await client.call_tool("create_todo", {"title": "hooli raced"}, meta=raced)
            )

    with anyio.fail_after(60):
        async with anyio.create_task_group() as tg:
            tg.start_soon(attempt, None)
            tg.start_soon(attempt, elsewhere)
    ran = [
        a.structured_content for a in answers if a.structured_content.get("status") == "completed"
    ]
    assert ran  # at least one answered "completed": the one that ran, or its replay
    others = [a.structured_content for a in answers if a.structured_content not in ran]
    assert all(o.get("reason") == "in_progress" for o in others)
    assert len({r["invocation_id"] for r in ran}) == 1
    assert saved_titles(deployed.dsn, tenant).count("hooli raced") == 1
    audit = PostgresAuditSink(deployed.dsn)
    try:
        entries = audit.query(capability="create_todo", decision="dispatched", limit=10_000)
    finally:
        audit.close()
    assert [e.invocation_id for e in entries].count(ran[0]["invocation_id"]) == 1
