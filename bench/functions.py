"""How many distinct functions of ``foldkit_agent`` one call runs (``sys.setprofile``).

    python -m bench.functions [--list] [--only tools_call,tools_list,dispatch_unknown,plain]

Each scenario runs once to warm up (imports, caches, a first listing), then once under a
profile hook that records every Python function entered whose code lives in the installed
``foldkit_agent`` package; the count is of distinct functions (file, first line, name), so a
function entered twice counts once. The scenarios:

* ``tools_call``: one 2026-era ``tools/call`` of the todo example's ``create_todo`` (a
  completion contract: it waits for ``SavedTodo``) through ``http_app`` as ``serve`` builds it,
  no token, driven straight into the ASGI app (no socket);
* ``tools_list``: one 2026-era ``tools/list`` the same way;
* ``dispatch_unknown``: one in-process ``rt.messages.dispatch_unknown("select_todo", ...)``
  (an ``available`` predicate, no completion, no approval);
* ``dispatch_completion``: one in-process ``dispatch_unknown("create_todo", ...)`` (waits for
  its completion).

``--list`` prints the functions of each scenario, grouped by module.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path
from types import FrameType
from typing import Any

import foldkit_agent

from .call_cpu import http_scope

PACKAGE = str(Path(foldkit_agent.__file__).resolve().parent)

TARGETS = {"tools_call": 64, "tools_list": 20, "dispatch_unknown": 22, "dispatch_completion": 40}
"""The most distinct functions each scenario may run (the one-call-path targets)."""

_META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientInfo": {"name": "bench", "version": "0.1.0"},
    "io.modelcontextprotocol/clientCapabilities": {},
}


def _body(method: str, params: dict[str, Any]) -> bytes:
    return json.dumps(
        {"jsonrpc": "2.0", "id": 1, "method": method, "params": {**params, "_meta": _META}}
    ).encode()


async def _post(app: Any, body: bytes, method: str, name: str | None) -> list[dict[str, Any]]:
    headers = [
        (b"host", b"127.0.0.1:8000"),
        (b"accept", b"application/json, text/event-stream"),
        (b"content-type", b"application/json"),
        (b"mcp-protocol-version", b"2026-07-28"),
        (b"mcp-method", method.encode()),
        (b"content-length", str(len(body)).encode()),
    ]
    if name is not None:
        headers.append((b"mcp-name", name.encode()))
    scope = http_scope(headers)
    sent = False
    gone = asyncio.Event()

    async def receive() -> dict[str, Any]:
        nonlocal sent
        if not sent:
            sent = True
            return {"type": "http.request", "body": body, "more_body": False}
        await gone.wait()
        return {"type": "http.disconnect"}

    out: list[dict[str, Any]] = []

    async def send(message: dict[str, Any]) -> None:
        out.append(message)

    await app(scope, receive, send)
    gone.set()
    return out


def _answer(out: list[dict[str, Any]]) -> dict[str, Any]:
    body = b"".join(m.get("body", b"") for m in out if m["type"] == "http.response.body")
    text = body.decode()
    if text.startswith("event:") or text.startswith("data:"):
        text = next(line[5:] for line in text.splitlines() if line.startswith("data:"))
    return json.loads(text)


async def profiled(step: Callable[[], Awaitable[Any]]) -> tuple[Any, list[tuple[str, int, str]]]:
    """Run ``step`` once under the hook; what it returned and the functions it entered."""
    seen: set[tuple[str, int, str]] = set()

    def hook(frame: FrameType, event: str, _arg: Any) -> None:
        if event == "call":
            code = frame.f_code
            if code.co_filename.startswith(PACKAGE):
                seen.add((code.co_filename, code.co_firstlineno, code.co_qualname))

    sys.setprofile(hook)
    try:
        got = await step()
    finally:
        sys.setprofile(None)
    return got, sorted(seen)


async def scenarios(only: set[str]) -> dict[str, tuple[Any, list[tuple[str, int, str]]]]:
    """Each scenario's answer and the functions it ran."""
    from examples.todo import runtime
    from foldkit_agent import Invocation
    from foldkit_agent.adapters.mcp import http_app

    results: dict[str, tuple[Any, list[tuple[str, int, str]]]] = {}
    calls = iter(range(1_000_000))

    async def run(steps: dict[str, Callable[[], Awaitable[Any]]]) -> None:
        for name, step in steps.items():
            if name in only:
                await step()  # warm: imports, caches, kept listings
                results[name] = await profiled(step)

    async with runtime() as rt:
        app: Any = http_app(rt, name="todo", version=foldkit_agent.__version__, listing="all")
        async with app.router.lifespan_context(app):

            async def tools_call() -> Any:
                title = f"Todo {next(calls)}"
                body = _body("tools/call", {"name": "create_todo", "arguments": {"title": title}})
                return _answer(await _post(app, body, "tools/call", "create_todo"))

            async def tools_list() -> Any:
                return _answer(await _post(app, _body("tools/list", {}), "tools/list", None))

            await run({"tools_call": tools_call, "tools_list": tools_list})

    async with runtime() as rt:  # in-process: no adapter watches this runtime
        first = await rt.messages.dispatch_unknown("create_todo", {"title": "A"}, Invocation())
        todo: str = first.completion.message.id  # type: ignore[union-attr]

        async def dispatch_unknown() -> Any:
            return await rt.messages.dispatch_unknown("select_todo", {"id": todo}, Invocation())

        async def dispatch_completion() -> Any:
            payload = {"title": f"Todo {next(calls)}"}
            return await rt.messages.dispatch_unknown("create_todo", payload, Invocation())

        await run(
            {"dispatch_unknown": dispatch_unknown, "dispatch_completion": dispatch_completion}
        )
    return results


def _check(name: str, answer: Any) -> None:
    if name.startswith("tools_") and ("result" not in answer or answer["result"].get("isError")):
        raise RuntimeError(f"{name}: not a successful answer: {answer}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.functions", description=__doc__)
    parser.add_argument("--list", action="store_true", help="print each scenario's functions")
    parser.add_argument("--only", default=",".join(TARGETS))
    args = parser.parse_args(argv)
    only = set(args.only.split(","))
    results = asyncio.run(scenarios(only))
    worst = 0
    for name, (answer, functions) in results.items():
        _check(name, answer)
        target = TARGETS[name]
        met = "met" if len(functions) <= target else "MISSED"
        worst = max(worst, len(functions) - target)
        print(f"{name}: {len(functions)} functions (target <= {target}: {met})")
        if args.list:
            for file, line, qual in functions:
                print(f"    {Path(file).relative_to(PACKAGE)}:{line} {qual}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
