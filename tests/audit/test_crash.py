"""``kill -9`` under load: with ``durable=True`` no answered call is missing from the audit.

A real child process (tests/support/crash_child.py) answers calls from 32 concurrent tasks
and prints each invocation id once its answer is released; the parent lets it run to a
different point in each run, kills it with SIGKILL, reads every id that reached the pipe and
looks each one up in the SQLite file or the PostgreSQL table. Then the same through a real
``foldkit-agent serve --audit ... --audit-durable`` and official MCP clients, whose answers
carry the invocation id. Issue 15 found up to 11 of ~8,000 answered calls missing this way
without ``durable``; the same child without it loses about a hundred per run here.
"""

from __future__ import annotations

import asyncio
import os
import re
import signal
import sqlite3
import subprocess
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import anyio
import httpx2
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from tests.support.audit_stores import Database
from tests.support.paths import ROOT

WAIT = 30.0


def _answered_until_killed(database: Database, answers_before_kill: int) -> list[str]:
    """Run the child, SIGKILL it once it has answered that many calls; every id it printed."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), str(ROOT / "src")])}
    child = subprocess.Popen(
        [sys.executable, "-m", "tests.support.crash_child", database.kind, database.target,
         "durable"],
        stdout=subprocess.PIPE,
        cwd=ROOT,
        env=env,
    )  # fmt: skip
    assert child.stdout is not None
    try:
        assert child.stdout.readline() == b"ready\n"
        answered: list[str] = []
        while len(answered) < answers_before_kill:
            line = child.stdout.readline()
            assert line.endswith(b"\n"), "the child stopped before it was killed"
            answered.append(line.decode().strip())
        child.send_signal(signal.SIGKILL)
        rest = child.stdout.read()  # what it printed before it died
        child.wait(WAIT)
    finally:
        if child.poll() is None:
            child.kill()
            child.wait(WAIT)
    assert child.returncode == -signal.SIGKILL
    lines = rest.decode(errors="replace").split("\n")
    return answered + [line for line in lines[:-1]]  # a torn last line was never a whole id


@pytest.mark.parametrize("run", range(3))
def test_kill_9_under_load_leaves_no_answered_call_unaudited(database: Database, run: int) -> None:
    answered = _answered_until_killed(database, answers_before_kill=400 + 900 * run)
    stored = {e.invocation_id: e for e in database.make().query()}
    missing = [i for i in answered if i not in stored]
    assert missing == [], f"{len(missing)} of {len(answered)} answered calls are not in the audit"
    assert len(answered) >= 400 + 900 * run
    refused = [i for i in answered if i.endswith(("-4", "-9"))]
    assert refused  # refusals were answered and audited too
    assert {stored[i].decision for i in refused} == {"refused"}
    if database.kind == "sqlite":
        conn = sqlite3.connect(Path(database.target))
        try:
            assert conn.execute("PRAGMA integrity_check").fetchall() == [("ok",)]
        finally:
            conn.close()


@asynccontextmanager
async def _serving(spec: str) -> AsyncIterator[tuple[asyncio.subprocess.Process, str]]:
    """``foldkit-agent serve examples.todo:runtime --mcp http --audit SPEC --audit-durable``;
    yields the process and its MCP URL, and kills it on the way out."""
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "foldkit_agent.cli", "serve", "examples.todo:runtime",
        "--mcp", "http", "--port", "0", "--audit", spec, "--audit-durable",
        cwd=ROOT,
        stderr=asyncio.subprocess.PIPE,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )  # fmt: skip
    assert proc.stderr is not None
    try:
        with anyio.fail_after(WAIT):
            line = (await proc.stderr.readline()).decode()
        found = re.search(r"http://[^/\s]+/mcp", line)
        assert found is not None, line
        yield proc, found.group(0)
    finally:
        if proc.returncode is None:
            proc.kill()
            await proc.wait()


def _client(url: str) -> Client:
    return Client(streamable_http_client(url, http_client=httpx2.AsyncClient(timeout=WAIT)))


async def test_serve_with_audit_durable_stores_each_entry_before_its_answer(
    database: Database,
) -> None:
    sink = database.make()  # a reader; the server writes through its own
    async with _serving(f"{database.kind}:{database.target}") as (_proc, url), _client(url) as mcp:
        for n in range(15):
            result = await mcp.call_tool("create_todo", {"title": f"n{n}"})
            assert result.structured_content is not None
            invocation_id = result.structured_content["invocation_id"]
            # Read as soon as the answer arrived: without durable the batch is still
            # lingering in the server (the row is missing here nearly every time).
            stored = await asyncio.to_thread(sink.query, capability="create_todo")
            assert invocation_id in {e.invocation_id for e in stored}
    sink.close()


async def test_kill_9_of_serve_with_audit_durable_leaves_no_answered_call_unaudited(
    database: Database,
) -> None:
    answered: list[str] = []
    enough = asyncio.Event()
    async with _serving(f"{database.kind}:{database.target}") as (proc, url):

        async def client(c: int) -> None:
            try:
                async with _client(url) as mcp:
                    n = 0
                    while True:
                        result = await mcp.call_tool("create_todo", {"title": f"c{c} n{n}"})
                        assert result.structured_content is not None
                        answered.append(result.structured_content["invocation_id"])
                        if len(answered) >= 150:
                            enough.set()
                        n += 1
            except Exception:
                if not enough.is_set():
                    raise  # only the kill may end a client

        async with anyio.create_task_group() as tg:
            for c in range(16):
                tg.start_soon(client, c)
            with anyio.fail_after(WAIT * 2):
                await enough.wait()
            proc.send_signal(signal.SIGKILL)
            with anyio.fail_after(WAIT):
                await proc.wait()
    assert proc.returncode == -signal.SIGKILL
    stored = {e.invocation_id for e in database.make().query()}
    missing = [i for i in answered if i not in stored]
    assert missing == [], f"{len(missing)} of {len(answered)} answered calls are not in the audit"
    assert len(answered) >= 150
