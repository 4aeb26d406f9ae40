"""The throwaway PostgreSQL cluster of the tests: the one ``deploy/`` starts for a try-out
(``deploy/postgres.py``), so the tests and the try-out run PostgreSQL the same way."""

from __future__ import annotations

from deploy.postgres import PORT, Cluster, cluster, server_bin

__all__ = ["PORT", "Cluster", "cluster", "server_bin"]
