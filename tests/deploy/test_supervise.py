"""``python -m deploy``'s supervisor: a worker that cannot restart never stops the stack."""

from __future__ import annotations

from typing import Any, cast

import pytest

from deploy.__main__ import supervise
from deploy.stack import Stack


class _Proc:
    def __init__(self, pid: int) -> None:
        self.pid = pid

    def poll(self) -> int | None:
        return None


class _Process:
    def __init__(self, pid: int) -> None:
        self.proc = _Proc(pid)
        self.lines: list[str] = []


class _Worker:
    """A worker that is down, whose restarts fail ``failures`` times (its port taken)."""

    def __init__(self, index: int, failures: int) -> None:
        self.index = index
        self.address = f"127.0.0.1:{8100 + index}"
        self.up = failures == 0
        self.failures = failures
        self.starts = 0
        self.stops = 0
        self.process: _Process | None = _Process(100 + index) if self.up else None

    def alive(self) -> bool:
        return self.up

    def start(self) -> None:
        self.starts += 1
        if self.starts <= self.failures:
            raise RuntimeError(
                "worker 1 did not say 'serving MCP':\nerror: [Errno 98] address already in use"
            )
        self.up = True
        self.process = _Process(200 + self.index)

    def stop(self) -> None:
        self.stops += 1


class _Stack:
    def __init__(self, workers: list[_Worker]) -> None:
        self.workers = workers
        self.nginx = _Process(1)


def test_f21_a_worker_whose_restart_fails_is_retried_with_backoff_and_the_stack_stays_up(
    capsys: pytest.CaptureFixture[str],
) -> None:
    # issue 21: a restart that failed (its port taken) made the supervisor exit, and the
    # whole try-out (nginx, every worker, PostgreSQL) was torn down with it
    flaky, steady = _Worker(1, failures=3), _Worker(2, failures=0)
    running = _Stack([flaky, steady])
    ticks: list[float] = []

    def sleep(seconds: float) -> None:
        ticks.append(seconds)
        if flaky.up:  # back: the supervisor would go on until Ctrl-C
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        supervise(cast(Stack, cast(Any, running)), interval=0.5, sleep=sleep)
    assert flaky.starts == 4  # three failures, then back
    assert flaky.stops == 3  # each failed start is cleaned up
    assert steady.starts == 0  # the other worker was never touched
    # tries at ticks 1, 3, 6 and 11: 1, 2 then 4 ticks skipped between them
    assert len(ticks) == 12
    err = capsys.readouterr().err.splitlines()
    assert err == [
        "worker 1 did not restart (error: [Errno 98] address already in use); "
        f"trying again in {seconds} s"
        for seconds in ("0.5", "1", "2")
    ]
