"""Where a server's time goes under wrk: py-spy samples of one bench server, by layer.

    python -m bench.profile [ours|fastmcp|floor|starlette] [--connections 50] [--seconds 10]
        [--tools N] [--method tools/call|tools/list]

Starts the server as scenario 12/13 does (pinned to CPU 0), drives it with wrk (CPU 1) while
``py-spy record`` samples it (``--idle``, so time spent waiting on the event loop shows), and
prints the share of samples per layer: each sample goes to the innermost frame's package
(uvicorn and h11 are the HTTP stack; ``mcp``/``mcp_types`` the SDK; and so on), and, apart, how
many samples had a frame of each package anywhere on the stack (inclusive). The py-spy tool is
in the ``dev`` extra; it needs ptrace rights on the server (root, or
``kernel.yama.ptrace_scope=0``).
"""

from __future__ import annotations

import argparse
import asyncio
import shutil
import sys
import tempfile
from collections import Counter
from pathlib import Path

from .servers import KINDS, start_many
from .wrk import CALL, LIST, LIST_SECONDS, wrk

LAYERS = (
    ("foldkit-agent", ("foldkit_agent/",)),
    ("mcp SDK", ("mcp/", "mcp_types/")),
    ("FastMCP", ("fastmcp/",)),
    ("pydantic (with its Rust core)", ("pydantic/", "pydantic_core/")),
    ("HTTP (uvicorn, h11, httptools)", ("uvicorn/", "h11/", "httptools/")),
    ("Starlette", ("starlette/", "sse_starlette/")),
    ("anyio", ("anyio/",)),
    ("asyncio (tasks, streams, the loop)", ("asyncio/",)),
    ("json", ("json/",)),
)
IDLE = "idle (the loop polling for the next event)"
LOOP = "_run_once (asyncio/base_events.py"


def layer(frame: str) -> str:
    """The layer of one py-spy frame, ``function (package/module.py:line)``."""
    where = frame.rpartition(" (")[2]
    if where.startswith("selectors.py"):
        return IDLE
    for name, prefixes in LAYERS:
        if where.startswith(prefixes):
            return name
    return "other (the standard library: contextlib, logging, typing...)"


def breakdown(raw: str) -> tuple[Counter[str], Counter[str], int]:
    """(own samples per layer, inclusive samples per layer, total) from py-spy's raw output
    (one ``frame;frame;...;leaf count`` line per distinct stack). Only the frames run by the
    event loop's current callback count (what is below ``_run_once`` is the same on every
    sample); a sample's own layer is its innermost frame's."""
    own: Counter[str] = Counter()
    inclusive: Counter[str] = Counter()
    total = 0
    for line in raw.splitlines():
        stack, _, count = line.rpartition(" ")
        if not stack or not count.isdigit():
            continue
        n = int(count)
        total += n
        frames = stack.split(";")
        cut = max((i for i, f in enumerate(frames) if f.startswith(LOOP)), default=-1)
        frames = frames[cut + 1 :] or frames[-1:]
        own[layer(frames[-1])] += n
        for name in {layer(f) for f in frames}:
            inclusive[name] += n
    return own, inclusive, total


async def profile(
    kind: str, connections: int, seconds: float, tools: int | None, method: str
) -> str:
    beside = Path(sys.executable).parent / "py-spy"  # the venv's, when it is not activated
    spy = str(beside) if beside.exists() else shutil.which("py-spy")
    if spy is None:
        raise SystemExit("py-spy is not installed: pip install -e '.[dev]'")
    script = LIST if method == "tools/list" else CALL
    with tempfile.TemporaryDirectory(prefix="foldkit-profile-") as tmp:
        out = Path(tmp) / "raw.txt"
        async with start_many([(kind, tools)], cpu=0) as (served,):
            url, pid = served.url, served.pid
            warm = LIST_SECONDS if method == "tools/list" else 1  # whole answers only
            await wrk(url, script, connections, warm, kind=kind, method=method, tools=tools)
            load = asyncio.ensure_future(
                wrk(url, script, connections, seconds + 2, kind=kind, method=method, tools=tools)
            )
            record = await asyncio.create_subprocess_exec(
                spy,
                "record",
                "--pid",
                str(pid),
                "--duration",
                str(round(seconds)),
                "--rate",
                "200",
                "--idle",
                "--format",
                "raw",
                "--output",
                str(out),
                stdout=asyncio.subprocess.DEVNULL,
                stderr=asyncio.subprocess.PIPE,
            )
            _, err = await record.communicate()
            run = await load
            if record.returncode != 0:
                raise SystemExit(f"py-spy failed: {err.decode(errors='replace')}")
        own, inclusive, total = breakdown(out.read_text())
    lines = [
        f"{kind}, {method}, {connections} connections: {run.rate:,.0f}/s, "
        f"p50 {run.p50_us / 1000:.2f} ms, p99 {run.p99_us / 1000:.2f} ms; {total} samples",
        "",
        "| layer | own | anywhere on the stack |",
        "| --- | ---: | ---: |",
    ]
    for name, n in own.most_common():
        lines.append(f"| {name} | {n / total:.0%} | {inclusive.get(name, 0) / total:.0%} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.profile", description=__doc__)
    parser.add_argument("kind", choices=KINDS, nargs="?", default="ours")
    parser.add_argument("--connections", type=int, default=50)
    parser.add_argument("--seconds", type=float, default=10)
    parser.add_argument("--tools", type=int, default=None)
    parser.add_argument("--method", choices=("tools/call", "tools/list"), default="tools/call")
    args = parser.parse_args(argv)
    if args.method == "tools/list" and args.tools is None:
        parser.error("tools/list needs --tools N")
    print(asyncio.run(profile(args.kind, args.connections, args.seconds, args.tools, args.method)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
