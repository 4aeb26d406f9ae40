"""A throwaway PostgreSQL cluster, from Debian's ``postgresql`` package: what the try-out of
``python -m deploy`` and the tests run on.

``make postgres`` (part of ``make test``) installs the package when it is missing. The cluster
lives in a fresh temporary directory, listens only on a Unix socket inside it (no port is
taken, no other PostgreSQL on the machine is touched) and is removed when the context ends
(the try-out's Ctrl-C, the test session's end). ``initdb`` refuses to run as root, so as root
(CI) every server command runs as the package's ``postgres`` user through ``runuser``; as
anyone else, as that user.
"""

from __future__ import annotations

import glob
import os
import pwd
import shutil
import subprocess
import tempfile
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

PORT = 5432  # only names the socket file inside the cluster's own directory


def server_bin() -> Path | None:
    """The newest ``/usr/lib/postgresql/<version>/bin`` holding ``initdb``, or ``None``."""
    found = sorted(
        glob.glob("/usr/lib/postgresql/*/bin/initdb"),
        key=lambda p: int(Path(p).parent.parent.name),
    )
    return Path(found[-1]).parent if found else None


@dataclass(frozen=True)
class Cluster:
    """A running cluster: connect with :meth:`dsn`, make a database with :meth:`database`."""

    root: Path
    bin: Path
    run_as: str | None

    @property
    def socket_dir(self) -> Path:
        return self.root / "socket"

    def dsn(self, dbname: str = "postgres") -> str:
        return f"host={self.socket_dir} port={PORT} user=postgres dbname={dbname}"

    @contextmanager
    def database(self) -> Iterator[str]:
        """A new empty database for one test; yields its DSN and drops it afterwards."""
        import psycopg

        name = f"t_{uuid.uuid4().hex[:12]}"
        with psycopg.connect(self.dsn(), autocommit=True) as admin:
            admin.execute(f"CREATE DATABASE {name}")  # pyright: ignore[reportArgumentType]
        try:
            yield self.dsn(name)
        finally:
            with psycopg.connect(self.dsn(), autocommit=True) as admin:
                admin.execute(f"DROP DATABASE {name} WITH (FORCE)")  # pyright: ignore[reportArgumentType]

    def run(self, tool: str, *args: str) -> subprocess.CompletedProcess[str]:
        command = [str(self.bin / tool), *args]
        if self.run_as is not None:
            command = ["runuser", "-u", self.run_as, "--", *command]
        return subprocess.run(command, capture_output=True, text=True, check=False, timeout=120)


@contextmanager
def cluster() -> Iterator[Cluster]:
    """Start a cluster for as long as the context lasts.

    Raises:
        FileNotFoundError: PostgreSQL's server binaries are not installed (``make postgres``).
        RuntimeError: ``initdb`` or the server failed (their output is in the message).
    """
    bin_dir = server_bin()
    if bin_dir is None:
        raise FileNotFoundError("PostgreSQL is not installed: run `make postgres`")
    run_as: str | None = None
    root = Path(tempfile.mkdtemp(prefix="foldkit-pg-"))
    if os.geteuid() == 0:
        run_as = "postgres"
        user = pwd.getpwnam(run_as)
        os.chown(root, user.pw_uid, user.pw_gid)
    made = Cluster(root, bin_dir, run_as)
    data = root / "data"
    try:
        init = made.run(
            "initdb", "-D", str(data), "-U", "postgres", "-A", "trust", "-E", "UTF8",
            "--locale=C", "--no-sync",
        )  # fmt: skip
        if init.returncode != 0:
            raise RuntimeError(f"initdb failed: {init.stdout}{init.stderr}")
        made.socket_dir.mkdir()
        if run_as is not None:
            user = pwd.getpwnam(run_as)
            os.chown(made.socket_dir, user.pw_uid, user.pw_gid)
        options = f"-k {made.socket_dir} -p {PORT} -c listen_addresses='' -c max_connections=200"
        log_file = root / "server.log"
        started = made.run(
            "pg_ctl", "-D", str(data), "-l", str(log_file), "-o", options, "-w", "start"
        )
        if started.returncode != 0:
            log = log_file.read_text() if log_file.exists() else ""
            raise RuntimeError(f"PostgreSQL did not start: {started.stdout}{started.stderr}{log}")
        try:
            yield made
        finally:
            made.run("pg_ctl", "-D", str(data), "-m", "immediate", "-w", "stop")
    finally:
        shutil.rmtree(root, ignore_errors=True)
