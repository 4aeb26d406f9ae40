"""Scenario 14: graceful drain of a real ``foldkit-agent serve`` on SIGTERM.

    python -m bench.drain [--calls 60] [--runs 3]

Serves ``tests.support.drain_app:runtime`` (one ``hold`` capability, applied at once and
completed when the process gets SIGUSR1) over MCP, A2A and the Agent Native endpoint, with a
non-durable SQLite audit, and holds ``--calls`` calls in flight, a third each over legacy-era
MCP (the official client), A2A ``message/send`` (the SDK client) and the native endpoint.
Then SIGTERM, in two settings:

* **finish**: SIGUSR1 once the server says it is draining, so every call completes during the
  drain; measured: SIGUSR1 to exit (what the drain adds once the calls are done);
* **deadline**: ``--drain-timeout 1`` and no SIGUSR1, so every call is aborted at the
  deadline; measured: SIGTERM to exit (the deadline plus answering and cleanup).

Each run counts the answers by kind, the audit entries stored, and the exit status.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import re
import signal
import statistics
import sys
import tempfile
import time
import uuid
from dataclasses import dataclass
from pathlib import Path

import httpx
import httpx2

from foldkit_agent import SqliteAuditSink

from .harness import Row

ROOT = Path(__file__).resolve().parent.parent
SERVICE = "s3rvice-token-0123456789"
SCENARIO = "14. graceful drain"


@dataclass
class Run:
    setting: str
    calls: int
    answered: dict[str, int]
    audited: int
    exit_code: int | None
    seconds: float


async def _mcp(origin: str, n: int) -> list[str]:
    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client

    kinds: list[str] = []
    try:
        http = httpx2.AsyncClient(timeout=120)
        wire = streamable_http_client(f"{origin}/mcp", http_client=http)
        async with Client(wire, mode="legacy") as client:
            await client.list_tools()

            async def one() -> None:
                result = await client.call_tool("hold", {})
                kinds.append((result.structured_content or {}).get("status", "?"))

            await asyncio.gather(*(one() for _ in range(n)))
    except* httpx2.ConnectError:
        pass  # closing the session after the answers, on a server that has exited
    return kinds


async def _a2a(origin: str, n: int) -> list[str]:
    from a2a.client import A2ACardResolver, ClientConfig, create_client
    from a2a.helpers import new_data_part
    from a2a.types import Message, Role, SendMessageRequest, TaskState

    from foldkit_agent.adapters.a2a import EXTENSION_URI

    async with httpx.AsyncClient(base_url=origin, timeout=120) as hc:
        card = await A2ACardResolver(hc, origin).get_agent_card()
        client = await create_client(card, client_config=ClientConfig(httpx_client=hc))

        async def one() -> str:
            msg = Message(
                role=Role.ROLE_USER,
                message_id=str(uuid.uuid4()),
                parts=[new_data_part({})],
                extensions=[EXTENSION_URI],
            )
            request = SendMessageRequest(message=msg)
            request.metadata.update({EXTENSION_URI: {"skill": "hold"}})
            state = "?"
            async for event in client.send_message(request):
                if event.HasField("task"):
                    state = TaskState.Name(event.task.status.state)
                elif event.HasField("status_update"):
                    state = TaskState.Name(event.status_update.status.state)
            return state

        kinds = list(await asyncio.gather(*(one() for _ in range(n))))
        await client.close()
    return kinds


async def _native(origin: str, n: int) -> list[str]:
    async with httpx.AsyncClient(base_url=f"{origin}/native", timeout=120) as hc:

        async def one() -> str:
            r = await hc.post(
                "/invoke/hold", json={}, headers={"Authorization": f"Bearer {SERVICE}"}
            )
            return str(r.json()["structuredContent"]["status"])

        return list(await asyncio.gather(*(one() for _ in range(n))))


async def one_run(setting: str, calls: int, tmp: Path) -> Run:
    audit = tmp / f"{setting}-{time.monotonic_ns()}.db"
    extra = ["--drain-timeout", "1"] if setting == "deadline" else []
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "foldkit_agent.cli", "serve", "tests.support.drain_app:runtime",
        "--mcp", "http", "--a2a", "--native-token", SERVICE, "--port", "0",
        "--audit", f"sqlite:{audit}", *extra,
        cwd=ROOT, stderr=asyncio.subprocess.PIPE,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )  # fmt: skip
    assert proc.stderr is not None
    first = (await proc.stderr.readline()).decode()
    found = re.search(r"http://[^/\s]+", first)
    assert found is not None, first
    origin = found.group(0)
    third = calls // 3
    clients = asyncio.gather(_mcp(origin, third), _a2a(origin, third), _native(origin, third))
    holding = 0
    while holding < 3 * third:
        line = (await proc.stderr.readline()).decode()
        assert line, "serve exited early"
        holding += line.startswith("holding ")
    proc.send_signal(signal.SIGTERM)
    started = time.perf_counter()
    if setting == "finish":
        while "draining" not in (await proc.stderr.readline()).decode():
            pass
        proc.send_signal(signal.SIGUSR1)
        started = time.perf_counter()
    exit_code = await proc.wait()
    seconds = time.perf_counter() - started
    answered: dict[str, int] = {}
    for kind in (k for batch in await clients for k in batch):
        answered[kind] = answered.get(kind, 0) + 1
    audited = len(SqliteAuditSink(audit).query())
    return Run(setting, 3 * third, answered, audited, exit_code, seconds)


async def measure(calls: int, runs: int) -> list[Run]:
    results: list[Run] = []
    with tempfile.TemporaryDirectory(prefix="foldkit-drain-") as tmp:
        for _ in range(runs):
            for setting in ("finish", "deadline"):
                results.append(await one_run(setting, calls, Path(tmp)))
    return results


def rows(results: list[Run]) -> list[Row]:
    out: list[Row] = []
    for setting, what in (
        ("finish", "SIGUSR1 (calls done) → exit"),
        ("deadline", "SIGTERM → exit, --drain-timeout 1"),
    ):
        mine = [r for r in results if r.setting == setting]
        median = statistics.median(r.seconds for r in mine)
        whole = all(r.exit_code == 0 and r.audited == r.calls for r in mine)
        out.append(
            Row(
                SCENARIO,
                f"{what}, {mine[0].calls} calls in flight",
                f"{median * 1000:.0f} ms",
                "—",
                None,
                "exit 0, every call answered and audited",
                whole,
            )
        )
    return out


async def run(quick: bool = False) -> list[Row]:
    """Scenario 14 as result rows: 30 calls, one run of each setting (3 runs unless quick)."""
    return rows(await measure(30, 1 if quick else 3))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--calls", type=int, default=60)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    results = asyncio.run(measure(args.calls, args.runs))
    for r in results:
        print(
            f"{r.setting:8} calls={r.calls} answered={r.answered} audited={r.audited} "
            f"exit={r.exit_code} seconds={r.seconds:.3f}"
        )
    for row in rows(results):
        print(row)


if __name__ == "__main__":
    main()
