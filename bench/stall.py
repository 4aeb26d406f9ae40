"""Scenario 15: how long one in-limit A2A body holds up other requests on a real ``serve``.

    python -m bench.stall [--values 9900] [--bodies 10]

Serves the todo example over A2A (``foldkit-agent serve examples.todo:runtime --a2a``). A
second process sends ``--bodies`` ``SendMessage`` requests one after the other, each with one
data part of ``--values`` fields of 85 characters (~0.95 MB for 9,900: just under the 1 MiB
body limit and the 10,000-value cap; the call is refused, ``REJECTED``, for its undeclared
fields). Meanwhile this process fetches the Agent Card over a keep-alive connection in a loop
(a ticker) and records how long each fetch took. The server has one event loop, so the
longest fetch is how long one body held every other request; the same loop without the
sender is the baseline.

Numbers only; nothing is asserted about time.
"""

from __future__ import annotations

import argparse
import asyncio
import http.client
import json
import os
import re
import statistics
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path

from .harness import Row

ROOT = Path(__file__).resolve().parent.parent
SCENARIO = "15. one large A2A body"

SENDER = """
import http.client, json, sys
port, values, bodies = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
ext = sys.argv[4]
message = {"role": "ROLE_USER", "messageId": "m", "extensions": [ext],
           "parts": [{"data": {f"f{n}": "y" * 85 for n in range(values)}}]}
body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": {
    "message": message, "metadata": {ext: {"skill": "create_todo"}}}}).encode()
conn = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
headers = {"Content-Type": "application/json", "A2A-Version": "1.0"}
for _ in range(bodies):
    conn.request("POST", "/a2a/jsonrpc", body=body, headers=headers)
    answer = conn.getresponse()
    state = json.loads(answer.read())["result"]["task"]["status"]["state"]
    print(len(body), state, flush=True)
"""


@dataclass
class Stall:
    values: int
    body_bytes: int
    states: list[str]
    baseline_max_ms: float
    baseline_p50_ms: float
    max_ms: float
    p50_ms: float


def _tick(port: int, stop: threading.Event, lags: list[float]) -> None:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
    while not stop.is_set():
        start = time.perf_counter()
        conn.request("GET", "/.well-known/agent-card.json")
        conn.getresponse().read()
        lags.append(time.perf_counter() - start)
        time.sleep(0.002)
    conn.close()


async def _ticking(port: int, work: asyncio.Future[bytes] | None) -> list[float]:
    """Fetch the card in a loop until ``work`` is done (or for 2 s); each fetch's seconds."""
    lags: list[float] = []
    stop = threading.Event()
    thread = threading.Thread(target=_tick, args=(port, stop, lags))
    thread.start()
    try:
        await (asyncio.sleep(2.0) if work is None else work)
    finally:
        stop.set()
        await asyncio.to_thread(thread.join)
    return lags


async def _send(port: int, values: int, bodies: int) -> bytes:
    from foldkit_agent.adapters.a2a import EXTENSION_URI

    sender = await asyncio.create_subprocess_exec(
        sys.executable, "-c", SENDER, str(port), str(values), str(bodies), EXTENSION_URI,
        stdout=asyncio.subprocess.PIPE,
    )  # fmt: skip
    out, _ = await sender.communicate()
    return out


async def measure(values: int, bodies: int) -> Stall:
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "foldkit_agent.cli", "serve", "examples.todo:runtime", "--a2a",
        "--port", "0", cwd=ROOT, stderr=asyncio.subprocess.PIPE,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )  # fmt: skip
    assert proc.stderr is not None
    try:
        first = (await proc.stderr.readline()).decode()
        found = re.search(r"http://127\.0\.0\.1:(\d+)", first)
        assert found is not None, first
        port = int(found.group(1))
        baseline = await _ticking(port, None)
        out = asyncio.ensure_future(_send(port, values, bodies))
        lags = await _ticking(port, out)
        answers = [line.split() for line in out.result().decode().splitlines()]
    finally:
        proc.terminate()
        await proc.communicate()
    return Stall(
        values=values,
        body_bytes=int(answers[0][0]) if answers else 0,
        states=[state for _size, state in answers],
        baseline_max_ms=_ms(max(baseline)),
        baseline_p50_ms=_ms(statistics.median(baseline)),
        max_ms=_ms(max(lags)),
        p50_ms=_ms(statistics.median(lags)),
    )


def _ms(seconds: float) -> float:
    return round(seconds * 1000, 1)


async def run(bodies: int = 10) -> list[Row]:
    """Scenario 15 as a result row: ``bodies`` bodies of 9,900 values."""
    stall = await measure(9_900, bodies)
    return [
        Row(
            SCENARIO,
            f"longest wait of another request while {stall.values:,}-value bodies "
            f"({stall.body_bytes // 1024} KiB) are served",
            f"{stall.max_ms:.0f} ms",
            f"{stall.baseline_max_ms:.0f} ms (no large body)",
            None,
            "reported",
            None,
        )
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--values", type=int, nargs="+", default=[1_000, 5_000, 9_900])
    parser.add_argument("--bodies", type=int, default=10)
    args = parser.parse_args()
    for values in args.values:
        print(json.dumps(asyncio.run(measure(values, args.bodies)).__dict__), flush=True)


if __name__ == "__main__":
    main()
