"""Interop: the official A2A JavaScript client (@a2a-js/sdk, pinned in tests/interop) against
our A2A server, served by uvicorn on a free loopback port.

The client speaks A2A 1.0 (``A2A-Version: 1.0``) over JSON-RPC and HTTP+JSON; no 0.3
compatibility layer is needed. It fetches the card, invokes a skill, reads the completed task,
gets REJECTED tasks for an unavailable capability and for extra fields, an invalid-params
error for an unknown skill, streams a call, and reads the extended card as an authenticated
caller.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import time
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from tests.support.launched import launched
from tests.support.paths import ROOT

INTEROP = ROOT / "tests" / "interop"
SDK = INTEROP / "node_modules" / "@a2a-js" / "sdk"
EXT = "https://foldkit-agent.dev/a2a/skills/v1"

pytestmark = [
    pytest.mark.interop,
    pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed"),
    pytest.mark.skipif(not SDK.exists(), reason="@a2a-js/sdk is not installed in tests/interop"),
]


@pytest.fixture(scope="module")
def a2a_server() -> Iterator[str]:
    """Start tests/support/a2a_server.py; yield its base URL once the card answers."""
    script = ROOT / "tests" / "support" / "a2a_server.py"
    with launched(script, "the A2A server") as (base, proc):
        deadline = time.monotonic() + 20
        while True:  # poll until uvicorn serves the card
            try:
                if httpx.get(base + "/.well-known/agent-card.json", timeout=1).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            if proc.poll() is not None or time.monotonic() > deadline:
                pytest.fail("the A2A server never became ready")
            time.sleep(0.02)  # poll interval, not a wait for the server
        yield base


@pytest.fixture(scope="module")
def seen(a2a_server: str) -> dict[str, Any]:
    result = subprocess.run(
        ["node", str(INTEROP / "a2a_client.mjs"), a2a_server],
        cwd=INTEROP,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    return json.loads(result.stdout.strip().splitlines()[-1])


def test_the_js_client_reads_the_card_and_our_extension(seen: dict[str, Any]) -> None:
    card = seen["card"]
    assert card["name"] == "todo"
    assert card["skills"] == [
        "create_todo",
        "rename_todo",
        "toggle_todo",
        "select_todo",
        "clear_selection",
        "delete_todo",
    ]
    assert card["extensions"] == [EXT]
    assert card["createSchema"]["properties"]["title"]["maxLength"] == 200
    assert card["createSchema"]["additionalProperties"] is False


@pytest.mark.parametrize("index", [0, 1], ids=["JSONRPC", "HTTP+JSON"])
def test_the_js_client_invokes_a_skill_and_reads_the_completed_task(
    seen: dict[str, Any], index: int
) -> None:
    session = seen["sessions"][index]
    assert session["protocolVersion"] == "1.0"
    created = session["created"]
    assert created["state"] == "TASK_STATE_COMPLETED"
    (artifact,) = created["artifacts"]
    (data,) = artifact["data"]
    assert data["status"] == "completed"
    assert data["capability"] == "create_todo"
    assert data["result"]["_tag"] == "SavedTodo"
    fetched = session["fetched"]
    assert fetched["id"] == created["id"]
    assert fetched["state"] == "TASK_STATE_COMPLETED"
    assert fetched["artifacts"] == created["artifacts"]
    assert session["streamed"][0] == "task"
    assert "artifactUpdate" in session["streamed"]


@pytest.mark.parametrize("index", [0, 1], ids=["JSONRPC", "HTTP+JSON"])
def test_the_js_client_gets_rejected_tasks_for_refusals(seen: dict[str, Any], index: int) -> None:
    session = seen["sessions"][index]
    unavailable = session["unavailable"]
    assert unavailable["state"] == "TASK_STATE_REJECTED"
    assert "not available" in unavailable["statusText"][0]
    assert unavailable["statusData"][0]["_tag"] == "AgentCapabilityUnavailableError"
    assert unavailable["artifacts"] == []
    invalid = session["invalid"]
    assert invalid["state"] == "TASK_STATE_REJECTED"
    assert invalid["statusData"][0]["issues"] == [
        {"path": "priority", "problem": "unexpected field"}
    ]
    unknown = session["unknown"]
    assert unknown["kind"] == "error"
    assert unknown["name"].endswith("RequestMalformedError")  # the JS SDK's name for -32602
    assert "launch_rockets" in unknown["message"]


def test_the_js_client_reads_its_extended_card(seen: dict[str, Any]) -> None:
    for session in seen["sessions"]:
        # nothing is selected, so neither clear_selection nor delete_todo is available
        assert session["extendedSkills"] == [
            "create_todo",
            "rename_todo",
            "toggle_todo",
            "select_todo",
        ]
