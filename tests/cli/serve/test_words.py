"""What ``serve`` says to a person starting it: each mistake is one line naming the fix (no
traceback), and a choice that serves but likely not as meant is a warning line at start."""

from __future__ import annotations

import os
import subprocess
import sys

from foldkit_agent.cli.serve import ServeOptions
from tests.support.paths import ROOT
from tests.support.serving import Lines, serve_process


def _serve(*args: str) -> subprocess.CompletedProcess[str]:
    """``foldkit-agent serve ARGS`` with standard input closed (a stdio server ends)."""
    return subprocess.run(
        [sys.executable, "-m", "foldkit_agent", "serve", *args],
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT / "src")},
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_a_contract_error_raised_inside_a_runtime_factory_is_one_line() -> None:
    """bind without principal= inside the factory printed a 70-line traceback."""
    done = _serve("tests.support.unbound_app:runtime", "--mcp", "stdio")
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr == (
        "error: tests.support.unbound_app:runtime(): the capability 'delete_todo' has an "
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
    assert line.startswith("warning: no --token, so MCP and A2A callers are not authenticated")
    assert line.endswith("add --token TOKEN=SUBJECT[;SCOPE,...]")


def test_a_server_with_tokens_or_over_stdio_without_them_warns_of_nothing() -> None:
    quiet = [
        ServeOptions(target="m:a", mcp="http", tokens={"t": ("alice", [])}),
        ServeOptions(target="m:a", mcp="stdio"),
        ServeOptions(target="m:a", a2a=True, tokens={"t": ("alice", [])}),
    ]
    assert [o.warnings() for o in quiet] == [[], [], []]
    assert len(ServeOptions(target="m:a", a2a=True).warnings()) == 1
