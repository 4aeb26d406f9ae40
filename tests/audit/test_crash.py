"""``kill -9`` under load: with ``durable=True`` no answered call is missing from the audit.

A real child process (tests/support/crash_child.py) answers calls from 32 concurrent tasks
and prints each invocation id once its answer is released; the parent lets it run to a
different point in each run, kills it with SIGKILL, reads every id that reached the pipe and
looks each one up in the SQLite file or the PostgreSQL table. Issue 15 found up to 11 of
~8,000 answered calls missing this way without ``durable``.
"""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.audit_stores import Database
from tests.support.paths import ROOT

WAIT = 30.0


def _answered_until_killed(database: Database, answers_before_kill: int) -> list[str]:
    """Run the child, SIGKILL it once it has answered that many calls; every id it printed."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), str(ROOT / "src")])}
    child = subprocess.Popen(
        [sys.executable, "-m", "tests.support.crash_child", database.kind, database.target,
         "durable"],
        stdout=subprocess.PIPE,
        cwd=ROOT,
        env=env,
    )  # fmt: skip
    assert child.stdout is not None
    try:
        assert child.stdout.readline() == b"ready\n"
        answered: list[str] = []
        while len(answered) < answers_before_kill:
            line = child.stdout.readline()
            assert line.endswith(b"\n"), "the child stopped before it was killed"
            answered.append(line.decode().strip())
        child.send_signal(signal.SIGKILL)
        rest = child.stdout.read()  # what it printed before it died
        child.wait(WAIT)
    finally:
        if child.poll() is None:
            child.kill()
            child.wait(WAIT)
    assert child.returncode == -signal.SIGKILL
    lines = rest.decode(errors="replace").split("\n")
    return answered + [line for line in lines[:-1]]  # a torn last line was never a whole id


@pytest.mark.parametrize("run", range(3))
def test_kill_9_under_load_leaves_no_answered_call_unaudited(database: Database, run: int) -> None:
    answered = _answered_until_killed(database, answers_before_kill=400 + 900 * run)
    stored = {e.invocation_id: e for e in database.make().query()}
    missing = [i for i in answered if i not in stored]
    assert missing == [], f"{len(missing)} of {len(answered)} answered calls are not in the audit"
    assert len(answered) >= 400 + 900 * run
    refused = [i for i in answered if i.endswith(("-4", "-9"))]
    assert refused  # refusals were answered and audited too
    assert {stored[i].decision for i in refused} == {"refused"}
    if database.kind == "sqlite":
        conn = sqlite3.connect(Path(database.target))
        try:
            assert conn.execute("PRAGMA integrity_check").fetchall() == [("ok",)]
        finally:
            conn.close()
