"""Interop: the official AG-UI client (@ag-ui/client, pinned in tests/interop) drives the
notes app's copilot (tests/support/ag_ui_server.py, served by uvicorn on a free loopback port),
applying the shared state with fast-json-patch as a front end does."""

from __future__ import annotations

import json
import shutil
import subprocess
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from tests.support.launched import launched
from tests.support.paths import ROOT

INTEROP = ROOT / "tests" / "interop"
CLIENT = INTEROP / "node_modules" / "@ag-ui" / "client"

pytestmark = [
    pytest.mark.interop,
    pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed"),
    pytest.mark.skipif(not CLIENT.exists(), reason="@ag-ui/client is not installed"),
]


@pytest.fixture(scope="module")
def server() -> Iterator[str]:
    """tests/support/ag_ui_server.py; its base URL once it printed its bound port."""
    with launched(ROOT / "tests" / "support" / "ag_ui_server.py", "the AG-UI server") as (url, _):
        yield url


@pytest.fixture(scope="module")
def seen(server: str) -> dict[str, Any]:
    """Five runs on one thread: "add eggs"; "remove the first" (ends in an interrupt), resumed
    with a decline and a reason; "remove the first" again, resumed with an approval."""
    steps = [
        {"thread": "thread-1", "text": "add eggs"},
        {"thread": "thread-1", "text": "remove the first"},
        {"thread": "thread-1", "resume": "decline", "reason": "keep the milk"},
        {"thread": "thread-1", "text": "remove the first"},
        {"thread": "thread-1", "resume": "approve"},
    ]
    done = subprocess.run(
        ["node", str(INTEROP / "ag_ui_runs.mjs"), server + "/", json.dumps(steps)],
        cwd=INTEROP,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    names = ("added", "asked", "declined", "askedAgain", "approved")
    return dict(zip(names, json.loads(done.stdout), strict=True))


def test_the_client_holds_the_new_context_by_applying_the_delta_to_the_snapshot(
    seen: dict[str, Any],
) -> None:
    added = seen["added"]
    assert added["types"][:2] == ["RUN_STARTED", "STATE_SNAPSHOT"]
    assert added["types"][-1] == "RUN_FINISHED"
    assert added["types"].index("TOOL_CALL_RESULT") < added["types"].index("STATE_DELTA")
    assert added["state"] == {"notes": ["buy milk", "call mom", "eggs"]}
    assert added["agentState"] == added["state"]  # the client's own reading agrees


def test_a_confirm_capability_ends_the_run_in_an_interrupt_carrying_the_request(
    seen: dict[str, Any],
) -> None:
    asked = seen["asked"]
    assert asked["types"][-1] == "RUN_FINISHED"
    assert "TOOL_CALL_RESULT" not in asked["types"]
    (interrupt,) = asked["interrupts"]
    request = interrupt["metadata"]
    assert request["capability"] == "remove_note"
    assert request["preview"] == [{"op": "remove", "path": "/notes/0"}]
    assert asked["deltas"] == 0


def test_a_decline_with_a_reason_sends_nothing_and_the_model_reads_the_reason(
    seen: dict[str, Any],
) -> None:
    declined = seen["declined"]
    assert declined["deltas"] == 0
    assert declined["state"] == {"notes": ["buy milk", "call mom", "eggs"]}
    assert "keep the milk" in declined["text"]


def test_an_approval_sends_the_message_once_and_the_delta_removes_the_note(
    seen: dict[str, Any], server: str
) -> None:
    approved = seen["approved"]
    assert approved["deltas"] == 1
    assert approved["state"] == approved["agentState"] == {"notes": ["call mom", "eggs"]}
    audit = httpx.get(server + "/audit", timeout=10).json()
    assert [(e["capability"], e["decision"], e["approval"]) for e in audit] == [
        ("add_note", "dispatched", None),
        ("remove_note", "refused", "declined"),
        ("remove_note", "dispatched", "approved"),
    ]
    assert {(e["transport"], e["principal"]) for e in audit} == {("ag-ui", "alice")}
