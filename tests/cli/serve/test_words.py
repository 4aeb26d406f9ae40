"""What ``serve`` says to a person starting it: each mistake is one line naming the fix (no
traceback), and a choice that serves but likely not as meant is a warning line at start."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import httpx

from foldkit_agent.cli.serve import ServeOptions
from tests.support.hostile import mcp_call_body, mcp_headers
from tests.support.paths import ROOT
from tests.support.serving import Lines, serve_process

UNBOUND_APP = """
from contextlib import asynccontextmanager

from examples.todo import AppAgent, Model, TodoAgent, TodoMessage, update
from foldkit_agent import Program


@asynccontextmanager
async def runtime():
    async with Program(init=Model(), update=update, message=TodoMessage).run() as running:
        yield TodoAgent.bind(definition=AppAgent, host=running.host)  # no principal=
"""
"""A runtime factory whose ``bind`` raises a contract error once ``serve`` opens it."""


def _serve(*args: str, cwd: Path = ROOT) -> subprocess.CompletedProcess[str]:
    """``foldkit-agent serve ARGS`` in ``cwd`` with standard input closed (a stdio server
    ends)."""
    return subprocess.run(
        [sys.executable, "-m", "foldkit_agent", "serve", *args],
        cwd=cwd,
        env={**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT / "src"), str(ROOT)])},
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_a_contract_error_raised_inside_a_runtime_factory_is_one_line(tmp_path: Path) -> None:
    """bind without principal= inside the factory printed a 70-line traceback."""
    (tmp_path / "unbound_app.py").write_text(UNBOUND_APP)
    done = _serve("unbound_app:runtime", "--mcp", "stdio", cwd=tmp_path)
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr == (
        "error: unbound_app:runtime(): the capability 'delete_todo' has an "
        "authorize hook, so bind needs principal=: a provider that reads the caller from "
        "invocation.credentials, such as principal=lambda inv: inv.credentials\n"
    )


def test_a_token_given_to_a_stdio_server_is_a_warning_naming_principal() -> None:
    done = _serve("examples.todo:runtime", "--mcp", "stdio", "--token", "t=alice")
    assert done.returncode == 0
    assert done.stderr.splitlines()[0] == (
        "warning: --token applies to HTTP, and a --mcp stdio server ignores it (a local pipe "
        "carries no token); name the local user with --principal SUBJECT[;SCOPE,...]"
    )


async def test_http_without_a_token_warns_after_saying_where_it_serves() -> None:
    said = Lines()
    async with serve_process("examples.todo:runtime", "--mcp", "http", stderr=said):
        line = await said.wait_for("warning:")
    assert line.startswith("warning: no --token, so MCP callers are not authenticated")
    assert line.endswith("add --token TOKEN=SUBJECT[;SCOPE,...]")


def test_the_warning_names_every_adapter_served_that_takes_bearer_tokens() -> None:
    (line,) = ServeOptions(
        target="m:a", mcp="http", a2a=True, ag_ui="examples.todo_web.copilot:agent"
    ).warnings()
    assert line.startswith("warning: no --token, so MCP, A2A and AG-UI callers are not ")
    (line,) = ServeOptions(target="m:a", mcp="http", a2a=True).warnings()
    assert line.startswith("warning: no --token, so MCP and A2A callers are not ")


def test_a_server_with_tokens_or_over_stdio_without_them_warns_of_nothing() -> None:
    quiet = [
        ServeOptions(target="m:a", mcp="http", tokens={"t": ("alice", [])}),
        ServeOptions(target="m:a", mcp="stdio"),
        ServeOptions(target="m:a", a2a=True, tokens={"t": ("alice", [])}),
    ]
    assert [o.warnings() for o in quiet] == [[], [], []]
    assert len(ServeOptions(target="m:a", a2a=True).warnings()) == 1


async def test_serve_says_at_exit_how_many_calls_it_served_in_plain_words() -> None:
    """The exit line was 'MCP answered 18 tools/call inline (0 more through the SDK's JSON
    path) and 3 tools/list from kept bytes'."""
    said = Lines()
    async with serve_process("examples.todo:runtime", "--mcp", "http", stderr=said) as origin:
        async with httpx.AsyncClient(timeout=10) as hc:
            for _ in range(2):  # an unknown capability: refused, and still a call served
                answer = await hc.post(
                    f"{origin}/mcp",
                    headers=mcp_headers("no_such"),
                    content=mcp_call_body('"no_such"', "{}"),
                )
                assert answer.status_code == 200
    assert "stopped after serving 2 calls" in said


def test_a_misspelt_attribute_or_module_is_answered_with_the_closest_name() -> None:
    """'module 'kanban' has no attribute 'runtme'' said nothing of 'runtime'."""
    attr = _serve("examples.todo:runtme", "--mcp", "stdio")
    assert (attr.returncode, attr.stderr) == (
        2,
        "error: module 'examples.todo' has no attribute 'runtme'; did you mean 'runtime'?\n",
    )
    module = _serve("exampels.todo:runtime", "--mcp", "stdio")
    assert module.returncode == 2
    assert module.stderr.endswith("; did you mean 'examples'?\n")


def test_an_ag_ui_reference_that_is_no_agent_is_one_line_naming_what_it_got() -> None:
    done = _serve("examples.todo:runtime", "--ag-ui", "examples.todo:AppAgent", "--port", "0")
    assert done.returncode == 2
    assert done.stderr.strip() == (
        "error: --ag-ui examples.todo:AppAgent: expected a pydantic-ai Agent (or a function "
        "returning one), got AgentDefinition"
    )
