"""Scenario 17: throughput of 1, 2 and 3 ``foldkit-agent serve`` workers behind nginx.

The stack of ``python -m deploy`` (``deploy.stack``): nginx hashing each tenant onto its
worker, the todos and a durable audit in one PostgreSQL database (a throwaway cluster, one
fresh database per run). 12 tenants, chosen so that each worker holds the same number of them
(``deploy.stack.owner`` computes nginx's ring), 4 official MCP clients each (48 in all, in this
process), each calling ``toggle_todo`` on one of its tenant's todos through nginx for a fixed
time. Reported: calls/s with 2 and 3 workers as ratios to 1 worker, every call answered, and
the cores the clients (this process) and the workers kept busy during the run.
"""

from __future__ import annotations

import asyncio
import os
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx2
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from deploy.postgres import cluster
from deploy.stack import Stack, owner, stack

from .harness import Row
from .http_load import Caller, load

SCENARIO = "17. workers behind nginx"
TENANTS = 12
CLIENTS_PER_TENANT = 4
POOL = [f"tenant{n}" for n in range(120)]
"""Names the stack knows; each run picks :data:`TENANTS` of them spread evenly on its ring."""


def balanced(servers: list[str]) -> list[str]:
    """:data:`TENANTS` tenants of :data:`POOL`, the same number on each server of the ring."""
    share = TENANTS // len(servers)
    picked: dict[str, list[str]] = {s: [] for s in servers}
    for tenant in POOL:
        held = picked[owner(tenant, servers)]
        if len(held) < share:
            held.append(tenant)
    chosen = [t for held in picked.values() for t in held]
    if len(chosen) != TENANTS:
        raise RuntimeError(f"the ring of {servers} left a worker short of tenants")
    return chosen


async def _first_todo(running: Stack, tenant: str) -> str:
    headers = {"Authorization": f"Bearer {running.tokens[tenant]}"}
    async with (
        httpx2.AsyncClient(timeout=60, headers=headers) as http,
        Client(streamable_http_client(running.url(tenant), http_client=http)) as client,
    ):
        made = await client.call_tool("create_todo", {"title": "bench"})
        assert made.structured_content is not None, made
        return str(made.structured_content["result"]["id"])


def _cpu_seconds(pid: int) -> float:
    """User + system CPU seconds a process has used (``/proc/PID/stat``)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _workers_cpu(running: Stack) -> float:
    return sum(_cpu_seconds(w.process.proc.pid) for w in running.workers if w.process)


async def _measure(running: Stack, seconds: float) -> dict[str, Any]:
    tenants = balanced([w.address for w in running.workers])
    ids = await asyncio.gather(*(_first_todo(running, t) for t in tenants))
    callers = [
        Caller(
            running.url(tenant),
            {"Authorization": f"Bearer {running.tokens[tenant]}"},
            "toggle_todo",
            {"id": todo},
        )
        for tenant, todo in zip(tenants, ids, strict=True)
        for _ in range(CLIENTS_PER_TENANT)
    ]
    clients0, workers0 = time.process_time(), _workers_cpu(running)
    ok, errors, elapsed = await load(callers, seconds)
    clients = (time.process_time() - clients0) / elapsed  # cores the 48 clients kept busy
    served = (_workers_cpu(running) - workers0) / elapsed
    return {"rate": ok / elapsed, "ok": ok, "errors": errors, "clients": clients, "workers": served}


@contextmanager
def _stack_of(workers: int, dsn: str) -> Iterator[Stack]:
    with stack(POOL, workers=workers, dsn=dsn) as running:
        yield running


async def run(seconds: float = 6.0, repeats: int = 2) -> list[Row]:
    """1, 2 and 3 workers, alternated ``repeats`` times; each keeps its best run."""
    runs: dict[int, list[dict[str, Any]]] = {1: [], 2: [], 3: []}
    busy = os.getloadavg()[0]
    with cluster() as running_cluster:
        for _ in range(repeats):
            for workers in runs:
                with running_cluster.database() as dsn, _stack_of(workers, dsn) as running:
                    runs[workers].append(await _measure(running, seconds))
    best = {n: max(r, key=lambda r: r["rate"]) for n, r in runs.items()}
    errors = sum(r["errors"] for rs in runs.values() for r in rs)
    one = best[1]
    rows = [
        Row(
            SCENARIO,
            f"1 worker: toggle_todo per second, {TENANTS} tenants × {CLIENTS_PER_TENANT} "
            f"clients through nginx, best of {repeats} × {seconds:g} s (load average "
            f"{busy:.1f} on 2 cores at the start)",
            f"{one['rate']:.0f}/s, {one['errors']} errors; cores busy: clients "
            f"{one['clients']:.2f}, workers {one['workers']:.2f}",
            "—",
            None,
            "reported",
            None,
        )
    ]
    for workers in (2, 3):
        got = best[workers]
        rows.append(
            Row(
                SCENARIO,
                f"{workers} workers vs 1 (2 cores shared by nginx, PostgreSQL, the workers "
                "and the 48 clients)",
                f"{got['rate']:.0f}/s, {got['errors']} errors; cores busy: clients "
                f"{got['clients']:.2f}, workers {got['workers']:.2f}",
                f"1 worker {one['rate']:.0f}/s",
                got["rate"] / one["rate"],
                "reported; zero errors",
                errors == 0,
            )
        )
    return rows


if __name__ == "__main__":
    for row in asyncio.run(run()):
        print(row)
