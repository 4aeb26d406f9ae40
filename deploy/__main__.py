"""``python -m deploy``: try the deployment on one machine, until Ctrl-C.

    .venv/bin/python -m deploy [--workers 3] [--port 8000] [--tenant NAME ...]

Starts a throwaway PostgreSQL cluster, the workers and nginx (:func:`deploy.stack.stack`),
prints each tenant's MCP URL, A2A card URL and bearer token, and restarts a worker that dies
(on its own port, so nginx's ring is unchanged; one that cannot restart is tried again, with
backoff, while the rest of the stack keeps serving). Ctrl-C (or SIGTERM) stops nginx, drains
the workers and removes the cluster: nothing is left running or on disk.
"""

from __future__ import annotations

import argparse
import signal
import sys
import time
from collections.abc import Callable
from types import FrameType

try:
    import psycopg  # noqa: F401  # deploy/postgres.py opens the cluster's database with it

    from .stack import Stack, owner, stack
except ModuleNotFoundError as missing:  # outside the project's .venv: one line, no traceback
    sys.exit(
        f"python -m deploy needs the Python package {missing.name!r}, which this Python lacks: "
        "run it with the project's .venv (`make install`, then `.venv/bin/python -m deploy`)"
    )

DEFAULT_TENANTS = ("acme", "globex", "initech")


def uri(dsn: str) -> str:
    """``dsn`` (libpq ``key=value`` words) as one ``postgresql://`` URI, which ``psql`` and
    every libpq client take as a single argument (a socket folder goes in ``?host=``).

    Example:
        >>> uri("host=/tmp/pg port=5432 user=postgres dbname=t_1")
        'postgresql://postgres@/t_1?host=%2Ftmp%2Fpg&port=5432'
    """
    from urllib.parse import quote, urlencode

    from psycopg.conninfo import conninfo_to_dict

    parts = {k: str(v) for k, v in conninfo_to_dict(dsn).items()}
    user = quote(parts.pop("user", ""), safe="")
    dbname = quote(parts.pop("dbname", ""), safe="")
    query = urlencode(parts, quote_via=quote, safe="")
    return f"postgresql://{user}{'@' if user else ''}/{dbname}" + (f"?{query}" if query else "")


def _interrupt(signum: int, frame: FrameType | None) -> None:
    raise KeyboardInterrupt


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m deploy", description=__doc__)
    parser.add_argument("--workers", type=int, default=3, help="foldkit-agent serve workers")
    parser.add_argument("--port", type=int, default=8000, help="nginx's port on 127.0.0.1")
    parser.add_argument(
        "--tenant", action="append", help="a tenant to serve (repeatable; default: "
        + ", ".join(DEFAULT_TENANTS) + ")",
    )  # fmt: skip
    args = parser.parse_args(argv)
    if args.workers < 1:
        parser.error("--workers must be at least 1")
    tenants = tuple(args.tenant or DEFAULT_TENANTS)
    signal.signal(signal.SIGTERM, _interrupt)
    print("starting PostgreSQL, the workers and nginx ...", flush=True)
    try:
        with stack(tenants, workers=args.workers, port=args.port) as running:
            ring = [w.address for w in running.workers]
            print(f"PostgreSQL (todos, audit and A2A tasks): psql '{uri(running.dsn)}'")
            for worker in running.workers:
                held = [t for t in tenants if owner(t, ring) == worker.address]
                pid = worker.process.proc.pid if worker.process is not None else "-"
                print(
                    f"worker {worker.index}: {worker.address} (pid {pid}), "
                    f"tenants {', '.join(held) or '-'}"
                )
            print(f"nginx: http://127.0.0.1:{running.port} (files in {running.root})")
            for tenant in tenants:
                print(
                    f"tenant {tenant}: MCP {running.url(tenant)} A2A card "
                    f"{running.card_url(tenant)} token {running.tokens[tenant]}"
                )
            print("ready; Ctrl-C stops everything", flush=True)
            try:
                code = supervise(running)
            except KeyboardInterrupt:
                code = 0
            # a second Ctrl-C must not cut the clean-up short
            signal.signal(signal.SIGINT, signal.SIG_IGN)
            signal.signal(signal.SIGTERM, signal.SIG_IGN)
    except KeyboardInterrupt:  # while starting
        code = 0
    except (FileNotFoundError, RuntimeError) as err:
        print(f"error: {err}", file=sys.stderr)
        return 1
    print("stopped: nginx, the workers and PostgreSQL; their files are removed", flush=True)
    return code


RESTART_BACKOFF_MAX = 60
"""The most supervisor ticks (of ``interval`` seconds) between two tries to restart a worker."""


def supervise(
    running: Stack, *, interval: float = 0.5, sleep: Callable[[float], None] = time.sleep
) -> int:
    """Restart a worker that exits; return 1 if nginx exits (until KeyboardInterrupt).

    A worker that cannot restart (its port taken, say) is reported in one line and tried again
    after 1, 2, 4 ... ticks (at most :data:`RESTART_BACKOFF_MAX`); nginx, the other workers
    and PostgreSQL stay up meanwhile: only Ctrl-C or SIGTERM stops the stack.
    """
    assert running.nginx is not None
    backoff: dict[int, int] = {}  # worker index: ticks to the next try, doubled on each failure
    wait: dict[int, int] = {}
    while True:
        sleep(interval)
        if running.nginx.proc.poll() is not None:
            print("nginx exited:\n" + "\n".join(running.nginx.lines), file=sys.stderr)
            return 1
        for worker in running.workers:
            if worker.alive():
                continue
            if wait.get(worker.index, 0) > 0:
                wait[worker.index] -= 1
                continue
            print(f"worker {worker.index} exited; restarting it", flush=True)
            try:
                worker.start()
            except (RuntimeError, OSError) as err:
                worker.stop()  # a half-started worker that never said it serves
                ticks = backoff[worker.index] = min(
                    2 * backoff.get(worker.index, 0) or 1, RESTART_BACKOFF_MAX
                )
                wait[worker.index] = ticks
                said = str(err).splitlines()[-1] if str(err) else type(err).__name__
                print(
                    f"worker {worker.index} did not restart ({said}); "
                    f"trying again in {ticks * interval:g} s",
                    file=sys.stderr,
                    flush=True,
                )
                continue
            backoff.pop(worker.index, None)
            pid = worker.process.proc.pid if worker.process is not None else "-"
            print(f"worker {worker.index} is back on {worker.address} (pid {pid})", flush=True)


if __name__ == "__main__":
    sys.exit(main())
