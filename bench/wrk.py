"""Scenarios 12 and 13: MCP under a native load generator (wrk), server and load on separate cores.

    python -m bench.wrk [--seconds S] [--rounds R] [--quick] [--calls-only] [--before SRC]

Each server (:mod:`bench.servers`: ours through ``foldkit-agent serve``, FastMCP 4, the SDK
floor, the Starlette floor) runs in its own process pinned to CPU 0 (``taskset -c 0``); wrk
runs pinned to CPU 1 with one thread, sending stateless 2026-07-28-era requests
(``bench/lua/tools_call.lua``, ``bench/lua/tools_list.lua``: the headers and body the official
client sends). wrk's own ``done()`` reports the requests, p50/p90/p99 (from ``--latency``'s
histogram) and every answer that is not a 2xx or carries a JSON-RPC or tool error, as one JSON
line; any such answer fails the scenario.

Before any load, each server answers a real call from the official ``mcp`` client in the
2026-07-28 era (the Starlette floor, which is not MCP, a POST of the same body), and a short
wrk warm-up whose first answer is checked field by field. The runs are interleaved: ``rounds``
× (every server, in a rotating order) at each connection count, so drift on a shared machine
hits every server alike; each server's best run (other processes only ever slow a run down) is
reported, with its p50 and p99, and the ratios are of those best runs.

* 12: ``tools/call`` of ``increment`` at 1, 10 and 50 connections, all four servers.
* 13: ``tools/list`` with 10, 100 and 1,000 tools over one connection, ours vs FastMCP.

``--before SRC`` also serves ours from another checkout's ``src`` directory (say
``git archive <commit> src | tar -x -C /tmp/before``, then ``/tmp/before/src``) as
"ours before", in the same interleaved rounds, for an A/B; ``--calls-only`` skips 13.

Durations: ``--seconds`` (default 2, or ``BENCH_WRK_SECONDS``) per run, ``--rounds`` (default
5, or ``BENCH_WRK_ROUNDS``); ``--quick`` is 1 s × 1 round, for the smoke test.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx2
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from .harness import Row
from .servers import BEFORE_ENV, pinned, start_many

LUA = Path(__file__).resolve().parent / "lua"
CALL = LUA / "tools_call.lua"
LIST = LUA / "tools_list.lua"
CALL_KINDS = ("ours", "fastmcp", "floor", "starlette")
LIST_KINDS = ("ours", "fastmcp")
CONNECTIONS = (1, 10, 50)
LIST_SIZES = (10, 100, 1000)
LIST_SECONDS = 4  # the shortest run of tools/list at 1,000 tools
SERVER_CPU = 0
LOAD_CPU = 1
NAMES = {
    "ours": "ours",
    "before": "ours before",
    "fastmcp": "FastMCP 4",
    "floor": "SDK floor",
    "starlette": "Starlette floor",
}


class LoadError(RuntimeError):
    """A server answered wrongly (a non-2xx, a JSON-RPC or tool error, a wrong first body)."""


def wrk_path() -> str:
    """The ``wrk`` binary, or a :class:`LoadError` saying how to install it."""
    found = shutil.which("wrk")
    if found is None:
        raise LoadError("wrk is not installed: run `make wrk` (installs Debian's wrk) and retry")
    return found


@dataclass(frozen=True)
class Run:
    """One wrk run against one server."""

    kind: str
    connections: int
    requests: int
    seconds: float
    p50_us: float
    p99_us: float
    non2xx: int
    socket_errors: int

    @property
    def rate(self) -> float:
        return self.requests / self.seconds

    @property
    def tail(self) -> float:
        return self.p99_us / self.p50_us


def parse(stdout: str) -> dict[str, Any]:
    """The JSON line ``bench/lua/report.lua``'s ``done()`` prints (``WRK_JSON {...}``)."""
    for line in stdout.splitlines():
        if line.startswith("WRK_JSON "):
            return json.loads(line.removeprefix("WRK_JSON "))
    raise LoadError(f"wrk printed no WRK_JSON line:\n{stdout}")


def check_first(kind: str, method: str, tools: int | None, status: int, body: str) -> None:
    """The first answer of a run is the right one for ``kind`` (else :class:`LoadError`)."""
    try:
        answer = json.loads(body)
    except ValueError as exc:
        raise LoadError(
            f"{kind}: the first {method} answer is not JSON ({status}): {body!r}"
        ) from exc
    result = answer.get("result") if isinstance(answer, dict) else None
    if status != 200 or not isinstance(result, dict):
        raise LoadError(f"{kind}: the first {method} answer is not a result ({status}): {body!r}")
    if method == "tools/list":
        names = [tool.get("name") for tool in result.get("tools", [])]
        if len(names) != tools:
            raise LoadError(f"{kind}: tools/list listed {len(names)} tools, not {tools}")
        return
    if kind == "starlette":
        ok = result.get("echo") == {"by": 1}
    elif kind == "floor":
        ok = result.get("isError") is False and result["content"][0]["text"] == "ok"
    else:
        ok = result.get("isError") is False and (
            result.get("structuredContent", {}).get("status") == "dispatched"
        )
    if not ok:
        raise LoadError(f"{kind}: the first tools/call answer is wrong: {body!r}")


async def wrk(
    url: str,
    script: Path,
    connections: int,
    seconds: float,
    *,
    kind: str,
    method: str,
    tools: int | None = None,
) -> Run:
    """One wrk run (pinned to the load CPU); :class:`LoadError` on any wrong answer."""
    argv = [
        wrk_path(),
        "-t1",
        f"-c{connections}",
        f"-d{max(1, round(seconds))}s",
        "--timeout",
        "30s",
        "--latency",
        "-s",
        str(script),
        url,
    ]
    proc = await asyncio.create_subprocess_exec(
        *pinned(LOAD_CPU, argv), stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE
    )
    out, err = await proc.communicate()
    if proc.returncode != 0:
        raise LoadError(f"wrk failed ({proc.returncode}): {err.decode(errors='replace')}")
    got = parse(out.decode(errors="replace"))
    errors = got["errors"]
    socket_errors = errors["connect"] + errors["read"] + errors["write"] + errors["timeout"]
    run = Run(
        kind=kind,
        connections=connections,
        requests=got["requests"],
        seconds=got["duration_us"] / 1e6,
        p50_us=got["p50_us"],
        p99_us=got["p99_us"],
        non2xx=got["non2xx"],
        socket_errors=socket_errors,
    )
    if run.non2xx or socket_errors or run.requests == 0:
        raise LoadError(
            f"{NAMES[kind]} {method} over {connections} connection(s): {run.non2xx} wrong answers "
            f"(non-2xx or an error) and {socket_errors} socket errors in {run.requests} requests"
        )
    check_first(kind, method, tools, got["first_status"], got["first_body"])
    return run


async def verify(kind: str, url: str) -> None:
    """A real ``increment`` call answered right, before any load (:class:`LoadError` if not)."""
    async with httpx2.AsyncClient(timeout=30) as http:
        if kind == "starlette":
            response = await http.post(url, content=CALL_BODY, headers=CALL_HEADERS)
            check_first(kind, "tools/call", None, response.status_code, response.text)
            return
        async with Client(streamable_http_client(url, http_client=http), mode="2026-07-28") as c:
            result = await c.call_tool("increment", {"by": 1})
            if result.is_error:
                raise LoadError(f"{kind}: a real tools/call was refused: {result.content}")
            if kind != "floor" and (result.structured_content or {}).get("status") != "dispatched":
                raise LoadError(f"{kind}: a real tools/call did not dispatch: {result}")
            if kind != "floor":
                wrong = await c.call_tool("increment", {"by": "1", "extra": True})
                if not wrong.is_error:
                    raise LoadError(f"{kind}: an invalid tools/call was accepted: {wrong}")


CALL_BODY = json.dumps(
    {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {"name": "increment", "arguments": {"by": 1}},
    }
)
CALL_HEADERS = {"Accept": "application/json", "Content-Type": "application/json"}


@dataclass
class Series:
    """Interleaved runs: ``runs[kind]`` in round order."""

    runs: dict[str, list[Run]] = field(default_factory=dict[str, list[Run]])

    def add(self, run: Run) -> None:
        self.runs.setdefault(run.kind, []).append(run)

    def best(self, kind: str) -> Run:
        """``kind``'s run with the most requests per second: other processes on the machine
        only ever slow a run down, so the best of several short runs is the least disturbed."""
        return max(self.runs[kind], key=lambda r: r.rate)

    def ratio(self, ours: str, base: str) -> float:
        """Ours' best req/s over ``base``'s best."""
        return self.best(ours).rate / self.best(base).rate

    def checked(self) -> str:
        """How many answers were checked (every one a 2xx without an error, or the run failed)."""
        total = sum(r.requests for runs in self.runs.values() for r in runs)
        return f"{total:,} answers checked, 0 wrong"

    def describe(self, kind: str) -> str:
        run = self.best(kind)
        return f"{run.rate:,.0f}/s, p50 {_ms(run.p50_us)}, p99 {_ms(run.p99_us)}"


def _ms(us: float) -> str:
    return f"{us / 1000:.2f} ms" if us < 10_000 else f"{us / 1000:.1f} ms"


async def interleave(
    urls: dict[str, str],
    script: Path,
    connections: int,
    seconds: float,
    rounds: int,
    *,
    method: str,
    tools: int | None = None,
) -> Series:
    series = Series()
    kinds = list(urls)
    for i in range(rounds):
        order = kinds[i % len(kinds) :] + kinds[: i % len(kinds)]
        for kind in order:
            series.add(
                await wrk(
                    urls[kind],
                    script,
                    connections,
                    seconds,
                    kind=kind,
                    method=method,
                    tools=tools,
                )
            )
    return series


CALL_TARGETS = {"fastmcp": 2.5, "floor": 1.0, "starlette": 0.35}


def call_rows(series: Series, connections: int, seconds: float, rounds: int) -> list[Row]:
    scenario = f"12. tools/call under wrk, {connections} connection" + (
        "s" if connections > 1 else ""
    )
    how = f"req/s, best of {rounds} × {seconds:g} s interleaved"
    rows: list[Row] = []
    bases = dict(CALL_TARGETS)
    if "before" in series.runs:
        bases["before"] = 0.0  # the A/B: reported, no target
    for base, target in bases.items():
        ratio = series.ratio("ours", base)
        rows.append(
            Row(
                scenario,
                f"vs {NAMES[base]}: {how}",
                f"{series.describe('ours')}; {series.checked()}",
                series.describe(base),
                ratio,
                f"≥ {target:g}×" if target else "reported",
                ratio >= target if target else None,
            )
        )
    best = series.best("ours")
    tail = best.tail
    rows.append(
        Row(
            scenario,
            "our p99 / our p50",
            f"p99 {_ms(best.p99_us)}",
            f"p50 {_ms(best.p50_us)}; the others' p99 / p50: "
            + ", ".join(f"{NAMES[k]} {series.best(k).tail:.1f}×" for k in bases),
            tail,
            "≤ 3×",
            tail <= 3.0,
        )
    )
    return rows


def list_row(series: Series, tools: int, seconds: float, rounds: int) -> Row:
    ratio = series.ratio("ours", "fastmcp")
    p50 = series.best("ours").p50_us
    big = tools == 1000
    return Row(
        f"13. tools/list under wrk, {tools:,} tools",
        f"vs FastMCP 4: 1 connection, req/s, best of {rounds} × {seconds:g} s interleaved",
        f"{series.describe('ours')}; {series.checked()}",
        series.describe("fastmcp"),
        ratio,
        "≤ 5 ms p50 and ≥ 20×" if big else "reported",
        (p50 <= 5000 and ratio >= 20) if big else None,
    )


async def run(
    seconds: float = 2.0,
    rounds: int = 5,
    *,
    connections: Sequence[int] = CONNECTIONS,
    sizes: Sequence[int] = LIST_SIZES,
    before: bool = False,
) -> list[Row]:
    """Scenarios 12 and 13 as result rows (see the module docstring); with ``before``, ours
    from the checkout in ``BENCH_BEFORE_SRC`` runs beside the others too (an A/B)."""
    wrk_path()
    warmup = seconds >= 2  # a quick run's first runs are its warm-up
    rows: list[Row] = []
    kinds = (*CALL_KINDS, "before") if before else CALL_KINDS
    async with start_many([(kind, None) for kind in kinds], SERVER_CPU) as started:
        urls = {s.kind: s.url for s in started}
        for kind, url in urls.items():
            await verify(kind, url)
            if warmup:
                await wrk(url, CALL, 10, 1, kind=kind, method="tools/call")
        for c in connections:
            series = await interleave(urls, CALL, c, seconds, rounds, method="tools/call")
            rows.extend(call_rows(series, c, seconds, rounds))
    specs = [(kind, n) for n in sizes for kind in LIST_KINDS]
    async with start_many(specs, SERVER_CPU) as started:
        for i, n in enumerate(sizes):
            urls = {s.kind: s.url for s in started[i * 2 : i * 2 + 2]}
            # a run must see whole answers: FastMCP takes over a second to list 1,000 tools
            # on a loaded machine
            long = max(seconds, LIST_SECONDS) if n >= 1000 else seconds
            if warmup:
                for kind, url in urls.items():
                    await wrk(url, LIST, 1, long, kind=kind, method="tools/list", tools=n)
            series = await interleave(urls, LIST, 1, long, rounds, method="tools/list", tools=n)
            rows.append(list_row(series, n, long, rounds))
    return rows


def durations(
    quick: bool, seconds: float | None = None, rounds: int | None = None
) -> tuple[float, int]:
    """Seconds per run and rounds: arguments, else ``BENCH_WRK_SECONDS``/``BENCH_WRK_ROUNDS``,
    else 2 s × 5 (1 s × 1 when ``quick``)."""
    if seconds is None:
        seconds = float(os.environ.get("BENCH_WRK_SECONDS", 1.0 if quick else 2.0))
    if rounds is None:
        rounds = int(os.environ.get("BENCH_WRK_ROUNDS", 1 if quick else 5))
    return seconds, rounds


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.wrk", description=__doc__)
    parser.add_argument("--seconds", type=float, default=None, help="seconds per wrk run")
    parser.add_argument("--rounds", type=int, default=None, help="interleaved rounds")
    parser.add_argument("--quick", action="store_true", help="1 s × 1 round")
    parser.add_argument(
        "--before", metavar="SRC", help="also serve ours from this src directory (an A/B)"
    )
    parser.add_argument("--calls-only", action="store_true", help="skip tools/list")
    args = parser.parse_args(argv)
    seconds, rounds = durations(args.quick, args.seconds, args.rounds)
    if args.before:
        os.environ[BEFORE_ENV] = str(Path(args.before).resolve())
    sizes = () if args.calls_only else LIST_SIZES
    try:
        rows = asyncio.run(run(seconds, rounds, sizes=sizes, before=bool(args.before)))
    except LoadError as err:
        print(f"bench.wrk: {err}", file=sys.stderr)
        return 1
    from .__main__ import table

    print(table(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
