"""The MCP adapter in-process, with the official SDK Client in both protocol eras.

Field reports: F01 (list-changed per flip), F02 (stale call), F03 (every refusal kind is an
isError result), F15 (cancellation), F18 (principal never from arguments; fail closed), F20.
"""

from __future__ import annotations

import json
from typing import Any

import anyio
import mcp.types as types
import pytest
from mcp import Client, MCPError
from mcp.shared.memory import create_client_server_memory_streams
from mcp.shared.message import SessionMessage

from examples.todo import run_todo
from foldkit_agent.adapters.mcp import CONTEXT_URI, OUTPUT_SCHEMA, mcp_server
from tests.support.mcp_cart import (
    AddedItem,
    Caller,
    LongWait,
    RemovedItem,
    RequestedCheckout,
    Ticked,
    run_cart,
)
from tests.support.mcp_helpers import MARKER, connected

pytestmark = pytest.mark.filterwarnings("ignore:resources/subscribe is removed")

MODES = ["legacy", "auto"]  # "auto" discovers and speaks 2026-07-28


async def names(client: Client) -> list[str]:
    return [t.name for t in (await client.list_tools()).tools]


# -- listing and calling ------------------------------------------------------------------


@pytest.mark.parametrize("mode", MODES)
async def test_tools_follow_availability_and_call_waits_for_completion(mode: str) -> None:
    async with run_todo() as (running, rt):
        server = mcp_server(rt, name="todo", version="1")
        async with Client(server, mode=mode) as client:
            assert client.server_capabilities.tools is not None
            assert client.server_capabilities.tools.list_changed is True
            tools = (await client.list_tools()).tools
            assert [t.name for t in tools] == ["create_todo"]
            assert tools[0].input_schema == rt.messages.all()[0].input_schema
            assert tools[0].output_schema == OUTPUT_SCHEMA
            result = await client.call_tool("create_todo", {"title": "Milk"})
            assert not result.is_error
            data = result.structured_content
            assert data is not None
            assert data["status"] == "completed"
            assert data["result"]["_tag"] == "SavedTodo"
            assert running.model().todos[0].saved  # answered only after the save
            assert json.loads(result.content[0].text.split("\n", 1)[1]) == data  # type: ignore[union-attr]
            assert await names(client) == [
                "create_todo",
                "rename_todo",
                "toggle_todo",
                "select_todo",
            ]


@pytest.mark.parametrize("mode", MODES)
async def test_resources_list_read_and_unknown_uri(mode: str) -> None:
    async with run_todo() as (_running, rt):
        server = mcp_server(rt, name="todo", version="1")
        async with Client(server, mode=mode) as client:
            listed = {str(r.uri) for r in (await client.list_resources()).resources}
            assert listed == {CONTEXT_URI, "agent://resources/todos", "ui://app/view.html"}
            await client.call_tool("create_todo", {"title": "Milk"})
            ctx = json.loads((await client.read_resource(CONTEXT_URI)).contents[0].text)  # type: ignore[union-attr]
            assert ctx == rt.context()
            todos = json.loads(
                (await client.read_resource("agent://resources/todos")).contents[0].text  # type: ignore[union-attr]
            )
            assert todos["todos"][0]["title"] == "Milk"
            with pytest.raises(MCPError) as info:
                await client.read_resource("agent://resources/nope")
            assert info.value.error.code == types.INVALID_PARAMS


# -- F03: every refusal kind is an isError result with the error JSON ---------------------


@pytest.mark.parametrize("mode", MODES)
async def test_f03_every_refusal_is_an_error_result(mode: str) -> None:
    async with run_cart() as cart:
        server = mcp_server(cart.rt, name="cart", version="1")
        async with Client(server, mode=mode) as client:
            cases = {
                "AgentUnknownCapabilityError": ("no_such_tool", {}),
                "AgentCapabilityUnavailableError": ("checkout", {}),
                "AgentInvalidInputError": ("pay", {"amount": "5"}),
                "AgentAuthorizationError": ("reset", {}),
                "AgentCompletionTimeoutError": ("wait_briefly", {}),
            }
            for tag, (name, args) in cases.items():
                result = await client.call_tool(name, args)
                assert result.is_error, tag
                data = result.structured_content
                assert data is not None
                assert data["_tag"] == tag
                marker = "Refused: " if data["status"] == "refused" else ""  # a timeout: unknown
                assert result.content[0].text == marker + data["message"]  # type: ignore[union-attr]
                assert "Traceback" not in data["message"]
            failed = await client.call_tool("pay", {"amount": 500})
            assert failed.is_error
            assert failed.structured_content is not None
            assert failed.structured_content["status"] == "failed"
            assert failed.structured_content["result"]["_tag"] == "PaymentFailed"
            ok = await client.call_tool("pay", {"amount": 5})
            assert not ok.is_error
            assert ok.structured_content is not None
            assert ok.structured_content["status"] == "completed"


async def test_f03_defect_is_generic() -> None:
    async with run_cart() as cart:

        async def exploding(*_a: Any, **_k: Any) -> Any:
            raise RuntimeError("secret detail at /srv/app.py line 3")

        server = mcp_server(cart.rt, name="cart", version="1")
        cart.rt.start = exploding  # type: ignore[method-assign]
        try:
            async with Client(server) as client:
                result = await client.call_tool("increment", {})
        finally:
            del cart.rt.start
        assert result.is_error
        text = result.content[0].text  # type: ignore[union-attr]
        assert "secret" not in text
        assert "RuntimeError" not in text
        assert "secret" not in json.dumps(result.structured_content)
        assert result.structured_content is not None
        assert result.structured_content["status"] == "defect"


# -- F01: one list-changed per flip, none otherwise, in both eras ---------------------------


@pytest.mark.parametrize("mode", MODES)
async def test_f01_list_changed_once_per_flip(mode: str) -> None:
    async with run_cart() as cart:
        server = mcp_server(cart.rt, name="cart", version="1")
        async with connected(server, mode) as (client, notes):
            assert "checkout" not in await names(client)
            for _ in range(3):
                cart.dispatch(AddedItem(item="a"))
                await notes.until_marker(cart)
                assert "checkout" in await names(client)
                cart.dispatch(AddedItem(item="b"))  # context changes, availability does not
                cart.dispatch(Ticked())  # nothing visible changes
                cart.dispatch(RemovedItem(item="b"))
                cart.dispatch(RemovedItem(item="a"))
                await notes.until_marker(cart)
                assert "checkout" not in await names(client)
            cart.dispatch(Ticked())
            await notes.until_marker(cart)
            assert notes.tools == 6
            assert notes.updated.count(MARKER) == 7


@pytest.mark.parametrize("mode", MODES)
async def test_f01_two_clients_each_hear_each_flip_once(mode: str) -> None:
    async with run_cart() as cart:
        server = mcp_server(cart.rt, name="cart", version="1")
        async with connected(server, mode) as (c1, n1), connected(server, mode) as (c2, n2):
            for client in (c1, c2, c1):  # many requests per connection must not multiply pushes
                await client.list_tools()
            cart.dispatch(AddedItem(item="a"))
            cart.dispatch(RemovedItem(item="a"))
            await n1.until_marker(cart)
            if not n2.marker.is_set():
                with anyio.fail_after(5):
                    await n2.marker.wait()
            assert (n1.tools, n2.tools) == (2, 2)


async def test_context_subscription_legacy() -> None:
    got: list[str] = []
    seen = anyio.Event()

    async def on_message(message: Any) -> None:
        if isinstance(message, types.ResourceUpdatedNotification):
            got.append(str(message.params.uri))
            seen.set()

    async with run_cart() as cart:
        server = mcp_server(cart.rt, name="cart", version="1")
        async with Client(server, mode="legacy", message_handler=on_message) as client:
            await client.subscribe_resource(CONTEXT_URI)
            with pytest.raises(MCPError):
                await client.subscribe_resource("agent://resources/nope")
            cart.dispatch(Ticked())  # invisible: no update
            cart.dispatch(AddedItem(item="a"))
            with anyio.fail_after(5):
                await seen.wait()
            assert got == [CONTEXT_URI]


# -- F02: listed, then gone ---------------------------------------------------------------


@pytest.mark.parametrize("mode", MODES)
async def test_f02_stale_call_is_refused_and_audited_once(mode: str) -> None:
    async with run_cart() as cart:
        server = mcp_server(cart.rt, name="cart", version="1")
        cart.dispatch(AddedItem(item="a"))
        async with Client(server, mode=mode) as client:
            assert "checkout" in await names(client)
            cart.dispatch(RemovedItem(item="a"))
            before = len(cart.audit.entries())
            result = await client.call_tool("checkout", {})
            assert result.is_error
            assert result.structured_content is not None
            assert result.structured_content["_tag"] == "AgentCapabilityUnavailableError"
            assert cart.applied_of(RequestedCheckout) == []
            entries = cart.audit.entries()[before:]
            assert [(e.capability, e.decision, e.transport) for e in entries] == [
                ("checkout", "refused", "mcp")
            ]


# -- F18: principal from the transport only; fail closed without one ------------------------


@pytest.mark.parametrize("mode", MODES)
async def test_f18_in_process_has_no_principal_and_arguments_cannot_supply_one(mode: str) -> None:
    async with run_cart() as cart:
        server = mcp_server(cart.rt, name="cart", version="1")
        async with Client(server, mode=mode) as client:
            spoof = await client.call_tool("reset", {"principal": "admin"})
            assert spoof.is_error
            assert spoof.structured_content is not None
            assert spoof.structured_content["_tag"] == "AgentInvalidInputError"
            meta = await client.call_tool("reset", {}, meta={"principal": "admin"})
            assert meta.is_error
            assert meta.structured_content is not None
            assert meta.structured_content["_tag"] == "AgentAuthorizationError"
            assert "sign in" in meta.structured_content["message"]


async def test_explicit_local_principal() -> None:
    async with run_cart() as cart:
        server = mcp_server(
            cart.rt,
            name="cart",
            version="1",
            credentials_of=lambda _ctx: Caller("me", ("cart:admin",)),
        )
        async with Client(server) as client:
            result = await client.call_tool("reset", {})
            assert not result.is_error
            assert cart.audit.entries()[-1].principal == "me"


async def test_resolve_per_caller() -> None:
    async with run_cart() as a, run_cart() as b:
        server = mcp_server(
            lambda ctx: a.rt if (ctx.meta or {}).get("tenant") == "a" else b.rt,
            name="cart",
            version="1",
        )
        a.dispatch(AddedItem(item="x"))
        async with Client(server) as client:
            assert "checkout" in [
                t.name for t in (await client.list_tools(meta={"tenant": "a"})).tools
            ]
            assert "checkout" not in await names(client)
            await client.call_tool("increment", {}, meta={"tenant": "a"})
        assert a.running.model().count == 1
        assert b.running.model().count == 0


# -- F15: cancellation --------------------------------------------------------------------


def _rpc(msg: dict[str, Any]) -> SessionMessage:
    return SessionMessage(types.jsonrpc_message_adapter.validate_python(msg))


async def test_f15_cancel_legacy_exactly_one_answer() -> None:
    """A cancelled tools/call gets no answer; the next request still gets its own."""
    async with run_cart(LongWait) as cart:
        server = mcp_server(cart.rt, name="cart", version="1")
        async with create_client_server_memory_streams() as (client_streams, server_streams):
            c_read, c_write = client_streams
            s_read, s_write = server_streams
            async with anyio.create_task_group() as tg:
                tg.start_soon(
                    lambda: server.run(s_read, s_write, server.create_initialization_options())
                )
                await c_write.send(
                    _rpc(
                        {
                            "jsonrpc": "2.0",
                            "id": 0,
                            "method": "initialize",
                            "params": {
                                "protocolVersion": "2025-11-25",
                                "capabilities": {},
                                "clientInfo": {"name": "raw", "version": "0"},
                            },
                        }
                    )
                )
                first = await c_read.receive()
                assert getattr(first, "message").id == 0  # noqa: B009
                await c_write.send(_rpc({"jsonrpc": "2.0", "method": "notifications/initialized"}))
                applied = anyio.Event()
                unobserve = cart.running.host.observe(lambda _m: applied.set())
                await c_write.send(
                    _rpc(
                        {
                            "jsonrpc": "2.0",
                            "id": 1,
                            "method": "tools/call",
                            "params": {"name": "wait_long", "arguments": {}},
                        }
                    )
                )
                with anyio.fail_after(5):
                    await applied.wait()
                unobserve()
                assert cart.rt.pending() == 1
                cart.recorded.clear()
                await c_write.send(
                    _rpc(
                        {
                            "jsonrpc": "2.0",
                            "method": "notifications/cancelled",
                            "params": {"requestId": 1, "reason": "user"},
                        }
                    )
                )
                with anyio.fail_after(5):
                    await cart.recorded.wait()
                await c_write.send(_rpc({"jsonrpc": "2.0", "id": 2, "method": "ping"}))
                answers: list[Any] = []
                with anyio.fail_after(5):
                    while True:
                        msg = await c_read.receive()
                        rid = getattr(getattr(msg, "message", None), "id", None)
                        if rid is not None:
                            answers.append(rid)
                        if rid == 2:
                            break
                assert answers == [2]  # never an answer for the cancelled request
                assert cart.rt.pending() == 0
                entry = cart.audit.entries()[-1]
                assert (entry.capability, entry.decision, entry.outcome) == (
                    "wait_long",
                    "unknown",
                    "AgentCancelledError",
                )
                tg.cancel_scope.cancel()


@pytest.mark.parametrize("mode", MODES)
async def test_f15_client_cancel_sets_the_signal(mode: str) -> None:
    async with run_cart(LongWait) as cart:
        server = mcp_server(cart.rt, name="cart", version="1")
        async with Client(server, mode=mode) as client:
            applied = anyio.Event()
            unobserve = cart.running.host.observe(lambda _m: applied.set())
            cart.recorded.clear()
            outcome: list[Any] = []
            async with anyio.create_task_group() as tg:

                async def call() -> None:
                    outcome.append(await client.call_tool("wait_long", {}))

                tg.start_soon(call)
                with anyio.fail_after(5):
                    await applied.wait()
                tg.cancel_scope.cancel()
            unobserve()
            with anyio.fail_after(5):
                await cart.recorded.wait()
            assert outcome == []
            assert cart.rt.pending() == 0
            entry = cart.audit.entries()[-1]
            assert (entry.decision, entry.outcome) == ("unknown", "AgentCancelledError")
            # the connection still works
            assert await names(client) == ["wait_long"]
