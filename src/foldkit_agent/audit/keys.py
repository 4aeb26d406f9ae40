"""Where idempotency keys are kept: in this process's memory, or in the audit's database.

A key record says, for one scoped key (the caller, the capability and the caller's key,
hashed by :mod:`foldkit_agent.runtime.idempotency`), which input first used it (its
fingerprint), whether that call is still ``"running"`` or ``"done"`` (and then its outcome),
which process runs it (``owner``), until when that process vouches it is alive
(``lease_until``) and when the record expires (``expires_at``; both in seconds since the
epoch, so every worker on one clock reads them alike).

:func:`verdict` is the one rule for what a record means to a new call with the key; the
stores only keep records. :class:`MemoryKeys` holds them for one process (a restart forgets
them); :class:`SqlKeys` holds them in the ``idempotency_keys`` table of the audit database
(:class:`~foldkit_agent.audit.SqliteAuditSink` or
:class:`~foldkit_agent.audit.PostgresAuditSink` create it with the audit table), so every
worker sharing the database, and every later process, sees them. A claim is one atomic
``INSERT ... ON CONFLICT DO NOTHING``, so two workers racing for one key never both run it.
"""

from __future__ import annotations

import json
import threading
from collections import OrderedDict
from collections.abc import Callable
from contextlib import suppress
from dataclasses import dataclass, replace
from typing import Any, Literal, LiteralString, Protocol, cast

__all__ = ["KeyRecord", "KeyStore", "MemoryKeys", "SqlKeys", "Verdict", "verdict"]

Verdict = Literal["new", "conflict", "replay", "running", "lost"]
"""What a key's record means to a new call with it (see :func:`verdict`)."""


@dataclass(frozen=True, slots=True)
class KeyRecord:
    """One scoped idempotency key, as a store keeps it (module docs).

    Attributes:
        fingerprint: the hash of the first call's decoded input.
        state: ``"running"`` or ``"done"``.
        owner: the process that runs (or ran) the first call.
        lease_until: until when (epoch seconds) ``owner`` vouches that a running call is alive.
        expires_at: when (epoch seconds) the record stops counting.
        outcome: once done, the first call's outcome as the runtime stored it (``None``
            while running).
    """

    fingerprint: str
    state: Literal["running", "done"]
    owner: str
    lease_until: float
    expires_at: float
    outcome: Any = None


def verdict(record: KeyRecord | None, fingerprint: str, now: float) -> Verdict:
    """What ``record`` means to a call with input ``fingerprint`` at ``now``.

    ``"new"`` (no record, or an expired one: the call runs), ``"conflict"`` (the key was
    first used with other input), ``"replay"`` (the first call is done: its outcome answers),
    ``"running"`` (it is in progress, its owner's lease holds) or ``"lost"`` (it was running
    when its owner stopped renewing the lease: crashed or killed, so its outcome is unknown).

    Example:
        >>> verdict(KeyRecord("a", "done", "p", 0.0, 10.0, {}), "b", 5.0)
        'conflict'
    """
    if record is None or record.expires_at <= now:
        return "new"
    if record.fingerprint != fingerprint:
        return "conflict"
    if record.state == "done":
        return "replay"
    return "running" if record.lease_until > now else "lost"


class KeyStore(Protocol):
    """What :class:`~foldkit_agent.runtime.IdempotencyKeys` asks of a store.

    Attributes:
        durable: the records outlive the process (the outcome is stored as JSON data).
    """

    durable: bool

    def claim(self, key: str, capability: str, record: KeyRecord, now: float) -> KeyRecord | None:
        """Take ``key`` with ``record`` (a running one) unless a live record holds it:
        ``None`` when taken, else the record that holds it (expired ones are replaced)."""
        ...

    def finish(self, key: str, owner: str, outcome: Any, expires_at: float) -> None:
        """Mark ``owner``'s running ``key`` done with ``outcome``."""
        ...

    def release(self, key: str, owner: str) -> None:
        """Drop ``owner``'s running ``key`` (nothing was sent: a retry may run)."""
        ...

    def renew(self, owner: str, lease_until: float) -> None:
        """Extend the lease of every running key of ``owner``."""
        ...


class MemoryKeys:
    """Keys in this process's memory: per worker, forgotten on restart.

    Bounded: past ``capacity`` records the oldest is dropped (a retry of its call then runs
    again), and expired ones are dropped as new keys arrive.

    Args:
        capacity: the most records kept (default 10,000).
    """

    durable = False

    def __init__(self, capacity: int = 10_000) -> None:
        if capacity < 1:
            raise ValueError("capacity must be at least 1")
        self.capacity = capacity
        self._records: OrderedDict[str, KeyRecord] = OrderedDict()

    def __len__(self) -> int:
        return len(self._records)

    def claim(self, key: str, capability: str, record: KeyRecord, now: float) -> KeyRecord | None:
        records = self._records
        held = records.get(key)
        if held is not None and held.expires_at > now:
            return held
        while records:  # records are in claim order, so the expired ones are first
            first = next(iter(records.values()))
            if first.expires_at > now and len(records) < self.capacity:
                break
            records.popitem(last=False)
        records[key] = record
        return None

    def finish(self, key: str, owner: str, outcome: Any, expires_at: float) -> None:
        held = self._records.get(key)
        if held is not None and held.owner == owner and held.state == "running":
            self._records[key] = replace(held, state="done", outcome=outcome)

    def release(self, key: str, owner: str) -> None:
        held = self._records.get(key)
        if held is not None and held.owner == owner and held.state == "running":
            del self._records[key]

    def renew(self, owner: str, lease_until: float) -> None:
        """Nothing to do: a record in memory lives and dies with the process that runs it."""


_TABLE = "idempotency_keys"
_COLUMNS = "fingerprint, state, owner, lease_until, expires_at, outcome"


class SqlKeys:
    """Keys in the ``idempotency_keys`` table of an audit database, shared by every worker.

    Made by ``SqliteAuditSink.idempotency_keys()`` or ``PostgresAuditSink.idempotency_keys()``.
    One connection of its own,
    in autocommit mode (each statement is atomic), used by one thread at a time; a connection
    that failed is replaced on the next use. The outcome (JSON data) is stored as JSON text.

    Args:
        connect: makes a new connection (``sqlite3`` or psycopg 3).
        placeholder: the driver's parameter marker (``"?"`` or ``"%s"``).
    """

    durable = True

    def __init__(self, connect: Callable[[], Any], placeholder: str) -> None:
        self._connect = connect
        self._conn: Any = None
        self._lock = threading.Lock()
        p = placeholder
        self._insert = (
            f"INSERT INTO {_TABLE} (key, capability, {_COLUMNS}) "
            f"VALUES ({p}, {p}, {p}, {p}, {p}, {p}, {p}, {p}) ON CONFLICT (key) DO NOTHING"
        )
        self._select = f"SELECT {_COLUMNS} FROM {_TABLE} WHERE key = {p}"
        self._replace = (
            f"UPDATE {_TABLE} SET capability = {p}, fingerprint = {p}, state = {p}, "
            f"owner = {p}, lease_until = {p}, expires_at = {p}, outcome = {p} "
            f"WHERE key = {p} AND expires_at <= {p}"
        )
        self._purge = f"DELETE FROM {_TABLE} WHERE expires_at <= {p}"
        self._finish = (
            f"UPDATE {_TABLE} SET state = 'done', outcome = {p}, expires_at = {p} "
            f"WHERE key = {p} AND owner = {p} AND state = 'running'"
        )
        self._release = (
            f"DELETE FROM {_TABLE} WHERE key = {p} AND owner = {p} AND state = 'running'"
        )
        self._renew = (
            f"UPDATE {_TABLE} SET lease_until = {p} WHERE owner = {p} AND state = 'running'"
        )

    def _run(self, sql: str, args: tuple[Any, ...]) -> Any:
        """Run one statement on the connection (made again when the last one failed)."""
        with self._lock:
            if self._conn is None:
                self._conn = self._connect()
            try:
                return self._conn.execute(cast(LiteralString, sql), args)  # constants only
            except Exception:
                conn, self._conn = self._conn, None
                with suppress(Exception):
                    conn.close()
                raise

    def claim(self, key: str, capability: str, record: KeyRecord, now: float) -> KeyRecord | None:
        row = (
            record.fingerprint,
            record.state,
            record.owner,
            record.lease_until,
            record.expires_at,
            None,
        )
        self._run(self._purge, (now,))
        for _ in range(3):  # a record that expires or goes between the statements: try again
            if self._run(self._insert, (key, capability, *row)).rowcount == 1:
                return None
            found = self._run(self._select, (key,)).fetchone()
            if found is None:
                continue
            fingerprint, state, owner, lease_until, expires_at, outcome = found
            held = KeyRecord(
                fingerprint,
                state,
                owner,
                float(lease_until),
                float(expires_at),
                None if outcome is None else json.loads(outcome),
            )
            if held.expires_at > now:
                return held
            if self._run(self._replace, (capability, *row, key, now)).rowcount == 1:
                return None
        raise RuntimeError("the idempotency key could not be claimed")

    def finish(self, key: str, owner: str, outcome: Any, expires_at: float) -> None:
        self._run(self._finish, (json.dumps(outcome, ensure_ascii=False), expires_at, key, owner))

    def release(self, key: str, owner: str) -> None:
        self._run(self._release, (key, owner))

    def renew(self, owner: str, lease_until: float) -> None:
        self._run(self._renew, (lease_until, owner))

    def close(self) -> None:
        """Close the connection (a later use opens a new one)."""
        with self._lock:
            conn, self._conn = self._conn, None
            if conn is not None:
                conn.close()
