"""Shared test configuration: asyncio through anyio's pytest plugin, and shared options."""

from __future__ import annotations

import inspect
import os
from typing import Any

import pytest


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--soak-seconds",
        type=float,
        default=5.0,
        help="how long the load/soak tests run (make soak uses 60)",
    )


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "soak: load and soak tests, bounded in time")


@pytest.hookimpl(tryfirst=True)
def pytest_pycollect_makeitem(collector: pytest.Collector, name: str, obj: object) -> None:
    """Mark every ``async def`` test for anyio (before parametrization sees it)."""
    if inspect.iscoroutinefunction(obj) and collector.istestfunction(obj, name):  # type: ignore[attr-defined]
        pytest.mark.anyio(obj)


NO_SKIP = os.environ.get("FOLDKIT_NO_SKIP") == "1"
"""Set by ``make test`` (and so CI): a skipped test fails, since every peer is installed."""


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Any:
    outcome = yield
    report: pytest.TestReport = outcome.get_result()
    if NO_SKIP and report.skipped and not hasattr(report, "wasxfail"):
        reason = report.longrepr[-1] if isinstance(report.longrepr, tuple) else report.longrepr
        report.outcome = "failed"
        report.longrepr = f"skipped ({reason}), but `make test` allows no skips: install the peer"


@pytest.fixture(scope="session")
def postgres_cluster() -> Any:
    """A throwaway PostgreSQL cluster for the session (tests/support/postgres.py)."""
    from tests.support.postgres import cluster, server_bin

    if server_bin() is None:
        pytest.skip("PostgreSQL is not installed: run `make postgres`")
    with cluster() as running:
        yield running


@pytest.fixture
def postgres_dsn(postgres_cluster: Any) -> Any:
    """The DSN of a fresh, empty database on the session's cluster, dropped afterwards."""
    with postgres_cluster.database() as dsn:
        yield dsn


@pytest.fixture(params=["sqlite", "postgres"])
def todo_store(request: pytest.FixtureRequest, tmp_path: Any) -> Any:
    """Where the todo example saves (what FOLDKIT_TODO_STORE takes): a SQLite file, or a
    fresh PostgreSQL database on the session's cluster as ``postgres:DSN``."""
    if request.param == "sqlite":
        yield str(tmp_path / "todos.db")
        return
    cluster: Any = request.getfixturevalue("postgres_cluster")
    with cluster.database() as dsn:
        yield f"postgres:{dsn}"


@pytest.fixture(params=["sqlite", "postgres"])
def a2a_task_store(request: pytest.FixtureRequest, tmp_path: Any) -> Any:
    """An A2A task store spec (what ``serve --a2a-task-store`` and ``SqlTaskStore`` take): a
    SQLite file, or a fresh PostgreSQL database on the session's cluster as ``postgres:DSN``."""
    if request.param == "sqlite":
        yield f"sqlite:///{tmp_path / 'tasks.db'}"
        return
    cluster: Any = request.getfixturevalue("postgres_cluster")
    with cluster.database() as dsn:
        yield f"postgres:{dsn}"


@pytest.fixture(scope="session")
def issuer() -> Any:
    """A real authorization server (Canaille) on loopback for the session, issuing tokens for
    the resource ``http://127.0.0.1:<port>/mcp`` (tests/support/issuer.py; the port is free
    for the test that serves the resource on it)."""
    from tests.support.issuer import running_issuer
    from tests.support.mcp_helpers import free_port

    with running_issuer(f"http://127.0.0.1:{free_port()}/mcp") as running:
        yield running
