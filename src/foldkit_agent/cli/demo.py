"""``foldkit-agent demo``: the todo example driven by a scripted agent over real MCP.

The example application runs in this process and is served over streamable HTTP on a free
loopback port; a scripted agent then uses the official ``mcp`` client, exactly as any MCP host
would, and the command prints what it sees and finally the audit trail. ``delete_todo`` asks
for a person's approval: alice's client answers its elicitation as a scripted person would,
declining the first request and approving the second, each shown with its preview.

``foldkit-agent demo --serve`` keeps the server up instead and prints client configurations.
"""

from __future__ import annotations

import importlib
import json
import sys
import textwrap
import time
from collections.abc import AsyncGenerator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import typer
from rich import box
from rich.console import Console
from rich.json import JSON
from rich.padding import Padding
from rich.table import Table
from rich.text import Text

from ..errors import needs_extra
from .loading import fail
from .root import Command, app

__all__ = ["DEMO_TOKENS", "demo", "run_demo"]

DEMO_PARTS = ("mcp", "a2a", "web")
"""The adapters the demo serves (their extras are the ``demo`` entry of ``errors.EXTRAS``)."""

DEMO_TOKENS: dict[str, tuple[str, list[str]]] = {
    "alice-token": ("alice", ["todos:delete"]),
    "bob-token": ("bob", []),
}
"""The demo's bearer tokens: ``token -> (subject, scopes)``. Only for this local demo."""


def _verifier() -> Any:
    from ..adapters.mcp import StaticTokenVerifier
    from ..edge.tokens import Grant, TokenTable

    grants = {token: Grant(who, tuple(scopes)) for token, (who, scopes) in DEMO_TOKENS.items()}
    return StaticTokenVerifier(TokenTable(grants))


def _example_root() -> Path:
    """The folder holding ``examples/`` (the current directory or the source checkout)."""
    for where in (Path.cwd(), Path(__file__).resolve().parents[3]):
        if (where / "examples" / "todo").is_dir():
            return where
    return Path.cwd()


def _import_example() -> Any:
    """``examples.todo``, from the current directory or the source checkout."""
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

    try:
        sock = bind_socket("127.0.0.1", port)
    except OSError as err:
        fail(
            f"cannot listen on 127.0.0.1:{port}: {err.strerror or err}; choose another "
            "--port (0 picks a free one)"
        )
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

            async def serve_until_stopped() -> None:
                await run_http(asgi, sock=sock, runtimes=[rt])
                tg.cancel_scope.cancel()  # a signal drained and stopped the server: end too

            tg.start_soon(serve_until_stopped)
            try:
                yield origin, rt
            finally:
                tg.cancel_scope.cancel()


def _client(url: str, token: str, person: Any = None) -> Any:
    import httpx2
    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client

    http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"}, timeout=10)
    transport = streamable_http_client(url, http_client=http)
    if person is None:
        return Client(transport)
    return Client(transport, elicitation_callback=person)


WIDTH = 78
"""Every line the demo prints fits in this many columns, so an 80-column terminal never wraps."""


class _Out:
    """Prints the demo's lines: short, indented, and wrapped only at words by the demo itself."""

    def __init__(self, console: Console) -> None:
        self.console = console

    def line(self, text: str = "", style: str = "", indent: int = 0, hang: int = 0) -> None:
        """``text`` at ``indent``, wrapped at words to :data:`WIDTH` (continuations + ``hang``)."""
        if not text:
            self.console.print()
            return
        lines = textwrap.wrap(
            text,
            width=WIDTH,
            initial_indent=" " * indent,
            subsequent_indent=" " * (indent + hang),
            break_long_words=False,
            break_on_hyphens=False,
        )
        for one in lines:
            self.console.print(Text(one, style=style), soft_wrap=True)

    def step(self, text: str) -> None:
        self.console.print()
        self.line(text, style="bold")

    def result(self, label: str, result: Any, started: float) -> None:
        ms = (time.perf_counter() - started) * 1000
        data: dict[str, Any] = result.structured_content or {}
        if result.is_error:
            self.line(f"✗ {label}: refused, {data.get('_tag')} ({ms:.0f} ms)", "red", indent=3)
            self.line(result.content[0].text, "red", indent=5)
            return
        done: dict[str, Any] = data.get("result") or {}
        extra = f" → {done.get('_tag')}" if done else ""
        self.line(f"✓ {label}: {data.get('status')}{extra} ({ms:.0f} ms)", "green", indent=3)


class _Person:
    """The person at alice's MCP client: shown each approval request, answers from a script.

    It is the client's elicitation callback, so the server asks it exactly as it would ask a
    person in Claude Desktop or the MCP Inspector.
    """

    def __init__(self, out: _Out, answers: list[bool]) -> None:
        self.out = out
        self.answers = answers

    async def __call__(self, _context: Any, params: Any) -> Any:
        import mcp.types as types

        approve = self.answers.pop(0)
        self.out.line("alice's client asks her (MCP elicitation):", "cyan", indent=3)
        for line in str(getattr(params, "message", "")).splitlines():
            self.out.line(line, indent=5, hang=2)
        self.out.line(f"she answers: {'approve' if approve else 'decline'}", "cyan", indent=3)
        return types.ElicitResult(action="accept", content={"approve": approve})


def _command_path() -> str:
    """How to run this ``foldkit-agent`` from the current directory (``.venv/bin/...``)."""
    exe = Path(sys.executable).parent / "foldkit-agent"
    try:
        return str(exe.relative_to(Path.cwd()))
    except ValueError:
        return str(exe)


async def run_demo(console: Console) -> None:
    """The scripted agent session (see the module docstring)."""
    from mcp.server.subscriptions import ToolsListChanged

    out = _Out(console)
    async with _serving(0) as (origin, rt):
        url = f"{origin}/mcp"
        out.line(
            "foldkit-agent demo: two scripted agents, alice and bob, use the todo example "
            "over MCP (streamable HTTP) with the official MCP client.",
            style="bold",
        )
        out.line(f"The server listens at {url} only while the demo runs.")
        person = _Person(out, [False, True])
        alice_client = _client(url, "alice-token", person)
        async with alice_client as alice, _client(url, "bob-token") as bob:
            async with alice.listen(tools_list_changed=True) as changes:
                out.step("1. List the tools (tools/list): only what the todo list allows now")
                table = Table("tool", "what it does", "input", box=box.SIMPLE, show_edge=False)
                for tool in (await alice.list_tools()).tools:
                    props = ", ".join(tool.input_schema.get("properties", {})) or "{}"
                    table.add_row(tool.name, tool.description or "", props)
                console.print(Padding(table, (0, 0, 0, 2), expand=False))

                out.step("2. Create two todos (each call waits until the todo is saved)")
                for title in ("Read the guide", "Write the tests"):
                    started = time.perf_counter()
                    result = await alice.call_tool("create_todo", {"title": title})
                    out.result(f"create_todo {title!r}", result, started)
                with anyio.fail_after(5):
                    async for event in changes:  # the first todo made rename/toggle/select appear
                        if isinstance(event, ToolsListChanged):
                            out.line(
                                "notification tools/list_changed: rename, toggle and select "
                                "appeared with the first todo",
                                "cyan",
                                indent=3,
                            )
                            break

                out.step("3. Select a todo, so delete_todo becomes available")
                started = time.perf_counter()
                result = await alice.call_tool("select_todo", {"id": "todo-1"})
                out.result("select_todo todo-1", result, started)
                with anyio.fail_after(5):
                    async for event in changes:
                        if isinstance(event, ToolsListChanged):
                            out.line("notification tools/list_changed", "cyan", indent=3)
                            break
                names = [t.name for t in (await alice.list_tools()).tools]
                out.line(f"tools now: {', '.join(names)}", indent=3, hang=11)

            out.step("4. Delete it: bob's token lacks todos:delete, so nobody is asked")
            started = time.perf_counter()
            out.result("bob: delete_todo", await bob.call_tool("delete_todo", {}), started)

            out.step("5. alice may delete, but a person approves each delete first")
            for attempt in ("declined", "approved"):
                started = time.perf_counter()
                result = await alice.call_tool("delete_todo", {})
                out.result(f"alice: delete_todo ({attempt})", result, started)
                context: dict[str, Any] = rt.context() or {}
                todos: list[dict[str, Any]] = context.get("todos", [])
                names = [str(t["title"]) for t in todos]
                out.line(f"todos now: {', '.join(names) or 'none'}", indent=3, hang=11)

            out.step("6. An invalid call: create_todo with a field it does not declare")
            started = time.perf_counter()
            bad = await alice.call_tool("create_todo", {"title": "Buy milk", "priority": "high"})
            out.result("create_todo title + priority", bad, started)

            out.step("7. Read the context resource agent://context")
            contents = (await alice.read_resource("agent://context")).contents[0]
            text = getattr(contents, "text", "{}")
            console.print(Padding(JSON(text, indent=2), (0, 0, 0, 3), expand=False))

        out.step("8. The audit trail: one entry per call, refusals included")
        audit = Table(
            "call",
            "who",
            "capability",
            "decision",
            "approval",
            "outcome",
            box=box.SIMPLE,
            show_edge=False,
        )
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
                entry.approval or "-",
                entry.outcome,
            )
        console.print(Padding(audit, (0, 0, 0, 2), expand=False))
    out.line()
    out.line(
        "The demo's server has stopped. To keep one running and connect your own client "
        "(Claude Code, the MCP Inspector, the todo page in a browser, an A2A agent), run:"
    )
    out.line()
    out.line(f"{_command_path()} demo --serve", style="bold", indent=2)


def _configs(url: str, origin: str) -> list[str]:
    """What ``demo --serve`` prints after its banner: client setups, each line copyable."""
    desktop = {
        "mcpServers": {
            "foldkit-todo": {
                "command": str(Path(sys.executable).parent / "foldkit-agent"),
                "args": [
                    *("serve", "examples.todo:runtime", "--mcp", "stdio"),
                    *("--principal", "alice;todos:delete"),
                ],
                "cwd": str(_example_root()),
            }
        }
    }
    inspector = f"npx -y @modelcontextprotocol/inspector@{INSPECTOR_VERSION}"
    return [
        "Tokens: alice-token (may delete todos), bob-token (may not).",
        "",
        "MCP Inspector (its command line; this running server, as alice):",
        f"  {inspector} --cli \\",
        f"    {url} --transport http \\",
        '    --header "Authorization: Bearer alice-token" --method tools/list',
        "",
        "Claude Code (this running server, as alice):",
        f"  claude mcp add --transport http foldkit-todo {url} \\",
        '    --header "Authorization: Bearer alice-token"',
        "",
        "A2A: the agent card (public; calls need a token):",
        f"  curl -s {origin}/.well-known/agent-card.json",
        "",
        "Claude Desktop (claude_desktop_config.json) starts its own server over stdio:",
        "a separate todo list, used by you as the local user alice (who may delete):",
        *json.dumps(desktop, indent=2).splitlines(),
    ]


INSPECTOR_VERSION = "2.12.0"
"""The MCP Inspector release the printed command pins (the first with ``--header`` on
``--cli``; tests/interop/package.json installs the same version)."""


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
    with needs_extra(__name__):  # the demo serves MCP, A2A and the page, and calls MCP
        for part in ("mcp.client.session", *(f"foldkit_agent.adapters.{a}" for a in DEMO_PARTS)):
            importlib.import_module(part)
    console = Console()
    if not serve:
        anyio.run(run_demo, console)
        return

    async def keep_serving() -> None:
        async with _serving(port) as (origin, _rt):
            url = f"{origin}/mcp"
            out = _Out(console)
            out.line("foldkit-agent demo --serve: the todo example, until Ctrl-C.", style="bold")
            out.line(f"MCP (streamable HTTP):  {url}", indent=2)
            out.line("todo page (a person, plus WebMCP tools for a browser agent):", indent=2)
            out.line(f"{origin}/", indent=4)
            out.line(f"A2A agent card:  {origin}/.well-known/agent-card.json", indent=2)
            out.line()
            for text in _configs(url, origin):
                console.print(Text(text), soft_wrap=True, highlight=False)
            console.file.flush()
            await anyio.sleep_forever()

    try:
        anyio.run(keep_serving)
    except KeyboardInterrupt:
        print("stopped", file=sys.stderr)
