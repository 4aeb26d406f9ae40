"""``serve --tenant-from path|principal --a2a``: A2A per tenant, on the runtime MCP serves.

Each tenant's path has its own card naming its own URLs; a task of one tenant is never read,
cancelled or subscribed to through another tenant's path, whatever ``tenant`` the body names;
a token of one tenant is refused at another's path before anything of the request is read or
opened (no MCP session either).
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import httpx
import pytest
from a2a.types import (
    CancelTaskRequest,
    GetTaskRequest,
    ListTasksRequest,
    SubscribeToTaskRequest,
    TaskState,
)
from a2a.utils.errors import TaskNotFoundError

from foldkit_agent.adapters.a2a import EXTENSION_URI, SqlTaskStore
from foldkit_agent.adapters.a2a.tasks import tenant_owner
from foldkit_agent.edge.tenants import PATH_TENANT_KEY
from tests.support.a2a_lab import call_context, card_client, skill_request
from tests.support.mcp_helpers import INITIALIZE
from tests.support.serving import mcp_client, serving, todos_of

TOKENS = ("--token", "alice-token=alice", "--token", "bob-token=bob")
A2A = {"A2A-Version": "1.0"}


@asynccontextmanager
async def tenant_a2a(
    base: str, token: str | None = None, *, streaming: bool = False
) -> AsyncIterator[Any]:
    """The official A2A client built from the card at ``base`` (a tenant's path)."""
    headers = {} if token is None else {"Authorization": f"Bearer {token}"}
    async with (
        httpx.AsyncClient(headers=headers, timeout=30) as http,
        card_client(http, base, streaming=streaming) as client,
    ):
        yield client


async def last_task(client: Any, request: Any) -> Any:
    events = [event async for event in client.send_message(request)]
    tasks = [event.task for event in events if event.HasField("task")]
    assert tasks, events
    return tasks[-1]


def rpc(method: str, params: dict[str, Any]) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": 1, "method": method, "params": params}


async def test_each_tenants_card_names_its_own_urls_and_its_a2a_shares_the_mcp_runtime(
    a2a_task_store: str,
) -> None:
    args = ("--mcp", "http", "--a2a", "--tenant-from", "path", *TOKENS,
            "--a2a-task-store", a2a_task_store)  # fmt: skip
    async with serving(*args) as server:
        origin = server.origin
        async with httpx.AsyncClient(timeout=30) as http:
            for tenant in ("alice", "bob"):
                card = await http.get(
                    f"{origin}/{tenant}/.well-known/agent-card.json",
                    headers={"Authorization": f"Bearer {tenant}-token"},
                )
                assert card.status_code == 200
                assert [i["url"] for i in card.json()["supportedInterfaces"]] == [
                    f"{origin}/{tenant}/a2a/jsonrpc",
                    f"{origin}/{tenant}/a2a/rest",
                ]
            # with --token a tenant's card is its callers': it opens nothing for a stranger
            anonymous = await http.get(f"{origin}/alice/.well-known/agent-card.json")
            assert anonymous.status_code == 401
            assert "bearer token of your tenant" in anonymous.json()["error"]
        async with tenant_a2a(f"{origin}/alice", "alice-token") as alice:
            done = await last_task(alice, skill_request("create_todo", {"title": "Milk"}))
            assert done.status.state == TaskState.TASK_STATE_COMPLETED
        async with mcp_client(f"{origin}/alice/mcp", "alice-token") as mcp:
            assert [t["title"] for t in await todos_of(mcp)] == ["Milk"]
        async with mcp_client(f"{origin}/bob/mcp", "bob-token") as mcp:
            assert await todos_of(mcp) == []
    # the task's row is owned by alice within her tenant
    async with SqlTaskStore(a2a_task_store) as store:
        owner = call_context("alice")
        owner.state[PATH_TENANT_KEY] = "alice"
        assert tenant_owner(owner) == "5:alice/alice"
        found = await store.get(done.id, owner)
        assert found is not None
        assert found.status.state == TaskState.TASK_STATE_COMPLETED
        assert await store.get(done.id, call_context("alice")) is None  # not outside the path


async def test_a_task_is_never_reached_through_another_tenants_path(a2a_task_store: str) -> None:
    # no tokens: every caller is the same anonymous owner, so only the path keeps them apart
    args = ("--a2a", "--tenant-from", "path", "--a2a-task-store", a2a_task_store)
    async with serving(*args) as server:
        origin = server.origin
        # issue 21: anyone may open (and evict) a tenant's runtime here: serve says so
        warned = await server.line(r"^warning: --tenant-from path without --token")
        assert "authenticate each path at a proxy" in warned
        async with tenant_a2a(f"{origin}/alice") as alice:
            done = await last_task(alice, skill_request("create_todo", {"title": "Milk"}))
            assert done.status.state == TaskState.TASK_STATE_COMPLETED
            assert (await alice.get_task(GetTaskRequest(id=done.id))).id == done.id
        async with tenant_a2a(f"{origin}/bob", streaming=True) as bob:
            with pytest.raises(TaskNotFoundError):
                await bob.get_task(GetTaskRequest(id=done.id))
            with pytest.raises(TaskNotFoundError):
                await bob.cancel_task(CancelTaskRequest(id=done.id))
            with pytest.raises(TaskNotFoundError):
                async for _event in bob.subscribe(SubscribeToTaskRequest(id=done.id)):
                    pass
            # A2A's own tenant field names alice: it selects nothing
            with pytest.raises(TaskNotFoundError):
                await bob.get_task(GetTaskRequest(id=done.id, tenant="alice"))
        async with httpx.AsyncClient(timeout=30, headers=A2A) as http:
            read = await http.post(
                f"{origin}/bob/a2a/jsonrpc", json=rpc("GetTask", {"id": done.id, "tenant": "alice"})
            )
            assert read.json()["error"]["code"] == -32001  # task not found
            rest = await http.get(f"{origin}/bob/a2a/rest/tasks/{done.id}")
            assert rest.status_code == 404
            # a SendMessage at alice's path naming bob as its tenant is refused, nothing runs
            sent = await http.post(
                f"{origin}/alice/a2a/jsonrpc",
                json=rpc(
                    "SendMessage",
                    {
                        "tenant": "bob",
                        "message": {
                            "role": "ROLE_USER",
                            "messageId": "m-1",
                            "parts": [{"data": {"title": "Eggs"}}],
                        },
                        "metadata": {EXTENSION_URI: {"skill": "create_todo"}},
                    },
                ),
            )
            task = sent.json()["result"]["task"]
            assert task["status"]["state"] == "TASK_STATE_REJECTED"
            assert "not available" in task["status"]["message"]["parts"][0]["text"]
        async with tenant_a2a(f"{origin}/bob") as bob:
            assert list((await bob.list_tasks(ListTasksRequest())).tasks) == []


async def test_a_token_of_alice_is_refused_at_bobs_path_before_its_body_or_a_session() -> None:
    args = ("--mcp", "http", "--a2a", "--tenant-from", "path", *TOKENS)
    async with serving(*args) as server:
        origin = server.origin
        alice = {"Authorization": "Bearer alice-token", "Content-Type": "application/json"}
        async with httpx.AsyncClient(timeout=30, headers=alice) as http:
            # the handshake era's initialize: no session is created for bob
            init = await http.post(
                f"{origin}/bob/mcp",
                json=INITIALIZE,
                headers={"Accept": "application/json, text/event-stream"},
            )
            assert init.status_code == 403
            assert "mcp-session-id" not in init.headers
            assert init.json()["error"]["message"].startswith("This bearer token is not one")
            # a body that is not even JSON is refused the same: it was never read
            for path in ("/bob/mcp", "/bob/a2a/jsonrpc"):
                garbage = await http.post(origin + path, content=b"{not json")
                assert garbage.status_code == 403
                assert garbage.json()["error"]["code"] == -32600
            rest = await http.post(f"{origin}/bob/a2a/rest/message:send", content=b"{not json")
            assert rest.status_code == 403
            assert rest.json()["error"]["status"] == "forbidden"
            card = await http.get(f"{origin}/bob/.well-known/agent-card.json")
            assert card.status_code == 403
            # at alice's own path the same token is served
            own = await http.post(
                f"{origin}/alice/mcp",
                json=INITIALIZE,
                headers={"Accept": "application/json, text/event-stream"},
            )
            assert own.status_code == 200
            assert own.headers["mcp-session-id"]
        async with tenant_a2a(f"{origin}/bob", "bob-token") as bob:
            done = await last_task(bob, skill_request("create_todo", {"title": "Eggs"}))
            assert done.status.state == TaskState.TASK_STATE_COMPLETED


async def test_principal_tenants_share_one_card_url_fetched_with_their_token() -> None:
    args = ("--mcp", "http", "--a2a", "--tenant-from", "principal", *TOKENS)
    async with serving(*args) as server:
        origin = server.origin
        async with httpx.AsyncClient(timeout=30) as http:
            # the card names no tenant: without a token there is nobody to build it for
            anonymous = await http.get(f"{origin}/.well-known/agent-card.json")
            assert anonymous.status_code == 401
            urls = set()
            for tenant in ("alice", "bob"):
                card = await http.get(
                    f"{origin}/.well-known/agent-card.json",
                    headers={"Authorization": f"Bearer {tenant}-token"},
                )
                assert card.status_code == 200
                urls.add(tuple(i["url"] for i in card.json()["supportedInterfaces"]))
            assert urls == {(f"{origin}/a2a/jsonrpc", f"{origin}/a2a/rest")}
        async with tenant_a2a(origin, "alice-token") as alice:
            done = await last_task(alice, skill_request("create_todo", {"title": "Milk"}))
            assert done.status.state == TaskState.TASK_STATE_COMPLETED
        async with tenant_a2a(origin, "bob-token") as bob:
            with pytest.raises(TaskNotFoundError):
                await bob.get_task(GetTaskRequest(id=done.id))
        async with mcp_client(f"{origin}/mcp", "alice-token") as mcp:
            assert [t["title"] for t in await todos_of(mcp)] == ["Milk"]
        async with mcp_client(f"{origin}/mcp", "bob-token") as mcp:
            assert await todos_of(mcp) == []


async def test_f21_a_send_naming_another_tenant_is_rejected_and_audited_as_its_caller(
    tmp_path: Any,
) -> None:
    audit = tmp_path / "audit.jsonl"
    args = ("--mcp", "http", "--a2a", "--tenant-from", "path", *TOKENS,
            "--audit", f"jsonl:{audit}")  # fmt: skip
    alice = {"Authorization": "Bearer alice-token", **A2A}
    async with serving(*args) as server, httpx.AsyncClient(timeout=30, headers=alice) as http:
        sent = await http.post(
            f"{server.origin}/alice/a2a/jsonrpc",
            json=rpc(
                "SendMessage",
                {
                    "tenant": "bob",
                    "message": {
                        "role": "ROLE_USER",
                        "messageId": "m-1",
                        "parts": [{"data": {"title": "Eggs"}}],
                    },
                    "metadata": {EXTENSION_URI: {"skill": "create_todo"}},
                },
            ),
        )
        task = sent.json()["result"]["task"]
        assert task["status"]["state"] == "TASK_STATE_REJECTED"
        async with mcp_client(f"{server.origin}/alice/mcp", "alice-token") as mcp:
            assert await todos_of(mcp) == []  # nothing ran
    lines = [line for line in audit.read_text().splitlines() if line.strip()]
    entries = [json.loads(line) for line in lines]
    assert [
        (e["invocation_id"], e["decision"], e["principal"], e["capability"], e["outcome"])
        for e in entries
    ] == [(task["id"], "refused", "alice", "create_todo", "AgentAuthorizationError")]
