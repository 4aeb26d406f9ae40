"""``serve --audit SPEC [--audit-durable]``: where the served runtime's audit entries go."""

from __future__ import annotations

import asyncio
import os
import re
import signal
import sys
from pathlib import Path
from typing import Any

import anyio
import httpx2
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from typer.testing import CliRunner

from foldkit_agent import AuditLog, JsonlAuditSink, PostgresAuditSink, SqliteAuditSink
from foldkit_agent.cli import app
from foldkit_agent.cli.serve.audit import attach_audit, open_sink
from foldkit_agent.edge.wire import loads_strict
from tests.support.audit_app import bind
from tests.support.paths import ROOT


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (["--audit-durable"], "--audit-durable needs --audit SPEC"),
        (["--audit", "carrier-pigeon:x"], "--audit takes sqlite:PATH, jsonl:PATH or postgres:DSN"),
        (["--audit", "sqlite:"], "--audit takes sqlite:PATH"),
        (["--audit", "postgres:host=/nonexistent connect_timeout=1"], "cannot open the PostgreSQL"),
    ],
)
def test_bad_audit_options_are_one_clear_line(args: list[str], said: str) -> None:
    result = CliRunner().invoke(app, ["serve", "examples.todo:runtime", "--mcp", "http", *args])
    assert result.exit_code == 2
    assert said in result.output
    assert "Traceback" not in result.output


def test_open_sink_reads_each_form(tmp_path: Path, postgres_dsn: str) -> None:
    sqlite = open_sink(f"sqlite:{tmp_path / 'a.db'}", durable=True)
    jsonl = open_sink(f"jsonl:{tmp_path / 'a.jsonl'}", durable=False)
    pg = open_sink(f"postgres:{postgres_dsn}", durable=True)
    assert isinstance(sqlite, SqliteAuditSink)
    assert isinstance(jsonl, JsonlAuditSink)
    assert isinstance(pg, PostgresAuditSink)
    assert (sqlite.durable, jsonl.durable, pg.durable) == (True, False, True)
    for sink in (sqlite, jsonl, pg):
        sink.close()


def test_the_runtime_keeps_its_own_log_choices_and_refuses_a_second_sink(tmp_path: Path) -> None:
    own = AuditLog(record_principal=lambda who: who["id"])
    _host, rt = bind(own)
    sink = SqliteAuditSink(tmp_path / "a.db")
    assert attach_audit(rt, sink) is own  # the principal projection stays
    with pytest.raises(ValueError, match="already has a sink"):
        attach_audit(rt, JsonlAuditSink(tmp_path / "b.jsonl"))
    _host, bare = bind(None)
    made = attach_audit(bare, JsonlAuditSink(tmp_path / "c.jsonl"))
    assert bare.audit is made
    for log in (own, made):
        assert log.close(5.0)


async def test_serve_with_a_jsonl_audit_flushes_every_entry_on_ctrl_c(tmp_path: Path) -> None:
    path = tmp_path / "audit.jsonl"
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "foldkit_agent.cli", "serve", "examples.todo:runtime",
        "--mcp", "http", "--port", "0", "--audit", f"jsonl:{path}",
        cwd=ROOT,
        stderr=asyncio.subprocess.PIPE,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )  # fmt: skip
    assert proc.stderr is not None
    ids: list[Any] = []
    try:
        with anyio.fail_after(30):
            line = (await proc.stderr.readline()).decode()
        found = re.search(r"http://[^/\s]+/mcp", line)
        assert found is not None, line
        http = httpx2.AsyncClient(timeout=10)
        async with Client(streamable_http_client(found.group(0), http_client=http)) as mcp:
            for n in range(3):
                result = await mcp.call_tool("create_todo", {"title": f"t{n}"})
                assert result.structured_content is not None
                ids.append(result.structured_content["invocation_id"])
            refused = await mcp.call_tool("create_todo", {"title": 5})
            assert refused.is_error
        proc.send_signal(signal.SIGINT)
        with anyio.fail_after(15):
            assert await proc.wait() == 0
    finally:
        if proc.returncode is None:
            proc.kill()
            await proc.wait()
    lines = [loads_strict(raw) for raw in path.read_bytes().splitlines()]
    assert [e["invocation_id"] for e in lines[:3]] == ids
    assert [e["decision"] for e in lines] == ["dispatched"] * 3 + ["refused"]
