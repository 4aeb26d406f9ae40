"""A process under load that prints each invocation id as its answer is released.

    python -m tests.support.crash_child sqlite|postgres TARGET durable|plain [WORKERS]

``WORKERS`` tasks call the audit toy app's ``increment`` in a loop (every fifth call with an
invalid input, so refusals are answered too), through a real ``AuditLog`` and a SQLite or
PostgreSQL sink. Each id is written to stdout with one ``os.write`` right after ``dispatch``
returned or raised, so an id in the pipe is a call that was answered. Prints ``ready`` first.
The parent kills it with SIGKILL and checks the store (tests/audit/test_crash.py).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import sys

from foldkit_agent import (
    AgentError,
    AuditLog,
    Invocation,
    PostgresAuditSink,
    SqliteAuditSink,
)
from tests.support.audit_app import bind


async def main(kind: str, target: str, durable: bool, workers: int) -> None:
    sink = (
        SqliteAuditSink(target, durable=durable)
        if kind == "sqlite"
        else PostgresAuditSink(target, durable=durable)
    )
    audit = AuditLog(sink=sink, include_input=True)
    _host, rt = bind(audit)
    out = sys.stdout.fileno()

    async def worker(w: int) -> None:
        n = 0
        while True:
            inv = Invocation(id=f"w{w}-{n}")
            payload = {"by": "x"} if n % 5 == 4 else {"by": 1}
            with contextlib.suppress(AgentError):
                await rt.messages.dispatch("increment", payload, inv)
            os.write(out, f"{inv.id}\n".encode())
            n += 1

    os.write(out, b"ready\n")
    await asyncio.gather(*(worker(w) for w in range(workers)))


if __name__ == "__main__":
    workers = int(sys.argv[4]) if len(sys.argv) > 4 else 32
    asyncio.run(main(sys.argv[1], sys.argv[2], sys.argv[3] == "durable", workers))
