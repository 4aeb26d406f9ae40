"""``foldkit-agent demo``: the todo example driven by a scripted agent over real MCP.

The example application runs in this process and is served over streamable HTTP on a free
loopback port; a scripted agent then uses the official ``mcp`` client, exactly as any MCP host
would, and the command prints what it sees and finally the audit trail.

``foldkit-agent demo --serve`` keeps the server up instead and prints client configurations.
"""

from __future__ import annotations

import json
import sys
import time
from collections.abc import AsyncGenerator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import typer
from rich.console import Console
from rich.panel import Panel
from rich.syntax import Syntax
from rich.table import Table

from . import Command, app
from .loading import fail

__all__ = ["DEMO_TOKENS", "demo", "run_demo"]

DEMO_TOKENS: dict[str, tuple[str, list[str]]] = {
    "alice-token": ("alice", ["todos:delete"]),
    "bob-token": ("bob", []),
}
"""The demo's bearer tokens: ``token -> (subject, scopes)``. Only for this local demo."""


def _verifier() -> Any:
    from mcp.server.auth.provider import AccessToken

    from ..adapters.mcp import StaticTokenVerifier

    return StaticTokenVerifier(
        {
            token: AccessToken(token=token, client_id="foldkit-demo", scopes=scopes, subject=who)
            for token, (who, scopes) in DEMO_TOKENS.items()
        }
    )


def _example_root() -> Path:
    """The folder holding ``examples/`` (the current directory or the source checkout)."""
    for where in (Path.cwd(), Path(__file__).resolve().parents[3]):
        if (where / "examples" / "todo").is_dir():
            return where
    return Path.cwd()


def _import_example() -> Any:
    """``examples.todo``, from the current directory or the source checkout."""
    import importlib

    root = str(_example_root())
    if root not in sys.path:
        sys.path.insert(0, root)
    try:
        return importlib.import_module("examples.todo")
    except ImportError:
        fail(
            "the demo needs the examples/ folder of the source checkout; "
            "run it from the repository root"
        )


@asynccontextmanager
async def _serving(port: int) -> AsyncGenerator[tuple[str, Any]]:
    """Run the todo app over MCP, A2A and its web page on one loopback port.

    Yields ``(origin, runtime)``: MCP at ``{origin}/mcp``, the A2A card at
    ``{origin}/.well-known/agent-card.json``, and the todo page (WebMCP tools) at ``{origin}/``,
    all on one Model, so a person in the page and the agents see each other's changes.
    """
    _import_example()
    from examples.todo import run_todo  # pyright: ignore[reportMissingImports]
    from examples.todo_web import build_app  # pyright: ignore[reportMissingImports]

    from ..adapters.a2a import BearerTokenBackend, a2a_app
    from ..adapters.mcp import http_app
    from .serve import bind_socket, combine, run_http

    sock = bind_socket("127.0.0.1", port)
    origin = f"http://127.0.0.1:{sock.getsockname()[1]}"
    async with run_todo() as (running, rt):
        asgi = combine(
            [
                http_app(rt, name="foldkit-todo", version="0.1.0", token_verifier=_verifier()),
                build_app(running, rt),
                a2a_app(
                    rt,
                    name="foldkit-todo",
                    version="0.1.0",
                    base_url=origin,
                    authentication=BearerTokenBackend(DEMO_TOKENS, required=True),
                ),
            ]
        )
        async with anyio.create_task_group() as tg:
            tg.start_soon(lambda: run_http(asgi, sock=sock))
            try:
                yield origin, rt
            finally:
                tg.cancel_scope.cancel()


def _client(url: str, token: str) -> Any:
    import httpx2
    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client

    http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"}, timeout=10)
    return Client(streamable_http_client(url, http_client=http))


def _show_result(console: Console, label: str, result: Any, started: float) -> None:
    ms = (time.perf_counter() - started) * 1000
    data: dict[str, Any] = result.structured_content or {}
    if result.is_error:
        console.print(f"  [red]✗ {label}[/] [dim]({ms:.0f} ms, isError)[/]")
        console.print(f"    [red]{result.content[0].text}[/]")
        console.print(f"    [dim]{data.get('_tag')} · status={data.get('status')}[/]")
        return
    done: dict[str, Any] = data.get("result") or {}
    extra = f" → {done.get('_tag')}" if done else ""
    console.print(f"  [green]✓ {label}[/] [dim]({ms:.0f} ms)[/] status={data.get('status')}{extra}")


async def run_demo(console: Console) -> None:
    """The scripted agent session (see the module docstring)."""
    from mcp.server.subscriptions import ToolsListChanged

    async with _serving(0) as (origin, rt):
        url = f"{origin}/mcp"
        console.print(
            Panel.fit(
                f"todo app served over MCP (streamable HTTP) at [bold]{url}[/]\n"
                f"the same todo list, live, as a web page with WebMCP tools: {origin}/\n"
                f"and over A2A: {origin}/.well-known/agent-card.json"
            )
        )
        async with _client(url, "alice-token") as alice, _client(url, "bob-token") as bob:
            console.print(f"agent 'alice' connected · protocol {alice.protocol_version}")

            async with alice.listen(tools_list_changed=True) as changes:
                console.rule("1. tools/list")
                table = Table("tool", "description", "input")
                for tool in (await alice.list_tools()).tools:
                    props = ", ".join(tool.input_schema.get("properties", {})) or "{}"
                    table.add_row(tool.name, tool.description or "", props)
                console.print(table)

                console.rule("2. create todos (each call waits until the todo is saved)")
                for title in ("Read the guide", "Write the tests"):
                    started = time.perf_counter()
                    result = await alice.call_tool("create_todo", {"title": title})
                    _show_result(console, f"create_todo {title!r}", result, started)
                with anyio.fail_after(5):
                    async for event in changes:  # the first todo made rename/toggle/select appear
                        if isinstance(event, ToolsListChanged):
                            console.print(
                                "  [cyan]notification[/] tools/list_changed "
                                "(rename, toggle and select appeared with the first todo)"
                            )
                            break

                console.rule("3. select a todo, so delete_todo becomes available")
                started = time.perf_counter()
                result = await alice.call_tool("select_todo", {"id": "todo-1"})
                _show_result(console, "select_todo todo-1", result, started)
                with anyio.fail_after(5):
                    async for event in changes:
                        if isinstance(event, ToolsListChanged):
                            console.print(
                                "  [cyan]notification[/] tools/list_changed "
                                "(received on the subscriptions/listen stream)"
                            )
                            break
                names = [t.name for t in (await alice.list_tools()).tools]
                console.print(f"  tools now: {', '.join(names)}")

            console.rule("4. delete it: bob's token lacks todos:delete, alice's has it")
            started = time.perf_counter()
            _show_result(
                console, "bob: delete_todo", await bob.call_tool("delete_todo", {}), started
            )
            started = time.perf_counter()
            _show_result(
                console, "alice: delete_todo", await alice.call_tool("delete_todo", {}), started
            )

            console.rule("5. an invalid call")
            started = time.perf_counter()
            bad = await alice.call_tool("create_todo", {"title": "Buy milk", "priority": "high"})
            _show_result(console, "create_todo with an undeclared field", bad, started)

            console.rule("6. read the context resource agent://context")
            contents = (await alice.read_resource("agent://context")).contents[0]
            text = getattr(contents, "text", "{}")
            console.print(Syntax(json.dumps(json.loads(text), indent=2), "json", theme="ansi_dark"))

        console.rule("7. audit trail")
        audit = Table("call", "who", "capability", "decision", "outcome")
        assert rt.audit is not None
        for entry in rt.audit.entries():
            if entry.transport != "mcp":
                continue
            colour = {"dispatched": "green", "refused": "red"}.get(entry.decision, "yellow")
            audit.add_row(
                entry.invocation_id.rsplit("-", 1)[-1],
                str(entry.principal or "-"),
                entry.capability,
                f"[{colour}]{entry.decision}[/]",
                entry.outcome,
            )
        console.print(audit)


def _configs(url: str) -> str:
    desktop = {
        "mcpServers": {
            "foldkit-todo": {
                "command": str(Path(sys.executable).parent / "foldkit-agent"),
                "args": ["serve", "examples.todo:runtime", "--mcp", "stdio"],
                "cwd": str(_example_root()),
            }
        }
    }
    return (
        "Claude Desktop (claude_desktop_config.json; stdio, no credentials, so delete_todo is "
        "refused):\n"
        f"{json.dumps(desktop, indent=2)}\n\n"
        "Claude Code (this running server, as alice):\n"
        f"  claude mcp add --transport http foldkit-todo {url} "
        '--header "Authorization: Bearer alice-token"\n\n'
        "MCP Inspector:\n"
        f"  npx @modelcontextprotocol/inspector --cli {url} --transport http "
        '--header "Authorization: Bearer alice-token" --method tools/list\n'
        "  (or open the Inspector UI, choose Streamable HTTP, URL above, and add the header)\n\n"
        "Tokens: alice-token (may delete), bob-token (may not)."
    )


@app.command(cls=Command)
def demo(
    serve: bool = typer.Option(
        False, "--serve", help="Keep the server up and print client configs"
    ),
    port: int = typer.Option(8000, help="Port for --serve (0 picks a free one)"),
) -> None:
    """Run the todo example with a scripted agent over real MCP (or --serve it)."""
    if not 0 <= port <= 65535:
        fail(f"--port must be between 0 and 65535, got {port}")
    console = Console()
    if not serve:
        anyio.run(run_demo, console)
        return

    async def keep_serving() -> None:
        async with _serving(port) as (origin, _rt):
            url = f"{origin}/mcp"
            console.print(
                Panel.fit(
                    f"todo app served over MCP at [bold]{url}[/]  (Ctrl-C stops)\n"
                    f"web page (a person, plus WebMCP tools for a browser agent): {origin}/\n"
                    f"A2A agent card: {origin}/.well-known/agent-card.json"
                )
            )
            console.print(_configs(url), highlight=False, soft_wrap=True)
            await anyio.sleep_forever()

    try:
        anyio.run(keep_serving)
    except KeyboardInterrupt:
        print("stopped", file=sys.stderr)
