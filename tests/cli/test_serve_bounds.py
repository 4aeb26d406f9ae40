"""What one token's hostile inputs cost a real ``serve`` process whose audit records inputs."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import httpx
import pytest

from tests.support.hostile import mcp_call_body, mcp_headers
from tests.support.serving import serve_process

pytestmark = pytest.mark.anyio

MIB = 1024 * 1024


def _rss(pid: int) -> int:
    """The process's resident set, in bytes (``VmRSS`` of ``/proc/PID/status``)."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024
    raise AssertionError("no VmRSS line")


async def test_240_refused_calls_of_a_3_9_mb_undeclared_field_grow_the_server_under_64_mib() -> (
    None
):
    """Each call is refused (``junk`` is not a field of ``create_todo``) and audited with its
    input; the audit keeps 16 KiB of it, so the ring's 240 entries hold ~4 MiB, not 936.

    The growth is counted from after 20 such calls: those set the allocator's high water for
    one 3.9 MB request in flight (its body, parsed, handed on), which the server reaches as
    much with ``include_input=False`` and which does not grow with the number of calls."""
    junk = "A" * 3_900_000
    body = mcp_call_body('"create_todo"', json.dumps({"title": "Milk", "junk": junk}))
    procs: list[asyncio.subprocess.Process] = []
    async with (
        serve_process(
            "tests.support.recorded_app:runtime", "--mcp", "http", process=procs
        ) as origin,
        httpx.AsyncClient(base_url=origin, timeout=60) as http,
    ):
        pid = procs[0].pid

        async def attack() -> str:
            r = await http.post("/mcp", content=body, headers=mcp_headers())
            assert r.status_code == 200, r.text[:300]
            return r.text

        first = await attack()
        assert "junk" in first, first[:300]
        assert '"isError":true' in first.replace(" ", ""), first[:300]
        for _ in range(19):
            await attack()
        before = _rss(pid)
        for _ in range(240):
            await attack()
        grown = _rss(pid) - before
    assert grown < 64 * MIB, f"the server grew by {grown / MIB:.0f} MiB"
