"""The database sinks under test: every shared behaviour runs on SQLite and on PostgreSQL."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.support.audit_stores import Database, postgres_database, sqlite_database


@pytest.fixture(params=["sqlite", "postgres"])
def database(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Database]:
    if request.param == "sqlite":
        yield sqlite_database(tmp_path / "audit.db")
        return
    cluster: Any = request.getfixturevalue("postgres_cluster")
    with cluster.database() as dsn:
        yield postgres_database(dsn)
