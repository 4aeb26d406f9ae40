"""Interop with MCP clients no one here wrote: the MCP Inspector CLI and the MCP TypeScript
SDK client (versions pinned in tests/interop/package-lock.json), against
``foldkit-agent serve examples.todo:runtime`` over stdio and over streamable HTTP.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.support.paths import ROOT

INTEROP = ROOT / "tests" / "interop"
SDK = INTEROP / "node_modules" / "@modelcontextprotocol" / "sdk"
INSPECTOR = INTEROP / "node_modules" / ".bin" / "mcp-inspector"
CLI = str(Path(sys.executable).parent / "foldkit-agent")
SERVE = [CLI, "serve", "examples.todo:runtime"]

pytestmark = [
    pytest.mark.interop,
    pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed"),
    pytest.mark.skipif(not SDK.exists(), reason="npm packages are not installed in tests/interop"),
]


@pytest.fixture(scope="module")
def http_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """``foldkit-agent serve ... --mcp http`` on a free port; ready when it says so."""
    proc = subprocess.Popen(
        [*SERVE, "--mcp", "http", "--listing", "available", "--port", "0"],
        cwd=ROOT,
        stderr=subprocess.PIPE,
        stdout=subprocess.DEVNULL,
        text=True,
    )
    try:
        assert proc.stderr is not None
        line = proc.stderr.readline()  # blocks until the socket listens (or the process dies)
        assert line.startswith("serving MCP at "), line
        yield line.removeprefix("serving MCP at ").strip()
    finally:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()


def node_env() -> dict[str, str]:
    home = Path(tempfile.gettempdir()) / "foldkit-mcp-interop-home"
    home.mkdir(exist_ok=True)  # the Inspector keeps a catalog under $HOME
    return {**os.environ, "HOME": str(home), "NO_COLOR": "1"}


def ts_client(*target: str) -> dict[str, Any]:
    done = subprocess.run(
        ["node", str(INTEROP / "mcp_client.mjs"), *target],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
        env=node_env(),
        check=False,
    )
    assert done.returncode == 0, done.stderr
    seen: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    assert "error" not in seen, seen
    return seen


def inspector(target: list[str], *args: str) -> tuple[int, Any]:
    done = subprocess.run(
        [str(INSPECTOR), "--cli", *target, *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
        env=node_env(),
        check=False,
    )
    return done.returncode, json.loads(done.stdout) if done.stdout.strip() else None


def check_ts(seen: dict[str, Any]) -> None:
    assert seen["capabilities"]["tools"]["listChanged"] is True
    assert seen["toolsBefore"] == ["create_todo"]
    assert seen["created"]["isError"] is False
    assert seen["created"]["structuredContent"]["status"] == "completed"
    assert seen["created"]["structuredContent"]["result"]["_tag"] == "SavedTodo"
    assert seen["listChanged"] >= 1  # tools/list_changed reached the TS client
    assert seen["toolsAfter"] == ["create_todo", "rename_todo", "toggle_todo", "select_todo"]
    assert seen["refused"]["isError"] is True
    assert seen["refused"]["structuredContent"]["_tag"] == "AgentInvalidInputError"
    assert "priority" in seen["refused"]["content"][0]["text"]
    assert seen["unknown"]["isError"] is True
    assert seen["unknown"]["structuredContent"]["_tag"] == "AgentUnknownCapabilityError"
    assert seen["context"]["todos"][0]["title"] == "Interop"


def test_ts_sdk_client_over_stdio() -> None:
    check_ts(ts_client("stdio", *SERVE, "--mcp", "stdio", "--listing", "available"))


def test_ts_sdk_client_over_http(http_url: str) -> None:
    seen = ts_client(http_url)
    check_ts(
        {
            **seen,
            "context": {"todos": [t for t in seen["context"]["todos"] if t["title"] == "Interop"]},
        }
    )


@pytest.mark.parametrize("transport", ["stdio", "http"])
def test_inspector_cli(transport: str, http_url: str) -> None:
    target = (
        ["--cwd", str(ROOT), *SERVE, "--mcp", "stdio"]
        if transport == "stdio"
        else [http_url, "--transport", "http"]
    )
    code, listed = inspector(target, "--method", "tools/list")
    assert code == 0
    assert [t["name"] for t in listed["tools"]][:1] == ["create_todo"]
    assert listed["tools"][0]["inputSchema"]["additionalProperties"] is False
    code, created = inspector(
        target,
        "--method",
        "tools/call",
        "--tool-name",
        "create_todo",
        "--tool-arg",
        "title=Inspected",
    )
    assert code == 0
    assert created["isError"] is False
    assert created["structuredContent"]["status"] == "completed"
    code, refused = inspector(
        target, "--method", "tools/call", "--tool-name", "create_todo", "--tool-arg", "priority=1"
    )
    assert code != 0  # the Inspector exits non-zero on an isError result
    assert refused["isError"] is True
    assert refused["structuredContent"]["_tag"] == "AgentInvalidInputError"
