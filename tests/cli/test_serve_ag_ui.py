"""``foldkit-agent serve --ag-ui``: the todo copilot (examples/todo_web/copilot.py) over AG-UI
on the same port, driven by the official AG-UI client (@ag-ui/client, tests/interop) as the
front ends of two people would.

Each run needs a bearer token (401 otherwise, before the body is read); the token's subject is
the principal of every call its runs make; and one caller at its share of calls waiting for a
person is refused its next one, while another caller is still asked about its own."""

from __future__ import annotations

import asyncio
import json
import shutil
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.support.launched import launched
from tests.support.paths import ROOT
from tests.support.serving import serve_process
from tests.support.waiting import holding_mcp, mcp_client

INTEROP = ROOT / "tests" / "interop"

pytestmark = [
    pytest.mark.interop,
    pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed"),
    pytest.mark.skipif(
        not (INTEROP / "node_modules" / "@ag-ui" / "client").exists(),
        reason="@ag-ui/client is not installed",
    ),
]
COPILOTKIT = INTEROP / "node_modules" / "@copilotkit" / "runtime"
QUIET = {"COPILOTKIT_TELEMETRY_DISABLED": "true", "DO_NOT_TRACK": "1", "SCARF_ANALYTICS": "false"}
"""CopilotKit's runtime and its dependencies report usage unless told not to."""

ALICE, BOB = "alice-token-0123456789", "bob-token-0123456789"
SHARE = 2  # --max-waiting-per-caller
COPILOT = "examples.todo_web.copilot:agent"


def serve_args(audit: Path) -> tuple[str, ...]:
    return (
        "--ag-ui", COPILOT,
        "--token", f"{ALICE}=alice;todos:delete",
        "--token", f"{BOB}=bob;todos:delete",
        "--max-waiting-per-caller", str(SHARE),
        "--audit", f"jsonl:{audit}",
    )  # fmt: skip


async def runs(url: str, steps: list[dict[str, str]]) -> list[dict[str, Any]]:
    """What @ag-ui/client saw of each step (tests/interop/ag_ui_runs.mjs)."""
    node = await asyncio.create_subprocess_exec(
        "node", str(INTEROP / "ag_ui_runs.mjs"), url, json.dumps(steps),
        cwd=INTEROP,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )  # fmt: skip
    out, err = await asyncio.wait_for(node.communicate(), 120)
    assert node.returncode == 0, err.decode()[-3000:]
    return json.loads(out)


async def test_a_run_without_a_known_bearer_token_is_refused_before_the_model_runs(
    tmp_path: Path,
) -> None:
    async with serve_process("examples.todo:runtime", *serve_args(tmp_path / "a.jsonl")) as origin:
        async with httpx.AsyncClient() as client:
            none = await client.post(f"{origin}/ag-ui", json={})
            wrong = await client.post(
                f"{origin}/ag-ui", json={}, headers={"Authorization": "Bearer not-a-token"}
            )
        (seen,) = await runs(f"{origin}/ag-ui", [{"token": "", "thread": "t", "text": "add X"}])
    assert none.status_code == 401
    assert none.headers["WWW-Authenticate"] == "Bearer"  # no error code without a token
    assert none.json()["error"]["message"] == (
        "This server requires credentials: send Authorization: Bearer <token>."
    )
    assert wrong.status_code == 401
    assert 'error="invalid_token"' in wrong.headers["WWW-Authenticate"]
    assert seen["types"] == []
    assert "HTTP 401" in seen["error"]
    assert (tmp_path / "a.jsonl").read_text() == ""  # nothing reached the runtime


async def test_one_caller_at_its_share_of_waiting_calls_locks_no_other_caller_out(
    tmp_path: Path,
) -> None:
    audit = tmp_path / "audit.jsonl"
    async with serve_process("examples.todo:runtime", *serve_args(audit)) as origin:
        seen = await runs(
            f"{origin}/ag-ui",
            [
                {"token": ALICE, "thread": "a1", "text": "add Milk"},
                {"token": ALICE, "thread": "a1", "text": "select todo-1"},
                # each run ends in an interrupt, its call parked for alice's answer
                *({"token": ALICE, "thread": f"a{n}", "text": "delete it"} for n in (1, 2)),
                {"token": ALICE, "thread": "a3", "text": "delete it"},  # past her share
                {"token": BOB, "thread": "b1", "text": "delete it"},
                {"token": ALICE, "thread": "a1", "resume": "approve"},
                {"token": BOB, "thread": "b1", "resume": "decline"},
                {"token": ALICE, "thread": "a2", "resume": "decline"},
            ],
        )
    added, selected, asked1, asked2, over, bob, approved, bob_declined, declined = seen
    assert added["types"][:2] == ["RUN_STARTED", "STATE_SNAPSHOT"]
    assert [t["title"] for t in added["state"]["todos"]] == ["Milk"]
    assert selected["state"]["selected_todo_id"] == "todo-1"
    for asked in (asked1, asked2, bob):
        (interrupt,) = asked["interrupts"]
        assert interrupt["metadata"]["capability"] == "delete_todo"
        assert interrupt["metadata"]["sentence"] == 'Delete the todo "Milk"'
    assert over["interrupts"] == []
    assert over["text"].startswith("delete_todo: Refused: Too many calls of yours are waiting")
    assert f"({SHARE}, the most one caller may have waiting)" in over["text"]
    assert approved["state"] == {"todos": [], "selected_todo_id": None}
    for no in (bob_declined, declined):
        assert no["interrupts"] == []
        assert no["state"] == {"todos": [], "selected_todo_id": None}
    entries = [json.loads(line) for line in audit.read_text().splitlines()]
    assert {e["transport"] for e in entries} == {"ag-ui"}
    assert [(e["principal"], e["capability"], e["decision"], e["approval"]) for e in entries] == [
        ("alice", "create_todo", "dispatched", None),
        ("alice", "select_todo", "dispatched", None),
        ("alice", "delete_todo", "refused", "unavailable"),
        ("alice", "delete_todo", "dispatched", "approved"),
        ("bob", "delete_todo", "refused", "declined"),
        ("alice", "delete_todo", "refused", "declined"),
    ]


@pytest.mark.skipif(not COPILOTKIT.exists(), reason="@copilotkit/runtime is not installed")
async def test_copilotkits_runtime_serves_the_copilot_configured_with_the_url_and_a_token(
    tmp_path: Path,
) -> None:
    """tests/interop/copilotkit_runtime.mjs is CopilotKit's runtime with one agent: an
    HttpAgent given serve's /ag-ui URL and a bearer token. A front end speaking to CopilotKit
    (here @ag-ui/client at the runtime's run route) gets the copilot's runs through it: the
    state, the tool calls, a delete's interrupt and its resumption."""
    audit = tmp_path / "audit.jsonl"
    async with serve_process("examples.todo:runtime", *serve_args(audit)) as origin:
        command = ["node", str(INTEROP / "copilotkit_runtime.mjs"), f"{origin}/ag-ui", ALICE]
        with launched(command, "CopilotKit's runtime", cwd=INTEROP, env=QUIET) as (kit, _):
            seen = await runs(
                f"{kit}/api/copilotkit/agent/todo/run",
                [
                    {"thread": "k1", "text": "add Milk"},
                    {"thread": "k1", "text": "select todo-1"},
                    {"thread": "k1", "text": "delete it"},
                    {"thread": "k1", "resume": "approve"},
                ],
            )
    added, selected, asked, approved = seen
    assert added["error"] is None
    assert added["types"][:2] == ["RUN_STARTED", "STATE_SNAPSHOT"]
    assert added["tools"] == ["create_todo"]
    assert [t["title"] for t in added["state"]["todos"]] == ["Milk"]
    assert selected["state"]["selected_todo_id"] == "todo-1"
    (interrupt,) = asked["interrupts"]
    assert interrupt["metadata"]["sentence"] == 'Delete the todo "Milk"'
    assert approved["state"] == {"todos": [], "selected_todo_id": None}
    assert approved["text"] == "delete_todo: dispatched"
    entries = [json.loads(line) for line in audit.read_text().splitlines()]
    assert [(e["principal"], e["capability"], e["approval"]) for e in entries] == [
        ("alice", "create_todo", None),
        ("alice", "select_todo", None),
        ("alice", "delete_todo", "approved"),
    ]


async def test_a_callers_waiting_calls_are_counted_together_over_mcp_and_ag_ui(
    tmp_path: Path,
) -> None:
    """One share for every transport: alice's two MCP elicitations fill her share of calls
    waiting for a person, so her copilot's delete is refused at once; bob's copilot is still
    asked about his own."""
    audit = tmp_path / "audit.jsonl"
    async with serve_process("examples.todo:runtime", "--mcp", "http", *serve_args(audit)) as at:
        async with mcp_client(f"{at}/mcp", ALICE, "legacy") as setup:
            assert (await setup.call_tool("create_todo", {"title": "Milk"})).is_error is False
            assert (await setup.call_tool("select_todo", {"id": "todo-1"})).is_error is False
        async with holding_mcp(f"{at}/mcp", ALICE, "legacy", SHARE) as (_alice, held):
            over, bob, declined = await runs(
                f"{at}/ag-ui",
                [
                    {"token": ALICE, "thread": "a1", "text": "delete it"},
                    {"token": BOB, "thread": "b1", "text": "delete it"},
                    {"token": BOB, "thread": "b1", "resume": "decline"},
                ],
            )
            assert held.asked == SHARE
    assert over["interrupts"] == []
    assert f"({SHARE}, the most one caller may have waiting)" in over["text"]
    (interrupt,) = bob["interrupts"]
    assert interrupt["metadata"]["capability"] == "delete_todo"
    assert declined["state"]["selected_todo_id"] == "todo-1"  # nothing was deleted
    refused = [json.loads(line) for line in audit.read_text().splitlines()]
    by_transport = [(e["transport"], e["principal"], e["approval"]) for e in refused[2:]]
    assert ("ag-ui", "alice", "unavailable") in by_transport
    assert ("ag-ui", "bob", "declined") in by_transport
    assert by_transport.count(("mcp", "alice", "declined")) == SHARE
