"""``foldkit-agent serve --mcp stdio``: the local user, and a clean wire (issue 19, point 4).

Over stdio nobody is authenticated: ``--principal SUBJECT[;SCOPE,...]`` names the local user
who launched the server (Claude Desktop's user), and every call carries them as
``invocation.credentials``. Standard output is the wire, so whatever the user's module prints
at import, at start-up or while serving goes to standard error. Real subprocesses, driven by
the official MCP stdio client (and, for the first bytes on the wire, by hand).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import anyio
import mcp.types as types
import pytest
from mcp import Client, StdioServerParameters
from typer.testing import CliRunner

from foldkit_agent.adapters.mcp import LocalUser, parse_local_user
from foldkit_agent.cli import app
from tests.support.paths import ROOT

CLI = str(Path(sys.executable).parent / "foldkit-agent")
INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "by-hand", "version": "1"},
    },
}


def params(*args: str) -> StdioServerParameters:
    return StdioServerParameters(command=CLI, args=["serve", *args], cwd=str(ROOT))


async def the_person_approves(_context: Any, _params: Any) -> types.ElicitResult:
    """The stdio client's user, asked to approve delete_todo (confirm=True): yes."""
    return types.ElicitResult(action="accept", content={"approve": True})


async def delete_as(*principal: str) -> Any:
    """Create, select and delete a todo over stdio (its user approving); the delete's result."""
    server = params("examples.todo:runtime", "--mcp", "stdio", *principal)
    with anyio.fail_after(60):
        async with Client(server, elicitation_callback=the_person_approves) as c:
            assert not (await c.call_tool("create_todo", {"title": "Milk"})).is_error
            assert not (await c.call_tool("select_todo", {"id": "todo-1"})).is_error
            return await c.call_tool("delete_todo", {})


async def test_principal_makes_the_local_user_the_caller_of_every_stdio_call() -> None:
    deleted = await delete_as("--principal", "alice;todos:delete")
    assert deleted.is_error is False, deleted
    assert deleted.structured_content is not None
    assert deleted.structured_content["status"] == "dispatched"


async def test_a_local_user_without_the_scope_is_refused_by_authorize() -> None:
    refused = await delete_as("--principal", "bob")
    assert refused.is_error is True
    assert refused.structured_content is not None
    assert refused.structured_content["_tag"] == "AgentAuthorizationError"
    assert refused.structured_content["reason"] == "bob may not delete todos"


async def test_without_principal_stdio_callers_stay_anonymous() -> None:
    refused = await delete_as()
    assert refused.structured_content is not None
    assert refused.structured_content["reason"] == "sign in to delete todos"


def test_principal_spec_reads_subject_and_scopes() -> None:
    assert parse_local_user("alice;todos:delete, todos:read") == LocalUser(
        "alice", ("todos:delete", "todos:read")
    )
    assert parse_local_user(" bob ") == LocalUser("bob", ())
    with pytest.raises(ValueError, match="SUBJECT"):
        parse_local_user(";todos:delete")


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (["--mcp", "http", "--principal", "alice"], "--principal names the local user"),
        (["--mcp", "stdio", "--principal", ""], "--principal takes SUBJECT"),
    ],
)
def test_principal_misuse_is_one_clear_line(args: list[str], said: str) -> None:
    result = CliRunner().invoke(app, ["serve", "examples.todo:runtime", *args])
    assert result.exit_code == 2
    assert said in result.output
    assert "Traceback" not in result.output


def test_what_a_module_prints_while_imported_and_started_never_reaches_the_wire() -> None:
    proc = subprocess.Popen(
        [CLI, "serve", "tests.support.noisy_app:runtime", "--mcp", "stdio"],
        cwd=ROOT,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert proc.stdin is not None
    assert proc.stdout is not None
    assert proc.stderr is not None
    try:
        proc.stdin.write(json.dumps(INITIALIZE).encode() + b"\n")
        proc.stdin.flush()
        first = proc.stdout.readline()  # the very first bytes the client reads
        answer = json.loads(first)
        assert answer["jsonrpc"] == "2.0"
        assert answer["id"] == 1
        assert answer["result"]["serverInfo"]["name"] == "tests.support.noisy_app"
        proc.stdin.close()  # the client goes away; the server shuts down
        assert proc.wait(30) == 0
        rest, errors = proc.stdout.read(), proc.stderr.read()
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert rest == b""
    assert b"noisy_app: imported" in errors
    assert b"noisy_app: starting the application" in errors
    assert b"noisy_app: stopped" in errors


async def test_prints_while_serving_stay_off_the_wire_for_the_official_client() -> None:
    heard: list[Any] = []
    with anyio.fail_after(60):
        async with Client(
            params("tests.support.noisy_app:runtime", "--mcp", "stdio"),
            message_handler=lambda m: _record(heard, m),
        ) as client:
            created = await client.call_tool("create_todo", {"title": "Milk"})  # prints
            assert created.is_error is False
            assert [t.name for t in (await client.list_tools()).tools][:2] == [
                "create_todo",
                "rename_todo",
            ]
    assert not [m for m in heard if isinstance(m, Exception)]  # no unparsable line


async def _record(heard: list[Any], message: Any) -> None:
    heard.append(message)


def test_serving_the_contract_by_mistake_shows_the_factory_shape() -> None:
    result = CliRunner().invoke(app, ["serve", "examples.todo:AppAgent", "--mcp", "stdio"])
    assert result.exit_code == 2
    assert "examples.todo:AppAgent is the contract (agent.make(...))" in result.output
    assert "@asynccontextmanager" in result.output
    assert "yield TodoAgent.bind(definition=AppAgent, host=running.host," in result.output
    assert "foldkit-agent serve examples.todo:runtime --mcp stdio" in result.output
    assert "Traceback" not in result.output


@pytest.mark.parametrize(
    ("attr", "said"),
    [
        ("update", "must be callable with no arguments"),
        ("App", "is an Application, and serve needs a runtime factory"),
    ],
)
def test_other_wrong_targets_say_what_shape_serve_wants(attr: str, said: str) -> None:
    result = CliRunner().invoke(app, ["serve", f"examples.todo:{attr}", "--mcp", "stdio"])
    assert result.exit_code == 2
    assert said in result.output
    assert "A runtime factory runs the application and binds its contract" in result.output


async def test_listing_catalog_over_stdio_lists_the_two_catalog_tools() -> None:
    with anyio.fail_after(60):
        args = ("examples.todo:runtime", "--mcp", "stdio", "--listing", "catalog")
        async with Client(params(*args)) as client:
            tools = [t.name for t in (await client.list_tools()).tools]
            made = await client.call_tool(
                "call_capability", {"name": "create_todo", "input": {"title": "Milk"}}
            )
    assert tools == ["list_capabilities", "call_capability"]
    assert made.structured_content is not None
    assert made.structured_content["status"] == "completed"


def test_a_malformed_reference_shows_a_runtime_factory_as_the_example() -> None:
    result = CliRunner().invoke(app, ["serve", "counter", "--mcp", "stdio"])
    assert result.exit_code == 2
    assert "expected MODULE:ATTR (like examples.todo:runtime), got 'counter'" in result.output


def test_a_module_not_found_says_which_folder_is_importable(tmp_path: Any) -> None:
    result = CliRunner().invoke(app, ["serve", "counter_nowhere:runtime", "--mcp", "stdio"])
    assert result.exit_code == 2
    assert "cannot import module 'counter_nowhere': no such module in" in result.output
    assert "run the command from the folder that holds it" in " ".join(result.output.split())
