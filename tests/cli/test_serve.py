"""``foldkit-agent serve``: MCP, A2A and WebMCP from one process on one loopback port."""

from __future__ import annotations

import uuid
from contextlib import AbstractAsyncContextManager

import anyio
import httpx
import httpx2
import pytest
from a2a.client import A2ACardResolver, ClientConfig, create_client
from a2a.helpers import new_data_part
from a2a.types import Message, Role, SendMessageRequest, TaskState
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from typer.testing import CliRunner

from examples.todo import AppAgent
from foldkit_agent.adapters.a2a import EXTENSION_URI
from foldkit_agent.adapters.web.signin import SIGN_IN_PAGE
from foldkit_agent.cli import app
from foldkit_agent.cli.serve import parse_tokens
from foldkit_agent.edge.guard import HOST_REFUSAL
from tests.support.hostile import mcp_call_body, mcp_headers
from tests.support.raw_http import post, write_all_then_read
from tests.support.serving import serve_process

TOKEN = "alice-token=alice;todos:delete"


def served(*args: str) -> AbstractAsyncContextManager[str]:
    """Run ``foldkit-agent serve examples.todo:runtime ARGS --port 0``; yield its origin."""
    return serve_process("examples.todo:runtime", *args)


async def test_one_server_speaks_mcp_a2a_and_webmcp_on_one_model() -> None:
    async with served("--mcp", "http", "--a2a", "--webmcp", "--token", TOKEN) as origin:
        headers = {"Authorization": "Bearer alice-token"}
        http = httpx2.AsyncClient(headers=headers, timeout=10)
        async with Client(streamable_http_client(f"{origin}/mcp", http_client=http)) as mcp:
            created = await mcp.call_tool("create_todo", {"title": "Milk"})
            assert created.is_error is False
            assert created.structured_content["status"] == "completed"

        async with httpx.AsyncClient(base_url=origin, headers=headers, timeout=10) as hc:
            card = await A2ACardResolver(hc, origin).get_agent_card()
            assert [s.id for s in card.skills][:2] == ["create_todo", "rename_todo"]
            assert card.supported_interfaces[0].url == f"{origin}/a2a/jsonrpc"
            client = await create_client(
                card, client_config=ClientConfig(httpx_client=hc, streaming=False)
            )
            msg = Message(
                role=Role.ROLE_USER,
                message_id=str(uuid.uuid4()),
                parts=[new_data_part({"id": "todo-1"})],
                extensions=[EXTENSION_URI],
            )
            request = SendMessageRequest(message=msg)
            request.metadata.update({EXTENSION_URI: {"skill": "select_todo"}})
            states = [
                ev.task.status.state
                async for ev in client.send_message(request)
                if ev.HasField("task")
            ]
            assert states == [TaskState.TASK_STATE_COMPLETED]
            await client.close()

        async with httpx.AsyncClient(base_url=origin, timeout=10) as page_client:
            hc = page_client  # a page sends its session, not a bearer token
            page = await hc.get("/")  # with --token, a person signs in first
            assert (page.status_code, page.headers["location"]) == (303, SIGN_IN_PAGE)
            assert (await hc.get("/agent/context")).status_code == 401  # reads too
            signed = await hc.post(
                "/console/sign-in", json={"token": "alice-token"}, headers={"Origin": origin}
            )
            assert signed.status_code == 200, signed.text
            caps = (await hc.get("/agent/capabilities")).json()["capabilities"]
            assert "delete_todo" in [c["name"] for c in caps]  # the A2A selection is visible here
            context = (await hc.get("/agent/context")).json()["context"]
            assert context["selected_todo_id"] == "todo-1"
            assert [t["title"] for t in context["todos"]] == ["Milk"]
            page = await hc.get("/")
            assert page.status_code == 200
            assert "webmcp.js" in page.text


async def test_mcp_over_http_with_tokens_refuses_an_unknown_bearer() -> None:
    async with served("--mcp", "http", "--token", TOKEN) as origin:
        async with httpx.AsyncClient(timeout=10) as hc:
            response = await hc.post(
                f"{origin}/mcp",
                headers={"Authorization": "Bearer wrong", "Content-Type": "application/json"},
                content=b'{"jsonrpc": "2.0", "id": 1, "method": "ping"}',
            )
            assert response.status_code == 401


def test_parse_tokens_reads_subject_and_scopes() -> None:
    assert parse_tokens(["t1=alice;todos:delete,todos:read", "t2=bob"]) == {
        "t1": ("alice", ["todos:delete", "todos:read"]),
        "t2": ("bob", []),
    }
    with pytest.raises(ValueError, match="TOKEN=SUBJECT"):
        parse_tokens(["nosubject"])


@pytest.mark.parametrize(
    ("listing", "tools"),
    [
        ("all", [c.name for c in AppAgent.capabilities]),
        ("catalog", ["list_capabilities", "call_capability"]),
    ],
)
async def test_serve_listing_decides_what_tools_list_shows(listing: str, tools: list[str]) -> None:
    async with served("--mcp", "http", "--listing", listing) as origin:
        async with Client(streamable_http_client(f"{origin}/mcp")) as client:
            listed = [t.name for t in (await client.list_tools()).tools]
    assert listed == tools


def test_the_listing_modes_of_the_command_line_are_the_adapters() -> None:
    from foldkit_agent.adapters.mcp import LISTINGS
    from foldkit_agent.cli.serve import LISTING_MODES

    assert LISTING_MODES == LISTINGS


@pytest.mark.parametrize(
    ("args", "said"),
    [
        ([], "choose at least one adapter"),
        (["--mcp", "stdio", "--a2a"], "serve the HTTP adapters separately"),
        (["--mcp", "carrier-pigeon"], "--mcp takes"),
        (["--a2a", "--token", "oops"], "TOKEN=SUBJECT"),
        (["--mcp", "http", "--listing", "some"], "--listing takes available, all, catalog"),
        (["--a2a", "--listing", "all"], "--listing applies to MCP"),
        (["--mcp", "http", "--progress-interval", "0"], "--progress-interval must be a positive"),
    ],
)
def test_bad_serve_options_are_one_clear_line(args: list[str], said: str) -> None:
    result = CliRunner().invoke(app, ["serve", "examples.todo:runtime", *args])
    assert result.exit_code == 2
    assert said in result.output
    assert "Traceback" not in result.output


@pytest.mark.parametrize("port", ["99999", "-1"])
def test_a_port_out_of_range_is_a_usage_error_not_a_traceback(port: str) -> None:
    for command in (["serve", "examples.todo:runtime", "--mcp", "http"], ["demo", "--serve"]):
        result = CliRunner().invoke(app, [*command, "--port", port])
        assert result.exit_code == 2
        assert "Traceback" not in result.output
        assert "port" in result.output.lower()


def test_a_non_loopback_host_needs_the_names_clients_use() -> None:
    result = CliRunner().invoke(
        app, ["serve", "examples.todo:runtime", "--a2a", "--host", "0.0.0.0"]
    )
    assert result.exit_code == 2
    assert "--allowed-host" in result.output


async def test_allowed_hosts_apply_to_every_adapter_behind_a_non_loopback_host() -> None:
    args = (
        "--mcp",
        "http",
        "--a2a",
        "--host",
        "0.0.0.0",
        "--allowed-host",
        "lan.example",
    )
    async with served(*args) as origin:
        assert origin.startswith("http://lan.example:")
        port = origin.rsplit(":", 1)[1]
        local = f"http://127.0.0.1:{port}"
        async with httpx.AsyncClient(base_url=local, timeout=10) as hc:
            for host, ok in (
                ("lan.example", True),
                (f"lan.example:{port}", True),
                ("evil.example", False),
            ):
                card = await hc.get("/.well-known/agent-card.json", headers={"Host": host})
                mcp = await hc.post(
                    "/mcp",
                    headers={"Host": host, "Content-Type": "application/json"},
                    content=b'{"jsonrpc": "2.0", "id": 1, "method": "ping"}',
                )
                if ok:
                    assert card.status_code == 200
                    assert card.json()["supportedInterfaces"][0]["url"] == f"{origin}/a2a/jsonrpc"
                else:
                    assert card.status_code in (403, 421), card.status_code
                    assert mcp.status_code in (403, 421), mcp.status_code


async def test_with_tokens_a2a_requires_one_as_mcp_does_but_the_card_stays_public() -> None:
    async with served("--mcp", "http", "--a2a", "--token", TOKEN) as origin:
        async with httpx.AsyncClient(base_url=origin, timeout=10) as hc:
            assert (await hc.get("/.well-known/agent-card.json")).status_code == 200
            body = {"jsonrpc": "2.0", "id": 1, "method": "GetTask", "params": {"id": "t"}}
            anonymous = await hc.post("/a2a/jsonrpc", json=body, headers={"A2A-Version": "1.0"})
            assert anonymous.status_code == 401
            mcp = await hc.post("/mcp", json={"jsonrpc": "2.0", "id": 1, "method": "ping"})
            assert mcp.status_code == 401


def test_the_webmcp_page_is_served_on_loopback_only() -> None:
    args = ["--webmcp", "--host", "0.0.0.0", "--allowed-host", "lan.example"]
    result = CliRunner().invoke(app, ["serve", "examples.todo:runtime", *args])
    assert result.exit_code == 2
    assert "loopback only" in result.output


async def test_native_token_serves_the_endpoint_generated_actions_call() -> None:
    service = "s3rvice-token-0123456789"
    async with served("--native-token", service) as origin:
        async with httpx.AsyncClient(base_url=f"{origin}/native", timeout=10) as hc:
            anonymous = await hc.post("/invoke/create_todo", json={"title": "Milk"})
            assert anonymous.status_code == 401
            ok = await hc.post(
                "/invoke/create_todo",
                json={"title": "Milk"},
                headers={"Authorization": f"Bearer {service}"},
            )
            assert ok.status_code == 200
            assert ok.json()["isError"] is False
            assert ok.json()["structuredContent"]["status"] == "completed"


# -- the edge on a real server: every route answers Host and body limits the same way ----------

SERVICE = "s3rvice-token-0123456789"
EDGE_ARGS = ("--mcp", "http", "--a2a", "--webmcp", "--token", TOKEN, "--native-token", SERVICE)


def _edge_requests() -> list[tuple[str, str, dict[str, str], bytes]]:
    """(method, path, headers, body) of one authenticated request per route."""
    bearer = {"Authorization": "Bearer alice-token", "Content-Type": "application/json"}
    call = mcp_call_body('"create_todo"', '{"title": "Milk"}')
    get_task = b'{"jsonrpc": "2.0", "id": 1, "method": "GetTask", "params": {"id": "t"}}'
    return [
        ("POST", "/mcp", mcp_headers(token="alice-token"), call),
        ("POST", "/a2a/jsonrpc", {**bearer, "A2A-Version": "1.0"}, get_task),
        ("GET", "/agent/capabilities", {}, b""),
        (
            "POST",
            "/native/invoke/create_todo",
            {"Authorization": f"Bearer {SERVICE}", "Content-Type": "application/json"},
            b'{"title": "Milk"}',
        ),
    ]


async def test_every_route_of_a_served_process_answers_host_variants_alike() -> None:
    async with served(*EDGE_ARGS) as origin:
        port = origin.rsplit(":", 1)[1]
        async with httpx.AsyncClient(base_url=origin, timeout=10) as hc:
            # the page's routes answer a signed-in person (the client keeps the cookie)
            signed = await hc.post("/console/sign-in", json={"token": "alice-token"})
            assert signed.status_code == 200, signed.text
            for method, path, headers, body in _edge_requests():
                for host in ("127.0.0.1", f"LOCALHOST:{port}", f"[::1]:{port}"):
                    r = await hc.request(
                        method, path, headers={**headers, "Host": host}, content=body
                    )
                    assert r.status_code == 200, (path, host, r.status_code, r.text[:200])
                for host in (
                    f"127.0.0.1:{port}@evil.example",
                    f"127.0.0.1:{port}x",
                    "evil.example",
                ):
                    r = await hc.request(
                        method, path, headers={**headers, "Host": host}, content=body
                    )
                    assert r.status_code == 421, (path, host)
                    assert r.json() == HOST_REFUSAL


@pytest.mark.parametrize(
    ("path", "limit"), [("/mcp", 4 * 1024 * 1024), ("/native/invoke/create_todo", 64 * 1024)]
)
async def test_a_served_process_answers_413_to_a_client_that_writes_its_body_first(
    path: str, limit: int
) -> None:
    async with served(*EDGE_ARGS) as origin:
        port = int(origin.rsplit(":", 1)[1])
        token = "alice-token" if path == "/mcp" else SERVICE
        body = b'{"title": "' + b"x" * limit + b'"}'
        headers = {"Authorization": f"Bearer {token}", "Content-Type": "application/json"}
        request = post(path, port, headers, body)
        answer = await anyio.to_thread.run_sync(write_all_then_read, port, request)
    assert answer.startswith(b"HTTP/1.1 413"), answer[:300]
