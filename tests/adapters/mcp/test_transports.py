"""The MCP adapter over real transports: streamable HTTP (uvicorn on loopback) and stdio
(``foldkit-agent serve examples.todo:runtime --mcp stdio`` in a subprocess).

Field reports: F01 over HTTP in both eras, F18 (bearer principal, arguments refused, stdio fails
closed), F23 (10 concurrent calls from separate clients apply exactly 10 Messages).
"""

from __future__ import annotations

import sys
from collections.abc import AsyncGenerator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import httpx2
import mcp.types as types
import pytest
from mcp import Client, StdioServerParameters
from mcp.client.streamable_http import streamable_http_client
from mcp.server.auth.provider import AccessToken

from examples.todo import run_todo
from foldkit_agent.adapters.mcp import StaticTokenVerifier, http_app
from tests.support.mcp_cart import AddedItem, Increment, RemovedItem, run_cart
from tests.support.mcp_helpers import connected
from tests.support.paths import ROOT
from tests.support.serving import served

pytestmark = pytest.mark.filterwarnings("ignore:resources/subscribe is removed")


MODES = ["legacy", "auto"]

VERIFIER = StaticTokenVerifier(
    {
        "alice-token": AccessToken(
            token="alice-token", client_id="t", scopes=["todos:delete"], subject="alice"
        ),
        "bob-token": AccessToken(token="bob-token", client_id="t", scopes=[], subject="bob"),
    }
)


@asynccontextmanager
async def serving(rt: Any, verifier: Any = VERIFIER) -> AsyncGenerator[str]:
    """Serve ``rt`` over streamable HTTP on a free loopback port until the block ends."""
    async with served(http_app(rt, name="test", version="1", token_verifier=verifier)) as origin:
        yield f"{origin}/mcp"


def transport(url: str, token: str | None) -> Any:
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    return streamable_http_client(url, http_client=httpx2.AsyncClient(headers=headers, timeout=10))


async def alice_approves(_context: Any, _params: Any) -> types.ElicitResult:
    """alice, asked by her client to approve delete_todo (confirm=True): yes."""
    return types.ElicitResult(action="accept", content={"approve": True})


# -- streamable HTTP ------------------------------------------------------------------------


@pytest.mark.parametrize("mode", MODES)
async def test_http_list_call_and_bearer_principal_f18(mode: str) -> None:
    async with run_todo() as (_running, rt), serving(rt) as url:
        async with (
            Client(
                transport(url, "alice-token"), mode=mode, elicitation_callback=alice_approves
            ) as alice,
            Client(transport(url, "bob-token"), mode=mode) as bob,
        ):
            assert alice.protocol_version == ("2025-11-25" if mode == "legacy" else "2026-07-28")
            created = await alice.call_tool("create_todo", {"title": "Milk"})
            assert not created.is_error
            await alice.call_tool("select_todo", {"id": "todo-1"})
            assert "delete_todo" in [t.name for t in (await bob.list_tools()).tools]
            spoof = await bob.call_tool("delete_todo", {"principal": "admin"})
            assert spoof.is_error
            assert spoof.structured_content is not None
            assert spoof.structured_content["_tag"] == "AgentInvalidInputError"
            denied = await bob.call_tool("delete_todo", {}, meta={"principal": "alice"})
            assert denied.is_error
            assert denied.structured_content is not None
            assert denied.structured_content["_tag"] == "AgentAuthorizationError"
            assert "bob may not delete" in denied.structured_content["message"]
            deleted = await alice.call_tool("delete_todo", {})
            assert not deleted.is_error
        assert rt.audit is not None
        who = [(e.principal, e.capability, e.decision) for e in rt.audit.entries()[-3:]]
        assert who == [
            ("bob", "delete_todo", "refused"),
            ("bob", "delete_todo", "refused"),
            ("alice", "delete_todo", "dispatched"),
        ]


async def test_http_rejects_missing_token_and_foreign_host() -> None:
    async with run_todo() as (_running, rt), serving(rt) as url:
        body = {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}
        async with httpx2.AsyncClient() as http:
            anonymous = await http.post(url, json=body)
            assert anonymous.status_code == 401
            assert "Bearer" in anonymous.headers.get("www-authenticate", "")
            forged = await http.post(
                url,
                json=body,
                headers={
                    "Authorization": "Bearer alice-token",
                    "Host": "evil.example",
                    "Accept": "application/json, text/event-stream",
                },
            )
            assert forged.status_code in (400, 403, 421)


@pytest.mark.parametrize("mode", MODES)
async def test_http_f01_list_changed_per_flip(mode: str) -> None:
    async with run_cart() as cart, serving(cart.rt) as url:
        async with connected(lambda: transport(url, "alice-token"), mode) as (client, notes):
            for _ in range(3):
                cart.dispatch(AddedItem(item="a"))
                await notes.until_marker(cart)
                assert "checkout" in [t.name for t in (await client.list_tools()).tools]
                cart.dispatch(AddedItem(item="b"))
                cart.dispatch(RemovedItem(item="b"))
                cart.dispatch(RemovedItem(item="a"))
                await notes.until_marker(cart)
                assert "checkout" not in [t.name for t in (await client.list_tools()).tools]
            assert notes.tools == 6


async def test_http_f23_ten_concurrent_calls_apply_ten_messages() -> None:
    async with run_cart() as cart, serving(cart.rt) as url:
        results: list[types.CallToolResult] = []

        async def one() -> None:
            async with Client(transport(url, "alice-token")) as client:
                results.append(await client.call_tool("increment", {}))

        with anyio.fail_after(20):
            async with anyio.create_task_group() as tg:
                for _ in range(10):
                    tg.start_soon(one)
        assert [r.is_error for r in results] == [False] * 10
        assert len(cart.applied_of(Increment)) == 10
        assert cart.running.model().count == 10
        ids = {r.structured_content["invocation_id"] for r in results if r.structured_content}
        assert len(ids) == 10


# -- stdio (a subprocess) -------------------------------------------------------------------


def stdio_params() -> StdioServerParameters:
    return StdioServerParameters(
        command=str(Path(sys.executable).parent / "foldkit-agent"),
        args=["serve", "examples.todo:runtime", "--mcp", "stdio", "--listing", "available"],
        cwd=str(ROOT),
    )


@pytest.mark.parametrize("mode", MODES)
async def test_stdio_list_call_notify_and_fail_closed_f18(mode: str) -> None:
    heard = anyio.Event()

    async def on_message(message: Any) -> None:
        if isinstance(getattr(message, "root", message), types.ToolListChangedNotification):
            heard.set()

    with anyio.fail_after(30):
        async with Client(stdio_params(), mode=mode, message_handler=on_message) as client:
            assert [t.name for t in (await client.list_tools()).tools] == ["create_todo"]
            created = await client.call_tool("create_todo", {"title": "Milk"})
            assert not created.is_error
            assert created.structured_content is not None
            assert created.structured_content["status"] == "completed"
            if mode == "legacy":
                await heard.wait()  # the first todo made more tools available
            await client.call_tool("select_todo", {"id": "todo-1"})
            refused = await client.call_tool("delete_todo", {})
            assert refused.is_error
            assert refused.structured_content is not None
            assert refused.structured_content["_tag"] == "AgentAuthorizationError"
            assert "sign in" in refused.structured_content["message"]
            spoof = await client.call_tool("delete_todo", {"principal": "alice"})
            assert spoof.is_error
            assert spoof.structured_content is not None
            assert spoof.structured_content["_tag"] == "AgentInvalidInputError"


def test_demo_runs_and_exits_zero() -> None:
    import subprocess

    done = subprocess.run(
        [str(Path(sys.executable).parent / "foldkit-agent"), "demo"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    for seen in (
        "tools/list_changed",
        "AgentAuthorizationError",
        "AgentInvalidInputError",
        "audit",
    ):
        assert seen in done.stdout
