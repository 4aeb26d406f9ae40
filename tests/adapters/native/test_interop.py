"""Generated Agent Native actions, loaded by the real ``@agent-native/core`` (pinned by
tests/interop/package-lock.json), calling the Python side over HTTP.

The Node half is tests/interop/native_check.mjs; it uses agent-native's own action discovery
(``autoDiscoverActions``), which imports the generated ``.ts`` files through ``jiti`` (one of
``@agent-native/core``'s own dependencies) because Node 20 cannot import TypeScript.
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import tempfile
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack
from pathlib import Path
from typing import Any

import anyio
import pytest
from starlette.requests import Request

from examples.todo import AppAgent, User, run_todo
from foldkit_agent import AgentCapabilityUnavailableError, AgentRuntime
from foldkit_agent.adapters.native import native_app, native_caller, write_actions
from tests.support.paths import INTEROP
from tests.support.web_serving import serve

pytestmark = pytest.mark.interop


NODE = shutil.which("node")
TOKEN = "native-interop-token-0123456789abcdef"
SERVICE = "mail-app"
USERS = {
    "alice@example.com": User(id="alice", can_delete=True),
    "bob@example.com": User(id="bob"),
    "dave@example.com": User(id="dave", can_delete=True),
}

if NODE is None or not (INTEROP / "node_modules" / "@agent-native" / "core").is_dir():
    pytest.skip("node and tests/interop/node_modules are needed", allow_module_level=True)


def credentials_of(request: Request) -> User | None:
    """Trust the asserted e-mail only from the authenticated mail-app service."""
    caller = native_caller(request)
    if caller is None or caller.service != SERVICE or caller.user_email is None:
        return None
    return USERS.get(caller.user_email)


class PerUser:
    """One todo application per asserted user, started on first use (the test's own loop)."""

    def __init__(self, stack: AsyncExitStack) -> None:
        self.stack = stack
        self.runtimes: dict[str, AgentRuntime[Any, Any]] = {}
        self.lock = asyncio.Lock()

    async def __call__(self, request: Request) -> AgentRuntime[Any, Any]:
        caller = native_caller(request)
        key = (caller.user_email if caller else None) or "anonymous"
        async with self.lock:
            if key not in self.runtimes:
                _running, rt = await self.stack.enter_async_context(run_todo())
                self.runtimes[key] = rt
            return self.runtimes[key]


@pytest.fixture
async def server() -> AsyncIterator[tuple[str, str, PerUser]]:
    """The surface, and the same surface trusting that Agent Native asked its user."""
    async with AsyncExitStack() as stack:
        resolve = PerUser(stack)
        options: dict[str, Any] = {
            "service_tokens": {TOKEN: SERVICE},
            "credentials_of": credentials_of,
        }
        application = native_app(resolve, **options)
        trusting = native_app(resolve, **options, trust_service_approvals=True)
        async with serve(application) as origin, serve(trusting) as trusting_origin:
            yield f"{origin}/agent", f"{trusting_origin}/agent", resolve


@pytest.fixture
def actions_dir() -> Any:
    # Inside tests/interop so that Node resolves @agent-native/core from its node_modules.
    path = Path(tempfile.mkdtemp(prefix=".native-actions-", dir=INTEROP))
    try:
        yield path
    finally:
        shutil.rmtree(path, ignore_errors=True)


async def test_generated_actions_run_in_agent_native(
    server: tuple[str, str, PerUser], actions_dir: Path
) -> None:
    url, trusting_url, per_user = server
    report = write_actions(AppAgent, actions_dir, url="http://127.0.0.1:1/unused")
    assert len(report.written) == len(AppAgent.capabilities)
    expected = {
        "capabilities": [
            {
                "name": c.name,
                "description": c.description,
                "input_schema": c.input_schema,
                "title": c.title,
                "read_only": c.hints.read_only,
                "consequential": c.hints.destructive is not False,
                "needs_approval": c.confirm is not None,
            }
            for c in AppAgent.capabilities
        ],
        "unavailable_message": "Refused: "
        + AgentCapabilityUnavailableError(capability="delete_todo").message,
    }
    env = {
        **os.environ,
        "NATIVE_ACTIONS_DIR": str(actions_dir),
        "NATIVE_EXPECTED": json.dumps(expected),
        "FOLDKIT_AGENT_URL": url,  # overrides the generation-time URL
        "NATIVE_TRUSTING_URL": trusting_url,
        "FOLDKIT_AGENT_TOKEN": TOKEN,
        "AGENT_NATIVE_AUDIT_ENABLED": "false",  # agent-native's own audit would open a DB
        "AGENT_NATIVE_DISABLE_MCP_AUTODETECT": "1",
        "NODE_NO_WARNINGS": "1",
    }
    assert NODE is not None
    with anyio.fail_after(90):
        done = await anyio.run_process(
            [NODE, str(INTEROP / "native_check.mjs")], cwd=INTEROP, env=env, check=False
        )
    stdout = done.stdout.decode()
    assert done.returncode == 0, f"{stdout}\n{done.stderr.decode()[-4000:]}"
    checks = json.loads(stdout.strip().splitlines()[-1])["checks"]
    assert checks["loaded"] == [c.name for c in AppAgent.capabilities]
    assert checks["titles"] == {c.name: c.title for c in AppAgent.capabilities}
    assert checks["extra"]["refusedBy"].startswith("foldkit-agent")
    assert checks["forged"]["rawStatus"] == 401
    assert checks["needsApproval"] == {c.name: c.confirm is not None for c in AppAgent.capabilities}
    assert checks["needsApproval"]["delete_todo"] is True

    # What the application saw: one Model per user; forged and refused calls changed nothing.
    assert checks["failedCompletion"]["status"] == "failed"
    assert checks["cancelledCompletion"]["ok"] is False
    runtimes = sorted(per_user.runtimes)
    assert runtimes == [
        "alice@example.com",
        "bob@example.com",
        "carol@example.com",
        "dave@example.com",
    ]
    alice = per_user.runtimes["alice@example.com"]
    bob = per_user.runtimes["bob@example.com"]
    assert [t["title"] for t in alice.context()["todos"]] == ["Milk"]
    assert [t["title"] for t in bob.context()["todos"]] == ["Bread"]
    assert alice.audit is not None
    assert bob.audit is not None
    decisions = [(e.capability, e.decision, e.outcome) for e in alice.audit.entries()]
    assert ("create_todo", "dispatched", "completed") in decisions
    assert ("create_todo", "dispatched", "failed") in decisions  # the duplicate "Milk"
    assert ("delete_todo", "refused", "AgentCapabilityUnavailableError") in decisions
    assert ("create_todo", "refused", "AgentInvalidInputError") in decisions
    assert {e.principal for e in alice.audit.entries()} == {"alice"}
    assert {e.transport for e in bob.audit.entries()} == {"agent-native"}
    assert ("delete_todo", "refused", "AgentAuthorizationError") in [
        (e.capability, e.decision, e.outcome) for e in bob.audit.entries()
    ]

    # Approval: refused as unavailable until a trusting surface heard Agent Native approved.
    dave = per_user.runtimes["dave@example.com"]
    assert dave.audit is not None
    approvals = [
        (e.capability, e.decision, e.approval, e.approved_by) for e in dave.audit.entries()
    ]
    assert approvals[-4:] == [
        ("delete_todo", "refused", "unavailable", None),
        ("delete_todo", "refused", "unavailable", None),
        ("delete_todo", "refused", "unavailable", None),
        ("delete_todo", "dispatched", "approved", "dave (approved in agent-native)"),
    ]
    assert dave.context()["todos"] == []


async def test_generated_actions_type_check_against_agent_native(actions_dir: Path) -> None:
    """jiti strips types without checking them; tsc --strict checks them against the package."""
    tsc = INTEROP / "node_modules" / "typescript" / "bin" / "tsc"
    if not tsc.is_file():
        pytest.skip("typescript is not installed in tests/interop/node_modules")
    report = write_actions(AppAgent, actions_dir, url="http://127.0.0.1:8000/agent")
    files = [str(actions_dir / name) for name in report.written]
    args = ["--noEmit", "--strict", "--target", "es2022", "--module", "nodenext"]
    args += ["--moduleResolution", "nodenext", "--types", "node", "--skipLibCheck"]
    assert NODE is not None
    with anyio.fail_after(90):
        done = await anyio.run_process([NODE, str(tsc), *args, *files], cwd=INTEROP, check=False)
    assert done.returncode == 0, done.stdout.decode()[-4000:]
