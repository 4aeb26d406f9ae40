"""One machine's try-out of a deployment: PostgreSQL, N ``foldkit-agent serve`` workers and
nginx routing each tenant to its worker (``python -m deploy`` runs it; the tests drive it).

Everything lives in one temporary directory and is gone when :func:`stack` exits: a throwaway
PostgreSQL cluster (:mod:`deploy.postgres`) holding the todos (``FOLDKIT_TODO_STORE``) and
the audit (``--audit postgres:DSN --audit-durable``) and the A2A tasks
(``--a2a-task-store postgres:DSN``), the workers on loopback ports (each
``serve examples.todo:runtime --mcp http --a2a --tenant-from path --listing available
--base-url NGINX`` with every tenant's token), and nginx run from ``deploy/nginx.conf``
with ``-p DIR`` (pid, logs and temp files in ``DIR``).

Example:
    >>> with stack(["alice", "bob"], workers=3) as running:
    ...     running.url("alice"), running.tokens["alice"]
    ('http://127.0.0.1:8080/alice/mcp', '...')
"""

from __future__ import annotations

import os
import re
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import zlib
from collections import deque
from collections.abc import Iterator, Sequence
from contextlib import ExitStack, contextmanager
from pathlib import Path

from .postgres import cluster

__all__ = ["NGINX_CONF", "Stack", "Worker", "nginx_binary", "owner", "render_nginx", "stack"]

ROOT = Path(__file__).resolve().parent.parent
NGINX_CONF = Path(__file__).resolve().parent / "nginx.conf"
TARGET = "examples.todo:runtime"
START_TIMEOUT = 60.0  # seconds for a worker or nginx to start on a loaded machine
LINES_KEPT = 1000  # the last lines of a process's standard error kept (what errors quote)


def nginx_binary() -> str | None:
    """Debian's nginx (``make nginx`` installs it), or ``None``."""
    return shutil.which("nginx") or next(
        (p for p in ("/usr/sbin/nginx",) if os.access(p, os.X_OK)), None
    )


def render_nginx(listen: str, workers: Sequence[str]) -> str:
    """``deploy/nginx.conf`` with its listen address and its workers' ``host:port`` filled in.

    Example:
        >>> conf = render_nginx("127.0.0.1:8080", ["127.0.0.1:8101"])
        >>> "server 127.0.0.1:8101 max_fails=0;" in conf
        True
    """
    servers = "\n".join(f"        server {w} max_fails=0;" for w in workers)
    return NGINX_CONF.read_text().replace("@LISTEN@", listen).replace("@SERVERS@", servers)


def owner(tenant: str, servers: Sequence[str]) -> str:
    """The server (``host:port``, as listed in the upstream) that nginx's ``hash $tenant
    consistent`` sends ``tenant`` to, every server up: which worker holds a tenant's Model.

    nginx's ketama ring (``ngx_http_upstream_hash_module``): each server of weight 1 gets
    160 points, point ``i`` being ``crc32(HOST "\\0" PORT prev)`` where ``prev`` is point
    ``i - 1`` as 4 little-endian bytes (0 for the first); a key goes to the first point at or
    after ``crc32(key)``, wrapping around.

    Example:
        >>> owner("alice", ["127.0.0.1:8101", "127.0.0.1:8102", "127.0.0.1:8103"])
        '127.0.0.1:8103'
    """
    points: list[tuple[int, str]] = []
    for server in servers:
        host, _, port = server.rpartition(":")
        base = zlib.crc32(port.encode(), zlib.crc32(b"\0", zlib.crc32(host.encode())))
        prev = 0
        for _ in range(160):
            prev = zlib.crc32(prev.to_bytes(4, "little"), base)
            points.append((prev, server))
    points.sort(key=lambda point: point[0])
    key = zlib.crc32(tenant.encode())
    return next((server for hashed, server in points if hashed >= key), points[0][1])


class Process:
    """A child process whose standard error is read line by line as it comes."""

    def __init__(self, argv: list[str], *, env: dict[str, str], name: str) -> None:
        self.name = name
        self.lines: deque[str] = deque(maxlen=LINES_KEPT)  # a tail: a flood cannot grow it
        self._count = 0  # lines read so far, kept or not
        self._changed = threading.Condition()
        self.proc = subprocess.Popen(
            argv,
            cwd=ROOT,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
            start_new_session=True,  # a terminal's Ctrl-C reaches the try-out, which stops us
        )
        self._reader = threading.Thread(target=self._read, name=f"{name} stderr", daemon=True)
        self._reader.start()

    def _read(self) -> None:
        assert self.proc.stderr is not None
        for line in self.proc.stderr:
            with self._changed:
                self.lines.append(line.rstrip("\n"))
                self._count += 1
                self._changed.notify_all()
        self.proc.wait()
        with self._changed:
            self._changed.notify_all()

    def wait_for(self, pattern: str, timeout: float = START_TIMEOUT) -> re.Match[str]:
        """The first line of its standard error matching ``pattern``.

        Raises:
            RuntimeError: the process ended, or ``timeout`` seconds passed, without one.
        """
        deadline = time.monotonic() + timeout
        seen = 0
        with self._changed:
            while True:
                new = min(self._count - seen, len(self.lines))
                for line in list(self.lines)[len(self.lines) - new :]:
                    found = re.search(pattern, line)
                    if found is not None:
                        return found
                seen = self._count
                left = deadline - time.monotonic()
                if self.proc.poll() is not None or left <= 0:
                    said = "\n".join(list(self.lines)[-20:])
                    raise RuntimeError(f"{self.name} did not say {pattern!r}:\n{said}")
                self._changed.wait(left)

    def stop(self, sig: int = signal.SIGTERM, timeout: float = 30.0) -> int:
        """Send ``sig`` (then SIGKILL after ``timeout`` seconds); the exit code."""
        if self.proc.poll() is None:
            self.proc.send_signal(sig)
            try:
                self.proc.wait(timeout)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self._reader.join(5)
        return self.proc.returncode


class Worker:
    """One ``foldkit-agent serve`` worker; :meth:`start` again after it died keeps its port."""

    def __init__(self, index: int, args: list[str], env: dict[str, str]) -> None:
        self.index = index
        self.port = 0
        self._args = args
        self._env = env
        self.process: Process | None = None

    @property
    def address(self) -> str:
        return f"127.0.0.1:{self.port}"

    def start(self) -> None:
        argv = [sys.executable, "-m", "foldkit_agent.cli", "serve", TARGET, *self._args]
        argv += ["--port", str(self.port)]
        self.process = Process(argv, env=self._env, name=f"worker {self.index}")
        found = self.process.wait_for(r"serving MCP at http://127\.0\.0\.1:(\d+)/")
        self.port = int(found.group(1))

    def alive(self) -> bool:
        return self.process is not None and self.process.proc.poll() is None

    def kill(self) -> None:
        """``kill -9``: none of the worker's shutdown runs."""
        assert self.process is not None
        self.process.stop(signal.SIGKILL)

    def stop(self) -> int | None:
        """SIGTERM: the worker drains its calls in flight and exits."""
        return None if self.process is None else self.process.stop(signal.SIGTERM)


class Stack:
    """The running try-out: :meth:`url` of a tenant, its token, the workers and the DSN."""

    def __init__(self, root: Path, dsn: str, tokens: dict[str, str]) -> None:
        self.root = root
        self.dsn = dsn
        self.tokens = tokens
        self.workers: list[Worker] = []
        self.nginx: Process | None = None
        self.port = 0

    def url(self, tenant: str) -> str:
        """Where ``tenant``'s MCP clients connect: ``http://127.0.0.1:PORT/TENANT/mcp``."""
        return f"http://127.0.0.1:{self.port}/{tenant}/mcp"

    def a2a_base(self, tenant: str) -> str:
        """Where ``tenant``'s A2A clients find its card: ``http://127.0.0.1:PORT/TENANT``."""
        return f"http://127.0.0.1:{self.port}/{tenant}"

    def card_url(self, tenant: str) -> str:
        """``tenant``'s agent card (``.../TENANT/.well-known/agent-card.json``); its URLs name
        nginx."""
        return f"{self.a2a_base(tenant)}/.well-known/agent-card.json"

    def worker_at(self, address: str) -> Worker:
        """The worker listening at ``host:port`` (what nginx's ``X-Upstream`` names)."""
        return next(w for w in self.workers if w.address == address)


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _until_listening(port: int, nginx: Process) -> None:
    deadline = time.monotonic() + START_TIMEOUT
    while True:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=1):
                return
        except OSError:
            if nginx.proc.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError("nginx did not start:\n" + "\n".join(nginx.lines)) from None
            time.sleep(0.02)


@contextmanager
def stack(
    tenants: Sequence[str],
    *,
    workers: int = 3,
    port: int = 0,
    tokens: dict[str, str] | None = None,
    dsn: str | None = None,
) -> Iterator[Stack]:
    """Start PostgreSQL, ``workers`` workers and nginx on ``port`` (0: a free one); stop them
    all on exit (workers drained by SIGTERM, nginx by SIGQUIT, the cluster removed).

    Args:
        tenants: the tenants served; each gets a bearer token (``tokens``, else a random one)
            whose subject is the tenant, and only that token is served at its path.
        workers: how many ``foldkit-agent serve`` processes.
        port: nginx's loopback port.
        dsn: a PostgreSQL database to use (else a throwaway cluster is started for it).

    Raises:
        FileNotFoundError: nginx or PostgreSQL is not installed (``make nginx postgres``).
        RuntimeError: a process did not start (its last lines are in the message).
    """
    binary = nginx_binary()
    if binary is None:
        raise FileNotFoundError("nginx is not installed: run `make nginx`")
    given = tokens or {}
    table = {t: given.get(t) or f"{t}-{secrets.token_urlsafe(18)}" for t in tenants}
    with ExitStack() as stack_:
        if dsn is None:
            dsn = stack_.enter_context(stack_.enter_context(cluster()).database())
        root = Path(stack_.enter_context(tempfile.TemporaryDirectory(prefix="foldkit-deploy-")))
        root.chmod(0o755)  # nginx's worker processes (nobody, under root) read their temp dirs
        (root / "tmp").mkdir()
        running = Stack(root, dsn, table)
        running.port = port or _free_port()
        # the agent cards name nginx's origin, where the clients are
        args = ["--mcp", "http", "--a2a", "--tenant-from", "path"]
        # what is available changes with each tenant's Model, and every client hears it
        # (list_changed through nginx) instead of being offered every capability up front
        args += ["--listing", "available"]
        args += ["--base-url", f"http://127.0.0.1:{running.port}"]
        for tenant, token in table.items():
            args += ["--token", f"{token}={tenant}"]
        args += ["--audit", f"postgres:{dsn}", "--audit-durable"]
        args += ["--a2a-task-store", f"postgres:{dsn}"]
        env = {**os.environ, "PYTHONUNBUFFERED": "1", "FOLDKIT_TODO_STORE": f"postgres:{dsn}"}
        env["PYTHONPATH"] = os.pathsep.join(p for p in (str(ROOT), env.get("PYTHONPATH")) if p)
        for index in range(workers):
            worker = Worker(index, args, env)
            running.workers.append(worker)
            stack_.callback(worker.stop)
            worker.start()
        conf = root / "nginx.conf"
        conf.write_text(
            render_nginx(f"127.0.0.1:{running.port}", [w.address for w in running.workers])
        )
        nginx = Process(
            [binary, "-p", f"{root}/", "-c", str(conf), "-e", str(root / "error.log")],
            env=dict(os.environ),
            name="nginx",
        )
        running.nginx = nginx
        stack_.callback(nginx.stop, signal.SIGQUIT)
        _until_listening(running.port, nginx)
        yield running
