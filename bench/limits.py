"""What the per-caller caps hold, and what an in-limit body costs (docs/reliability.md).

    python -m bench.limits

Runs the MCP and A2A apps on a loopback port on this event loop (``run_http``, as ``serve``)
and measures, with ``tracemalloc`` after ``gc.collect()``:

1. memory per handshake-era MCP session (200 opened by one caller, under a cap of 1,000);
2. one caller opening 300 sessions with the default cap of 100 per caller: how many opened,
   and whether a second caller still gets in;
3. the A2A task store after 150 refused calls of ~0.9 MB each;
4. decoding an in-limit body (~0.9 MB, 9,901 values; the A2A envelope adds a few more) with
   ``loads_strict``, and how long a 1 ms ticker on the same loop is held up while A2A decodes
   and refuses such a body.

Numbers only; nothing is asserted about time.
"""

from __future__ import annotations

import asyncio
import gc
import json
import statistics
import time
import tracemalloc
from typing import Any

import anyio
import httpx
from mcp.server.auth.provider import AccessToken

from examples.todo import run_todo
from foldkit_agent.adapters.a2a import EXTENSION_URI, BoundedTaskStore, a2a_app
from foldkit_agent.adapters.mcp import StaticTokenVerifier, http_app
from foldkit_agent.cli.serve import bind_socket, run_http
from foldkit_agent.edge import CallerLimits, HttpOptions
from foldkit_agent.edge.wire import loads_strict
from tests.support.mcp_helpers import INITIALIZE

VERIFIER = StaticTokenVerifier(
    {
        f"{who}-token": AccessToken(token=f"{who}-token", client_id="b", scopes=[], subject=who)
        for who in ("alice", "bob")
    }
)


async def _serving(app: Any, work: Any) -> Any:
    sock = bind_socket("127.0.0.1", 0)
    origin = f"http://127.0.0.1:{sock.getsockname()[1]}"
    async with anyio.create_task_group() as tg:
        tg.start_soon(lambda: run_http(app, sock=sock))
        try:
            return await work(origin)
        finally:
            tg.cancel_scope.cancel()


async def _open(hc: httpx.AsyncClient, token: str) -> int:
    headers = {"Accept": "application/json, text/event-stream", "Authorization": f"Bearer {token}"}
    return (await hc.post("/mcp", json=INITIALIZE, headers=headers)).status_code


async def sessions() -> dict[str, Any]:
    async with run_todo() as (_running, rt):
        app = http_app(
            rt,
            name="b",
            version="1",
            token_verifier=VERIFIER,
            options=HttpOptions(caps=CallerLimits(sessions_per_caller=1000)),
        )

        async def work(origin: str) -> dict[str, Any]:
            async with httpx.AsyncClient(base_url=origin, timeout=30) as hc:
                await _open(hc, "alice-token")  # warm up
                gc.collect()
                tracemalloc.start()
                before = tracemalloc.get_traced_memory()[0]
                statuses = [await _open(hc, "alice-token") for _ in range(200)]
                gc.collect()
                grown = tracemalloc.get_traced_memory()[0] - before
                tracemalloc.stop()
            return {"opened": statuses.count(200), "bytes_per_session": grown // 200}

        return await _serving(app, work)


async def capped() -> dict[str, Any]:
    async with run_todo() as (_running, rt):
        app = http_app(rt, name="b", version="1", token_verifier=VERIFIER)

        async def work(origin: str) -> dict[str, Any]:
            async with httpx.AsyncClient(base_url=origin, timeout=30) as hc:
                statuses = [await _open(hc, "alice-token") for _ in range(300)]
                bob = await _open(hc, "bob-token")
            return {
                "alice_opened": statuses.count(200),
                "alice_refused_429": statuses.count(429),
                "bob": bob,
                "held": len(app.state.mcp_sessions),
            }

        return await _serving(app, work)


def _a2a_body(data: dict[str, Any]) -> bytes:
    message = {
        "role": "ROLE_USER",
        "messageId": "m",
        "parts": [{"data": data}],
        "extensions": [EXTENSION_URI],
    }
    body = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "SendMessage",
        "params": {"message": message, "metadata": {EXTENSION_URI: {"skill": "create_todo"}}},
    }
    return json.dumps(body).encode()


async def tasks() -> dict[str, Any]:
    store = BoundedTaskStore(max_tasks=100)
    async with run_todo() as (_running, rt):
        app = a2a_app(rt, name="b", version="1", base_url="http://127.0.0.1", task_store=store)
        body = _a2a_body({"title": 1, "note": "x" * 900_000})  # refused: not a string, extra

        async def work(origin: str) -> dict[str, Any]:
            headers = {"Content-Type": "application/json", "A2A-Version": "1.0"}
            async with httpx.AsyncClient(base_url=origin, timeout=60) as hc:
                await hc.post("/a2a/jsonrpc", content=body, headers=headers)
                gc.collect()
                tracemalloc.start()
                before = tracemalloc.get_traced_memory()[0]
                states = []
                for _ in range(150):
                    answer = await hc.post("/a2a/jsonrpc", content=body, headers=headers)
                    states.append(answer.json()["result"]["task"]["status"]["state"])
                gc.collect()
                grown = tracemalloc.get_traced_memory()[0] - before
                tracemalloc.stop()
            return {
                "calls": len(states),
                "rejected": states.count("TASK_STATE_REJECTED"),
                "store_held": len(store),
                "store_evicted": store.evicted,
                "memory_growth_kib": grown // 1024,
                "body_kib": len(body) // 1024,
            }

        return await _serving(app, work)


async def decoding() -> dict[str, Any]:
    values = {f"f{n}": "y" * 85 for n in range(9_900)}  # in the A2A envelope: < 10,000 values
    raw = json.dumps(values).encode()
    timings = []
    for _ in range(20):
        start = time.perf_counter()
        loads_strict(raw)
        timings.append(time.perf_counter() - start)
    ticks: list[float] = []
    stop = asyncio.Event()

    async def ticker() -> None:
        last = time.perf_counter()
        while not stop.is_set():
            await asyncio.sleep(0.001)
            now = time.perf_counter()
            ticks.append(now - last)
            last = now

    async with run_todo() as (_running, rt):
        app = a2a_app(rt, name="b", version="1", base_url="http://127.0.0.1")
        body = _a2a_body(values)

        async def work(origin: str) -> None:
            headers = {"Content-Type": "application/json", "A2A-Version": "1.0"}
            async with httpx.AsyncClient(base_url=origin, timeout=60) as hc:
                tick = asyncio.ensure_future(ticker())
                for _ in range(5):
                    await hc.post("/a2a/jsonrpc", content=body, headers=headers)
                stop.set()
                await tick

        await _serving(app, work)
    return {
        "body_kib": len(raw) // 1024,
        "loads_strict_ms_p50": round(statistics.median(timings) * 1000, 1),
        "a2a_request_kib": len(body) // 1024,
        "loop_held_max_ms": round(max(ticks) * 1000, 1),
    }


async def main() -> None:
    for name, scenario in (
        ("sessions", sessions),
        ("capped", capped),
        ("tasks", tasks),
        ("decoding", decoding),
    ):
        print(name, json.dumps(await scenario()), flush=True)


if __name__ == "__main__":
    anyio.run(main)
