"""Shared test configuration: asyncio through anyio's pytest plugin, and shared options."""

from __future__ import annotations

import inspect

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
