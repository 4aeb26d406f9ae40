"""Issue 21: an id the A2A task store could not hold is refused before anything runs.

The SDK's task table keeps task and context ids in ``VARCHAR(36)`` and PostgreSQL holds no NUL:
a ``SendMessage`` with a 37-character ``contextId`` used to run its call (a todo created,
audited) and then answer -32603 with no task, so a retrying client made duplicates. Now every
store (in memory, SQLite, PostgreSQL) answers invalid params naming the field, and nothing is
created, dispatched or audited. On a real ``foldkit-agent serve`` with the todo example.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx
import pytest

from foldkit_agent.adapters.a2a import EXTENSION_URI
from tests.support.serving import mcp_client, serving, todos_of

A2A = {"A2A-Version": "1.0"}


@pytest.fixture(params=["memory", "sqlite", "postgres"])
def any_task_store(request: pytest.FixtureRequest, tmp_path: Path) -> Any:
    """``serve``'s ``--a2a-task-store`` arguments: none (the bounded store in memory), a SQLite
    file, or a fresh PostgreSQL database."""
    if request.param == "memory":
        yield ()
        return
    if request.param == "sqlite":
        yield ("--a2a-task-store", f"sqlite:///{tmp_path / 'tasks.db'}")
        return
    cluster: Any = request.getfixturevalue("postgres_cluster")
    with cluster.database() as dsn:
        yield ("--a2a-task-store", f"postgres:{dsn}")


def rpc(method: str, params: dict[str, Any]) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": 1, "method": method, "params": params}


def send(title: str, **message: Any) -> dict[str, Any]:
    return rpc(
        "SendMessage",
        {
            "message": {
                "role": "ROLE_USER",
                "messageId": "m-1",
                "parts": [{"data": {"title": title}}],
                **message,
            },
            "metadata": {EXTENSION_URI: {"skill": "create_todo"}},
        },
    )


async def test_f21_an_id_the_task_store_cannot_hold_is_refused_before_the_call_runs(
    any_task_store: tuple[str, ...], tmp_path: Path
) -> None:
    audit = tmp_path / "audit.jsonl"
    args = ("--mcp", "http", "--a2a", "--audit", f"jsonl:{audit}", *any_task_store)
    refused = {
        "message.contextId": send("A", contextId="c" * 37),
        "message.contextId ": send("B", contextId="ctx\x00"),
        "message.taskId": send("C", taskId="t" * 37),
        "message.messageId": send("D", messageId="m" * 129),
        "message.referenceTaskIds[0]": send("E", referenceTaskIds=["r\x01"]),
        "id": rpc("GetTask", {"id": "task\x00"}),
        "id ": rpc("CancelTask", {"id": "x" * 37}),
        "contextId": rpc("ListTasks", {"contextId": "ctx\x00"}),
    }
    async with serving(*args) as server, httpx.AsyncClient(timeout=30, headers=A2A) as http:
        url = f"{server.origin}/a2a/jsonrpc"
        for field, body in refused.items():
            answer = (await http.post(url, json=body)).json()
            assert answer["error"]["code"] == -32602, (field, answer)
            assert answer["error"]["message"].startswith(field.strip() + " "), answer
        # a 36-character context id (a UUID's length) is served
        ok = (await http.post(url, json=send("Milk", contextId="c" * 36))).json()
        assert ok["result"]["task"]["status"]["state"] == "TASK_STATE_COMPLETED"
        assert ok["result"]["task"]["contextId"] == "c" * 36
        read = await http.post(url, json=rpc("GetTask", {"id": ok["result"]["task"]["id"]}))
        assert read.json()["result"]["status"]["state"] == "TASK_STATE_COMPLETED"
        async with mcp_client(f"{server.origin}/mcp") as mcp:
            assert [t["title"] for t in await todos_of(mcp)] == ["Milk"]  # none of the refused
    entries = [json.loads(line) for line in audit.read_text().splitlines() if line.strip()]
    assert {e["invocation_id"] for e in entries} == {ok["result"]["task"]["id"]}
