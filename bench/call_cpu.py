"""CPU time per 2026-era ``tools/call`` through an app's ASGI interface, no sockets.

    python -m bench.call_cpu [--calls N] [--kind ours|floor|starlette] [--profile SORT]

The same request ``bench/lua/tools_call.lua`` sends (``increment`` ``{"by": 1}``) is driven
straight into the app (``http_app`` for ours, :mod:`bench.servers`' apps for the floors) with
its lifespan running: 300 warm-up calls, ``gc.freeze()``, then ``N`` calls timed in the
thread's CPU time (other processes on a shared machine do not count, unlike wall time). For an
A/B, run it with ``PYTHONPATH=<other checkout>/src`` too. ``--profile`` prints ``cProfile``'s
top functions (``tottime`` or ``cumulative``) instead of only the time.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import time
from typing import Any

from foldkit_agent.adapters.mcp import http_app

from . import servers

BODY = (
    b'{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"increment",'
    b'"arguments":{"by":1},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28",'
    b'"io.modelcontextprotocol/clientInfo":{"name":"mcp","version":"0.1.0"},'
    b'"io.modelcontextprotocol/clientCapabilities":{}}}}'
)
HEADERS = [
    (b"host", b"127.0.0.1:8000"),
    (b"accept", b"application/json, text/event-stream"),
    (b"content-type", b"application/json"),
    (b"mcp-protocol-version", b"2026-07-28"),
    (b"mcp-method", b"tools/call"),
    (b"mcp-name", b"increment"),
    (b"content-length", str(len(BODY)).encode()),
]


def http_scope(headers: list[tuple[bytes, bytes]]) -> dict[str, Any]:
    """The ASGI scope of one ``POST /mcp`` from a loopback client carrying ``headers``."""
    return {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": "POST",
        "scheme": "http",
        "path": "/mcp",
        "raw_path": b"/mcp",
        "root_path": "",
        "query_string": b"",
        "headers": headers,
        "client": ("127.0.0.1", 5000),
        "server": ("127.0.0.1", 8000),
        "state": {},
    }


async def one(app: Any) -> list[dict[str, Any]]:
    """One request into ``app``; the messages it sent back."""
    scope = http_scope(HEADERS)
    sent = False

    async def receive() -> dict[str, Any]:
        nonlocal sent
        if not sent:
            sent = True
            return {"type": "http.request", "body": BODY, "more_body": False}
        await asyncio.Event().wait()  # the client never leaves
        raise AssertionError("unreachable")

    out: list[dict[str, Any]] = []

    async def send(message: dict[str, Any]) -> None:
        out.append(message)

    await app(scope, receive, send)
    return out


async def measure(kind: str, calls: int, profile: str | None) -> float:
    """Microseconds of CPU per call of ``kind``'s app."""
    async with servers.runtime() as rt:
        if kind == "ours":
            app: Any = http_app(rt, name="bench", version="1")
        elif kind == "floor":
            app = servers.floor_app()
        else:
            app = servers.starlette_app()
        async with app.router.lifespan_context(app):
            first = await one(app)
            if not first[-1]["body"].startswith(b'{"jsonrpc":"2.0","id":1,"result"'):
                raise RuntimeError(f"{kind}: the first answer is not a result: {first}")
            for _ in range(300):
                await one(app)
            gc.collect()
            gc.freeze()
            if profile:
                import cProfile
                import pstats

                profiler = cProfile.Profile()
                profiler.enable()
            began = time.thread_time()
            for _ in range(calls):
                await one(app)
            spent = time.thread_time() - began
            if profile:
                profiler.disable()  # pyright: ignore[reportPossiblyUnboundVariable]
                pstats.Stats(profiler).sort_stats(profile).print_stats(40)  # pyright: ignore[reportPossiblyUnboundVariable]
            return spent / calls * 1e6


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.call_cpu", description=__doc__)
    parser.add_argument("--calls", type=int, default=3000)
    parser.add_argument("--kind", choices=("ours", "floor", "starlette"), default="ours")
    parser.add_argument("--profile", choices=("tottime", "cumulative"), default=None)
    args = parser.parse_args(argv)
    per_call = asyncio.run(measure(args.kind, args.calls, args.profile))
    print(f"{args.kind}: {per_call:.1f} µs CPU per tools/call ({args.calls} calls)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
