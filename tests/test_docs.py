"""Every command and code block README.md and docs/ tell a reader to run, run as written.

The blocks are read from the documents themselves (``tests/support/docs.py`` says which blocks
count and how to opt one out). Each command goes to the first runner in :data:`RUNNERS` whose
pattern matches it; a command no runner knows fails, naming the block. Servers are real
``foldkit-agent`` subprocesses on loopback, clients are the official MCP client, the pinned
MCP Inspector and curl. What ``foldkit-agent demo --serve`` prints is run the same way.
"""

from __future__ import annotations

import contextlib
import json
import os
import queue
import re
import shutil
import signal
import subprocess
import sys
import threading
import urllib.parse
from collections.abc import Callable, Iterator
from contextlib import ExitStack
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import IO

import anyio
import httpx
import httpx2
import pytest
from mcp import Client, StdioServerParameters
from mcp.client.streamable_http import streamable_http_client

from foldkit_agent.cli.demo import INSPECTOR_VERSION
from tests.support.docs import (
    DOCUMENTS,
    Block,
    Command,
    blocks,
    every_block,
    matches,
    with_port,
)
from tests.support.paths import INTEROP, ROOT

BIN = Path(sys.executable).parent
PINNED_INSPECTOR = json.loads((INTEROP / "package.json").read_text())["dependencies"][
    "@modelcontextprotocol/inspector"
]
PLACEHOLDERS = [
    ("/path/to/foldkit-agent/.venv/bin/", f"{BIN}/"),
    ("/path/to/foldkit-agent", "{scratch}"),
]
"""How the docs name the reader's checkout: its ``.venv/bin`` is this one, and the folder is
the block's scratch folder (where the document's named files are, with this checkout on
``PYTHONPATH``, so ``examples.todo`` imports there as in the checkout)."""
TIMEOUT = 180  # seconds for one command on a loaded machine (npx starts slowly)


def free_port() -> int:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


MAKE_VARIABLES = frozenset({"MAKELEVEL", "MAKEFLAGS", "MFLAGS", "MAKEOVERRIDES"})


def environment(home: Path, **extra: str) -> dict[str, str]:
    """The reader's shell after ``source .venv/bin/activate``, with a private ``$HOME``."""
    # The reader types `make demo` at a shell, not inside another make (CI runs this suite
    # from `make test`): make's own variables would turn on its "Entering directory" lines.
    outer = {k: v for k, v in os.environ.items() if k not in MAKE_VARIABLES}
    return {
        **outer,
        "PATH": f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}",
        "VIRTUAL_ENV": str(BIN.parent),
        "HOME": str(home),  # the Inspector keeps a catalog under $HOME
        "NO_COLOR": "1",
        "PYTHONUNBUFFERED": "1",
        "COLUMNS": "80",
        **extra,
    }


# -- servers ---------------------------------------------------------------------------------


class Server:
    """A command running as a subprocess; its output lines are read on two threads."""

    def __init__(self, argv: list[str], env: dict[str, str], cwd: Path) -> None:
        self.argv = argv
        self.proc = subprocess.Popen(
            argv,
            cwd=cwd,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        self.lines: queue.Queue[tuple[str, str | None]] = queue.Queue()
        self.seen: list[tuple[str, str]] = []
        self.ended = 0
        for name, stream in (("stdout", self.proc.stdout), ("stderr", self.proc.stderr)):
            threading.Thread(target=self._pump, args=(name, stream), daemon=True).start()
        self.origin = ""
        self.headers: dict[str, str] = {}

    def _pump(self, name: str, stream: IO[str] | None) -> None:
        assert stream is not None
        for line in stream:
            self.lines.put((name, line))
        self.lines.put((name, None))

    def next_match(self, pattern: str, timeout: float = 60) -> re.Match[str] | None:
        """The next output line matching ``pattern``, or ``None`` once the process exited."""
        while self.ended < 2:
            try:
                name, line = self.lines.get(timeout=timeout)
            except queue.Empty:
                raise AssertionError(f"{self.argv}: no {pattern!r} in {self.output()}") from None
            if line is None:
                self.ended += 1
                continue
            self.seen.append((name, line))
            found = re.search(pattern, line)
            if found:
                return found
        return None

    def wait_for(self, pattern: str, timeout: float = 60) -> re.Match[str]:
        """The first output line matching ``pattern`` (a server prints it once listening)."""
        found = self.next_match(pattern, timeout)
        if found is None:
            raise AssertionError(f"{self.argv} exited: {self.output()}")
        return found

    def output(self, stream: str | None = None) -> str:
        """What it printed so far (after it exited, everything), on one stream or both."""
        while True:
            try:
                name, line = self.lines.get_nowait()
            except queue.Empty:
                break
            if line is None:
                self.ended += 1
            else:
                self.seen.append((name, line))
        return "".join(line for name, line in self.seen if stream in (None, name))

    def stop(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(15)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(5)


@dataclass
class Run:
    """What one block's commands share: its port, scratch folder, and running server."""

    block: Block
    port: int
    scratch: Path
    home: Path
    stack: ExitStack
    server: Server | None = None
    servers: list[Server] = field(default_factory=list[Server])
    exported: dict[str, str] = field(default_factory=dict[str, str])

    def env(self, **extra: str) -> dict[str, str]:
        """The reader's shell, in the scratch folder with the checkout importable (and what
        the block's ``export`` lines set)."""
        return environment(
            self.home,
            PYTHONPATH=os.pathsep.join([str(ROOT / "src"), str(ROOT)]),
            **self.exported,
            **extra,
        )

    def local(self, text: str) -> str:
        """``text`` with the docs' placeholder paths made real (see :data:`PLACEHOLDERS`)."""
        for placeholder, real in PLACEHOLDERS:
            text = text.replace(placeholder, real.format(scratch=self.scratch))
        return text

    def start(self, argv: list[str], cwd: Path | None = None) -> Server:
        """Start a server command; one the block started before is stopped first.

        A block's server commands are alternatives ("keep it up", "or serve it like this")
        on one documented port; its client commands talk to the latest one.
        """
        if self.server is not None:
            self.server.stop()
            self.server = None
        server = Server(argv, self.env(), cwd or self.scratch)
        self.stack.callback(server.stop)
        self.servers.append(server)
        return server

    def need_server(self) -> Server:
        """The block's server on its port; ``foldkit-agent demo --serve`` when it has none.

        The docs point clients at "a running ``foldkit-agent demo --serve``" (alice-token and
        bob-token), so that is the server a block without one of its own talks to.
        """
        if self.server is None:
            demo_serve(self, Command("foldkit-agent demo --serve", 0), demo_argv(self.port))
        assert self.server is not None
        return self.server


def with_port_option(argv: list[str], port: int) -> list[str]:
    """``argv`` with ``--port port`` (replacing the one given, or added)."""
    if "--port" in argv:
        i = argv.index("--port")
        return [*argv[: i + 1], str(port), *argv[i + 2 :]]
    return [*argv, "--port", str(port)]


def demo_argv(port: int) -> list[str]:
    return ["foldkit-agent", "demo", "--serve", "--port", str(port)]


async def mcp_tools(url: str, headers: dict[str, str]) -> list[str]:
    """The tool names an official MCP client sees at ``url`` (streamable HTTP)."""
    http = httpx2.AsyncClient(headers=headers, timeout=30)
    with anyio.fail_after(60):
        async with Client(streamable_http_client(url, http_client=http)) as client:
            return [t.name for t in (await client.list_tools()).tools]


async def stdio_tools(command: str, args: list[str], cwd: str) -> list[str]:
    """The tool names an official MCP client sees from ``command args`` over stdio."""
    env = environment(ROOT, PYTHONPATH=str(ROOT))
    params = StdioServerParameters(command=command, args=args, cwd=cwd, env=env)
    with anyio.fail_after(60):
        async with Client(params) as client:
            return [t.name for t in (await client.list_tools()).tools]


def resolve(program: str) -> str:
    found = shutil.which(program, path=f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}")
    assert found is not None, f"{program} is not installed"
    return found


# -- runners ---------------------------------------------------------------------------------


def make_demo(run: Run, cmd: Command, argv: list[str]) -> None:
    """``make demo``: the scripted agent session; it ends by offering ``demo --serve``."""
    done = subprocess.run(
        argv, cwd=ROOT, env=run.env(), capture_output=True, text=True, timeout=TIMEOUT
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "The audit trail" in done.stdout
    assert done.stdout.rstrip().endswith("foldkit-agent demo --serve")


def make_test(run: Run, cmd: Command, argv: list[str]) -> None:
    """``make test`` is this very suite; a dry run (``make -n``) shows what it runs."""
    done = subprocess.run(
        ["make", "-n", *argv[1:]], cwd=ROOT, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    assert "FOLDKIT_NO_SKIP=1" in done.stdout
    assert "-m pytest" in done.stdout


def demo_once(run: Run, cmd: Command, argv: list[str]) -> None:
    """``foldkit-agent demo``: as ``make demo``."""
    make_demo(run, cmd, argv)


def demo_serve(run: Run, cmd: Command, argv: list[str]) -> None:
    """``foldkit-agent demo --serve``: up, and alice's token lists the tools over MCP."""
    server = run.start(with_port_option(argv, run.port))
    found = server.wait_for(r"MCP \(streamable HTTP\):\s+(http://\S+)/mcp")
    server.origin = found.group(1)
    server.headers = {"Authorization": "Bearer alice-token"}
    server.wait_for(r"^Tokens: ")
    assert anyio.run(mcp_tools, f"{server.origin}/mcp", server.headers)[:1] == ["create_todo"]
    run.server = server


def serve_stdio(run: Run, cmd: Command, argv: list[str]) -> None:
    """``foldkit-agent serve ... --mcp stdio``: an MCP stdio client lists the tools."""
    tools = anyio.run(stdio_tools, resolve(argv[0]), argv[1:], str(run.scratch))
    assert tools, f"{cmd.text!r} offers no tools"


def serve_http(run: Run, cmd: Command, argv: list[str]) -> None:
    """``foldkit-agent serve ... --mcp http / --a2a / --webmcp / --native-token / --ag-ui``: each
    adapter asked for answers on the port the server says it serves."""
    server = run.start(with_port_option(argv, run.port))
    found = server.wait_for(r"^serving .* at (http://[^/\s]+)")
    server.origin = found.group(1)
    tokens = [argv[i + 1] for i, a in enumerate(argv) if a == "--token"]
    if tokens:
        server.headers = {"Authorization": f"Bearer {tokens[0].partition('=')[0]}"}
    # --tenant-from path: the first token's tenant (or any tenant without tokens) at its path
    by_path = "--tenant-from" in argv and argv[argv.index("--tenant-from") + 1] == "path"
    subject = tokens[0].partition("=")[2].partition(";")[0] if tokens else "alice"
    prefix = f"/{subject}" if by_path else ""
    if "--mcp" in argv and "--auth-issuer" in argv:
        # no issuer runs here: the server's side of the sign-in is what a client meets first
        bare = httpx.post(f"{server.origin}{prefix}/mcp", json={"jsonrpc": "2.0"}, timeout=30)
        assert bare.status_code == 401, bare.text
        assert "resource_metadata=" in bare.headers["www-authenticate"]
    elif "--mcp" in argv:
        assert anyio.run(mcp_tools, f"{server.origin}{prefix}/mcp", server.headers)
    with httpx.Client(base_url=server.origin, timeout=30) as http:
        if "--a2a" in argv:
            card = http.get(f"{prefix}/.well-known/agent-card.json", headers=server.headers)
            assert card.status_code == 200
            assert card.json()["skills"]
            base = argv[argv.index("--base-url") + 1] if "--base-url" in argv else server.origin
            urls = [i["url"] for i in card.json()["supportedInterfaces"]]
            assert urls[0] == f"{base.rstrip('/')}{prefix}/a2a/jsonrpc", urls
        if "--webmcp" in argv:
            if tokens:  # with tokens the page answers a signed-in person only
                signed = http.post("/console/sign-in", json={"token": tokens[0].partition("=")[0]})
                assert signed.status_code in (200, 204, 303), signed.text
            page = http.get("/")
            assert page.status_code == 200
            assert "webmcp.js" in page.text
        natives = [argv[i + 1] for i, a in enumerate(argv) if a == "--native-token"]
        if natives:
            listed = http.get(
                "/native/capabilities", headers={"Authorization": f"Bearer {natives[0]}"}
            )
            assert listed.status_code == 200, listed.text
        if "--ag-ui" in argv:
            said = {"id": "m1", "role": "user", "content": "hello"}
            body = {"threadId": "t", "runId": "r", "messages": [said], "state": {}, "tools": []}
            body |= {"context": [], "forwardedProps": {}}
            ran = http.post("/ag-ui", json=body, headers=server.headers)
            assert ran.status_code == 200, ran.text
            assert '"type":"RUN_FINISHED"' in ran.text, ran.text
    run.server = server


def offline_command(run: Run, cmd: Command, argv: list[str]) -> None:
    """``foldkit-agent manifest / docs / check / native ...``: runs in a scratch folder (the
    checkout importable), exits 0, and prints what a console block shows."""
    done = subprocess.run(
        argv, cwd=run.scratch, env=run.env(), capture_output=True, text=True, timeout=TIMEOUT
    )
    assert done.returncode == 0, done.stdout + done.stderr
    if cmd.expected:
        expected = tuple(with_port(line, run.port) for line in cmd.expected)
        assert matches(expected, done.stdout) or matches(expected, done.stderr), (
            f"{run.block.where}: {cmd.text!r} printed\n{done.stdout}{done.stderr}"
        )


def inspector(run: Run, cmd: Command, argv: list[str]) -> None:
    """``npx -y @modelcontextprotocol/inspector@V --cli URL ...``: the pinned Inspector.

    It runs in tests/interop, so npx finds that exact version installed there (from the
    repository root it fetches the same version from the registry).
    """
    assert "-y" in argv, f"{cmd.text!r}: npx asks before installing without -y"
    assert f"@modelcontextprotocol/inspector@{PINNED_INSPECTOR}" in argv, (
        f"{cmd.text!r} must pin the Inspector version tests/interop installs "
        f"({PINNED_INSPECTOR}): older ones have no --header for --cli"
    )
    run.need_server()
    done = subprocess.run(
        argv, cwd=INTEROP, env=run.env(), capture_output=True, text=True, timeout=TIMEOUT
    )
    assert done.returncode == 0, done.stdout + done.stderr
    answer = json.loads(done.stdout)
    method = argv[argv.index("--method") + 1]
    if method == "tools/list":
        assert answer["tools"], answer
    if method == "tools/call":
        assert answer["isError"] is False, answer


def curl(run: Run, cmd: Command, argv: list[str]) -> None:
    """``curl ...``: against the block's server (or ``demo --serve``); must succeed."""
    run.need_server()
    done = subprocess.run(
        [*argv[:1], "--fail-with-body", *argv[1:]],
        env=run.env(),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stdout + done.stderr


def claude_code(run: Run, cmd: Command, argv: list[str]) -> None:
    """``claude mcp add ...``: Claude Code is not installed here, so this checks the server
    it would be pointed at: the stdio command after ``--`` answers an MCP client, or the
    ``--transport http`` URL answers one sending the ``--header``."""
    if "--" in argv:
        server = argv[argv.index("--") + 1 :]
        assert anyio.run(stdio_tools, run.local(server[0]), server[1:], str(run.scratch))
        return
    assert argv[argv.index("--transport") + 1] == "http"
    url = next(a for a in argv if a.startswith("http://"))
    headers = dict(
        (k.strip(), v.strip())
        for k, _, v in (argv[i + 1].partition(":") for i, a in enumerate(argv) if a == "--header")
    )
    run.need_server()
    assert anyio.run(mcp_tools, url, headers)


def todo_web(run: Run, cmd: Command, argv: list[str]) -> None:
    """``python -m examples.todo_web``: the page answers at the URL it prints."""
    server = run.start(with_port_option(argv, run.port))
    url = server.wait_for(r"todo web page: (http://\S+)").group(1)
    page = httpx.get(url, timeout=30)
    assert page.status_code == 200
    assert "webmcp.js" in page.text


def python_module(run: Run, cmd: Command, argv: list[str]) -> None:
    """``python -m examples.X``: an example that runs to the end, exit 0."""
    done = subprocess.run(
        [resolve("python"), *argv[1:]],
        cwd=run.scratch,
        env=run.env(),
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.strip(), f"{cmd.text!r} printed nothing"


def deploy_tryout(run: Run, cmd: Command, argv: list[str]) -> None:
    """``python -m deploy``: PostgreSQL, the workers and nginx come up; each tenant's token
    lists the tools through nginx at the URL printed; a worker killed with SIGKILL is started
    again on its port and its tenants answer; Ctrl-C stops it all, exit 0, and the files it
    printed (nginx's folder, the cluster's socket) are gone."""
    server = run.start([resolve("python"), *with_port_option(argv, run.port)[1:]])
    server.wait_for(r"^ready; Ctrl-C stops everything", timeout=TIMEOUT)
    printed = server.output()
    found = re.findall(
        r"^tenant \S+: MCP (http://\S+/mcp) A2A card (http://\S+) token (\S+)$", printed, re.M
    )
    assert found, printed
    tenants = [(url, token) for url, _card, token in found]
    for url, card_url, token in found:
        assert url.startswith(f"http://127.0.0.1:{run.port}/")
        assert anyio.run(mcp_tools, url, {"Authorization": f"Bearer {token}"})
        card = httpx.get(card_url, headers={"Authorization": f"Bearer {token}"}, timeout=30)
        assert card.status_code == 200, card.text
        jsonrpc = card.json()["supportedInterfaces"][0]["url"]
        assert jsonrpc == url.removesuffix("/mcp") + "/a2a/jsonrpc"  # through nginx
    # the database line is a psql command: as printed, it reaches the stack's database
    psql = re.search(r"^PostgreSQL \(todos, audit and A2A tasks\): (psql '(\S+)')$", printed, re.M)
    assert psql is not None, printed
    query = f"{psql.group(1)} -Atc 'SELECT current_database()'"
    read = subprocess.run(query, shell=True, capture_output=True, text=True, timeout=60)
    database = urllib.parse.urlsplit(psql.group(2)).path.lstrip("/")
    assert (read.returncode, read.stdout) == (0, f"{database}\n"), read.stderr
    first = re.search(r"^worker 0: (\S+) \(pid (\d+)\), tenants (.*)$", printed, re.M)
    assert first is not None, printed
    os.kill(int(first.group(2)), signal.SIGKILL)
    server.wait_for(r"^worker 0 exited; restarting it", timeout=TIMEOUT)
    back = server.wait_for(r"^worker 0 is back on (\S+) \(pid (\d+)\)", timeout=TIMEOUT)
    assert back.group(1) == first.group(1)  # its port, so nginx's ring is unchanged
    held = {name for name in first.group(3).split(", ") if name != "-"}
    for url, token in tenants:
        if url.rsplit("/", 2)[-2] in held:
            assert anyio.run(mcp_tools, url, {"Authorization": f"Bearer {token}"})
    server.proc.send_signal(signal.SIGINT)
    assert server.proc.wait(TIMEOUT) == 0, server.output()
    assert server.next_match(r"^stopped: ") is not None, server.output()
    files = re.search(r"files in (\S+)\)", printed)
    socket_dir = re.search(r"\?host=([^&']+)", printed)
    assert files is not None, printed
    assert socket_dir is not None, printed
    assert not Path(files.group(1)).exists()
    assert not Path(urllib.parse.unquote(socket_dir.group(1))).exists()


def python_file(run: Run, cmd: Command, argv: list[str]) -> None:
    """``.venv/bin/python FILE.py``: the document's block named FILE.py, as a file."""
    named = {b.title: b for b in blocks(run.block.path) if b.title}
    assert argv[1] in named, f"{cmd.text!r}: no python block of this document is {argv[1]}"
    python_block(run, named[argv[1]])


Runner = Callable[[Run, Command, list[str]], None]


def export_variable(run: Run, cmd: Command, argv: list[str]) -> None:
    """``export NAME=VALUE``: the block's later commands run with it set."""
    name, _, value = argv[1].partition("=")
    run.exported[name] = value


RUNNERS: list[tuple[str, Runner]] = [
    (r"export [A-Za-z_]\w*=\S*$", export_variable),
    (r"make demo$", make_demo),
    (r"make test$", make_test),
    (r"foldkit-agent demo$", demo_once),
    (r"foldkit-agent demo --serve\b", demo_serve),
    (r"foldkit-agent serve .*--mcp stdio\b", serve_stdio),
    (r"foldkit-agent serve ", serve_http),
    (r"foldkit-agent (manifest|docs|check|native) ", offline_command),
    (r"npx .*@modelcontextprotocol/inspector", inspector),
    (r"curl ", curl),
    (r"claude mcp add ", claude_code),
    (r"python -m examples\.todo_web\b", todo_web),
    (r"python -m examples\.", python_module),
    (r"(\.venv/bin/)?python -m deploy\b", deploy_tryout),
    (r"(\.venv/bin/)?python \S+\.py$", python_file),
]
"""``(pattern matched against the command's words, runner)``, first match wins."""


def refused(run: Run, cmd: Command, argv: list[str]) -> None:
    """A console command whose shown output starts ``error:``: it must fail (exit 2) and say
    exactly that, on one stream."""
    assert cmd.expected is not None
    done = subprocess.run(
        argv, cwd=run.scratch, env=run.env(), capture_output=True, text=True, timeout=TIMEOUT
    )
    assert done.returncode == 2, done.stdout + done.stderr
    assert matches(cmd.expected, done.stderr), done.stderr
    assert "Traceback" not in done.stderr


def run_command(run: Run, cmd: Command) -> None:
    argv = cmd.argv()
    spoken = " ".join(argv)
    if cmd.expected and next((x for x in cmd.expected if x.strip()), "").startswith("error:"):
        refused(run, cmd, argv)
        return
    for pattern, runner in RUNNERS:
        if re.match(pattern, spoken):
            runner(run, cmd, argv)
            return
    raise AssertionError(
        f"{run.block.where}: no runner knows {cmd.text!r}; add one to tests/test_docs.py, "
        "or mark the block <!-- not run: why --> in the document"
    )


def python_block(run: Run, block: Block) -> None:
    """A python block, written to a file (its ``title``, or block.py) and run with the venv's
    Python.

    It must exit 0 (printing its ``text`` block, when it has one), or be a server: a file
    that starts uvicorn is probed at the URL uvicorn says it runs on, then stopped.
    """
    if re.search(r"127\.0\.0\.1:8000\b", block.text) and "uvicorn" not in block.text:
        run.need_server()  # a client of the documented server
    path = run.scratch / (block.title or "block.py")
    path.write_text(with_port(block.text, run.port), encoding="utf-8")
    proc = Server([sys.executable, str(path)], run.env(), run.scratch)
    run.stack.callback(proc.stop)
    run.servers.append(proc)
    serving = proc.next_match(r"Uvicorn running on (http://\S+)", timeout=TIMEOUT)
    if serving is not None:
        answer = httpx.get(serving.group(1) + "/", timeout=30)
        assert answer.status_code < 500, answer.text
        return
    code = proc.proc.wait(TIMEOUT)
    assert code == 0, f"{block.where}:\n{proc.output('stderr')}"
    if block.output is not None:
        assert proc.output("stdout") == with_port(block.output, run.port), proc.output()


def run_desktop_config(run: Run) -> None:
    """A Claude Desktop config: each server's command, args and cwd answer over stdio."""
    config = json.loads(run.block.text)
    for server in config["mcpServers"].values():
        command = run.local(server["command"])
        cwd = run.local(server.get("cwd", str(run.scratch)))
        assert anyio.run(stdio_tools, command, server["args"], cwd)


@contextlib.contextmanager
def block_run(block: Block, tmp_path: Path) -> Iterator[Run]:
    scratch = tmp_path / "work"
    scratch.mkdir()
    home = tmp_path / "home"
    home.mkdir()
    with ExitStack() as stack:
        run = Run(block, free_port(), scratch, home, stack)
        for named in blocks(block.path):
            if named.title:  # the files the reader saved, for the document's commands
                (scratch / named.title).write_text(with_port(named.text, run.port))
        try:
            yield run
        except BaseException:
            for server in run.servers:
                server.stop()
                print(f"--- {server.argv}\n{server.output()}")
            raise


def run_block(block: Block, tmp_path: Path) -> None:
    with block_run(block, tmp_path) as run:
        if block.lang == "python":
            python_block(run, block)
        elif block.lang == "json":
            run_desktop_config(run)
        else:
            for cmd in block.commands:
                run_command(run, replace(cmd, text=with_port(cmd.text, run.port)))


BLOCKS = [b for b in every_block() if b.skip is None]


@pytest.mark.interop
@pytest.mark.parametrize("block", BLOCKS, ids=[b.where for b in BLOCKS])
def test_the_documented_block_runs_as_written(block: Block, tmp_path: Path) -> None:
    run_block(block, tmp_path)


def test_every_opted_out_block_says_why() -> None:
    skipped = [b for b in every_block() if b.skip is not None]
    for block in skipped:
        assert len(block.skip or "") >= 10, f"{block.where}: say why the block is not run"
    assert len(skipped) <= 4, [b.where for b in skipped]  # opt-outs stay rare


def test_every_document_has_its_runnable_blocks_found() -> None:
    found = {b.path for b in every_block()}
    assert ROOT / "README.md" in found
    assert ROOT / "docs" / "mcp.md" in found
    assert set(DOCUMENTS) >= found


def test_every_mention_of_the_inspector_pins_the_installed_version() -> None:
    assert INSPECTOR_VERSION == PINNED_INSPECTOR  # what demo --serve prints
    for path in DOCUMENTS:
        for mention in re.finditer(r"@modelcontextprotocol/inspector\S*", path.read_text()):
            assert mention.group(0).rstrip("`.,)") == (
                f"@modelcontextprotocol/inspector@{PINNED_INSPECTOR}"
            ), f"{path.name}: {mention.group(0)}"


# -- what demo --serve prints ----------------------------------------------------------------


def printed_commands(text: str) -> list[Command]:
    """The commands ``demo --serve`` prints: indented lines starting with a program name."""
    commands: list[Command] = []
    pending: list[str] = []
    for number, line in enumerate(text.splitlines(), 1):
        stripped = line.strip()
        if not pending and not re.match(r"  (npx|claude|curl|foldkit-agent) ", line):
            continue
        if stripped.endswith("\\"):
            pending.append(stripped[:-1].rstrip())
            continue
        commands.append(Command(" ".join([*pending, stripped]), number))
        pending = []
    return commands


@pytest.mark.interop
def test_what_demo_serve_prints_works_as_printed(tmp_path: Path) -> None:
    block = Block(ROOT / "README.md", 0, "sh", "")
    with block_run(block, tmp_path) as run:
        port = free_port()
        server = run.start(demo_argv(port))
        server.origin = server.wait_for(r"MCP \(streamable HTTP\):\s+(http://\S+)/mcp").group(1)
        server.wait_for(r"^\}$")  # the end of the Claude Desktop config, the last thing printed
        run.server, run.port = server, port
        printed = server.output("stdout")
        assert max(len(line) for line in printed.splitlines() if "/" not in line) <= 80
        commands = printed_commands(printed)
        assert [c.argv()[0] for c in commands] == ["npx", "claude", "curl"], printed
        for cmd in commands:
            run_command(run, cmd)
        config = printed[printed.index('{\n  "mcpServers"') :]
        desktop = Block(ROOT / "README.md", 0, "json", config)
        run_desktop_config(Run(desktop, port, run.scratch, run.home, run.stack, server))


# -- the quick start under strict pyright ------------------------------------------------------


def test_the_quick_start_is_clean_under_strict_pyright(tmp_path: Path) -> None:
    """As written (``expose(mapping)``), and naming the union (``expose(union, mapping)``)."""
    quick = next(b for b in blocks(ROOT / "README.md") if b.title == "quick_start.py")
    assert "Todo.expose({" in quick.text
    (tmp_path / "quick_start.py").write_text(quick.text)
    explicit = quick.text.replace("Todo.expose({", "Todo.expose(Messages, {")
    (tmp_path / "quick_start_union.py").write_text(explicit)
    config = {"typeCheckingMode": "strict", "pythonVersion": "3.11"}
    (tmp_path / "pyrightconfig.json").write_text(json.dumps(config))
    done = subprocess.run(
        [
            str(BIN / "pyright"),
            "--pythonpath",
            sys.executable,
            "quick_start.py",
            "quick_start_union.py",
        ],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
    )
    assert done.returncode == 0, done.stdout
    assert "0 errors, 0 warnings" in done.stdout
