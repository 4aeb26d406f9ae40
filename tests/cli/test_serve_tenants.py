"""``serve --tenant-from``: one runtime per tenant, each seeing only its own Model; an idle one
is closed (its audit flushed) and the next call makes it again from its saved state."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from examples.todo.store import STORE_ENV
from foldkit_agent import SqliteAuditSink
from foldkit_agent.cli import app
from tests.support.serving import Heard, mcp_client, serving, todos_of

TOKENS = ("--token", "alice-token=alice", "--token", "bob-token=bob")


async def test_two_tokens_are_two_tenants_and_an_idle_one_comes_back_with_its_todos(
    tmp_path: Path, todo_store: str
) -> None:
    audit = tmp_path / "audit.db"
    args = ("--mcp", "http", "--tenant-from", "principal", *TOKENS, "--tenant-idle", "0.5",
            "--audit", f"sqlite:{audit}")  # fmt: skip
    async with serving(*args, env={STORE_ENV: todo_store}) as server:
        url = f"{server.origin}/mcp"
        async with mcp_client(url, "alice-token") as alice, mcp_client(url, "bob-token") as bob:
            await alice.call_tool("create_todo", {"title": "Milk"})
            await bob.call_tool("create_todo", {"title": "Eggs"})
            await bob.call_tool("create_todo", {"title": "Jam"})
            assert [t["title"] for t in await todos_of(alice)] == ["Milk"]
            assert [t["title"] for t in await todos_of(bob)] == ["Eggs", "Jam"]
            refused = await alice.call_tool("toggle_todo", {"id": "todo-2"})  # bob's id
            assert refused.is_error
        await server.line(r"^tenant 'alice' closed \(idle\)")
        entries = SqliteAuditSink(audit).query()
        assert sorted((e.principal, e.capability) for e in entries) == [
            ("alice", "create_todo"), ("alice", "toggle_todo"),
            ("bob", "create_todo"), ("bob", "create_todo"),
        ]  # fmt: skip
        async with mcp_client(url, "alice-token") as alice:
            assert [t["title"] for t in await todos_of(alice)] == ["Milk"]


async def test_tenants_by_path_are_apart_and_the_root_path_is_no_tenant() -> None:
    async with serving("--mcp", "http", "--tenant-from", "path") as server:
        async with mcp_client(f"{server.origin}/acme/mcp") as acme:
            await acme.call_tool("create_todo", {"title": "Anvil"})
            assert [t["title"] for t in await todos_of(acme)] == ["Anvil"]
        async with mcp_client(f"{server.origin}/globex/mcp") as globex:
            assert await todos_of(globex) == []


@pytest.mark.parametrize("mode", ["legacy", "auto"])
@pytest.mark.parametrize("key", ["principal", "path"])
async def test_each_tenant_hears_its_own_list_changed_in_both_mcp_eras(key: str, mode: str) -> None:
    # the deploy/ workers serve both kinds of tenants to both eras of client: a tenant's first
    # todo makes more tools available, and only that tenant's clients are told
    args = (
        ("--token", "alice-token=alice", "--token", "bob-token=bob") if key == "principal" else ()
    )
    async with serving(
        "--mcp", "http", "--listing", "available", "--tenant-from", key, *args
    ) as server:

        def where(tenant: str) -> tuple[str, str | None]:
            if key == "path":
                return f"{server.origin}/{tenant}/mcp", None
            return f"{server.origin}/mcp", f"{tenant}-token"

        alice_heard, bob_heard = Heard(), Heard()
        async with (
            mcp_client(*where("alice"), mode=mode, heard=alice_heard) as alice,
            mcp_client(*where("bob"), mode=mode, heard=bob_heard) as bob,
        ):
            assert alice.protocol_version == ("2025-11-25" if mode == "legacy" else "2026-07-28")
            assert [t.name for t in (await bob.list_tools()).tools] == ["create_todo"]
            await alice.call_tool("create_todo", {"title": "Milk"})
            await alice_heard.next_change()
            assert "toggle_todo" in [t.name for t in (await alice.list_tools()).tools]
            assert [t.name for t in (await bob.list_tools()).tools] == ["create_todo"]
            await bob.call_tool("create_todo", {"title": "Eggs"})
            await bob_heard.next_change()  # alice's change, had it leaked, came before this
            assert (alice_heard.tools, bob_heard.tools) == (1, 1)
            assert [t["title"] for t in await todos_of(bob)] == ["Eggs"]


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (["--tenant-from", "moon"], "--tenant-from takes principal, path or claim:NAME"),
        (["--tenant-from", "principal"], "--tenant-from principal needs --token"),
        (["--tenant-from", "path", "--webmcp"], "--tenant-from applies to --mcp http and --a2a"),
        (["--tenant-from", "path", "--tenant-idle", "0"], "--tenant-idle must be a positive"),
        (["--tenant-from", "path", "--max-tenants", "0"], "--max-tenants must be at least 1"),
    ],
)
def test_bad_tenant_options_are_one_clear_line(args: list[str], said: str) -> None:
    result = CliRunner().invoke(app, ["serve", "examples.todo:runtime", "--mcp", "http", *args])
    assert result.exit_code == 2
    assert said in result.output


@pytest.mark.parametrize(
    ("target", "said"),
    [
        ("tests.support.noisy_app:runtime", "calls tests.support.noisy_app:runtime(tenant)"),
        ("examples.todo:AppAgent", "to be a runtime factory taking the tenant"),
    ],
)
def test_a_target_that_takes_no_tenant_is_refused_at_start(target: str, said: str) -> None:
    result = CliRunner().invoke(app, ["serve", target, "--mcp", "http", "--tenant-from", "path"])
    assert result.exit_code == 2
    assert said in result.output
