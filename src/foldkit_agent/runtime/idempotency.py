"""Idempotency keys: a retried call answers the first call's outcome instead of running again.

The rule is Stripe's. A key names one logical call of one capability by one caller; the step
runs in the pipeline after authorize and before construct (:meth:`Call.run
<foldkit_agent.runtime.pipeline.Call.run>`), only for a call that carries
``Invocation.idempotency_key`` (a call without one reads one attribute and nothing more):

===========================================  ================================================
the key, for this caller and capability      the call
===========================================  ================================================
unused, or expired (:attr:`~IdempotencyKeys.ttl`)  runs, and its outcome is kept under the key
used with the same input, first call done    answers the first call's outcome; nothing runs
used with other input                        refused: ``AgentIdempotencyError`` ``"conflict"``
used, first call still running               refused: ``"in_progress"`` (retry later)
used, first call interrupted after sending   refused: ``"unknown"``; never run again
===========================================  ================================================

"Same input" is the canonical JSON (sorted keys, no spaces) of the *decoded* input, so two
wire forms that decode alike are the same call. "This caller" is the principal when the
runtime has a principal provider, else the invocation's credentials (one token); the key,
the caller and the capability are hashed together, so one caller's key never answers
another's. A first call refused before anything was sent (invalid input, unavailable,
unauthorized, a declined approval) keeps nothing: a retry runs. One whose outcome is unknown
(a timeout or a cancellation after sending) is kept as unknown.

Where keys live: :class:`~foldkit_agent.audit.MemoryKeys` by default (per process; a restart
forgets them), or the audit database (:meth:`SqliteAuditSink.idempotency_keys
<foldkit_agent.audit.SqliteAuditSink.idempotency_keys>`, the PostgreSQL one), shared by every
worker and kept across restarts. With a database, the process running a first call renews a
lease on it every :attr:`~IdempotencyKeys.lease` / 3 seconds; a running record whose lease ran
out belongs to a process that died (``kill -9``, a crash), so its retry answers "unknown".
See ``docs/retries.md``.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import logging
import os
import time
from collections.abc import Callable
from dataclasses import replace
from datetime import timedelta
from typing import TYPE_CHECKING, Any, Final

from pydantic_core import to_jsonable_python

from ..audit.keys import KeyRecord, KeyStore, MemoryKeys, verdict
from ..errors import AgentError, AgentIdempotencyError
from .results import CompletionOutcome, DispatchResult, dispatch_result

if TYPE_CHECKING:
    from .pipeline import Call
    from .plan import Plan

__all__ = [
    "DEFAULT_KEY_TTL",
    "DEFAULT_LEASE",
    "IDEMPOTENCY_HEADER",
    "IDEMPOTENCY_META",
    "MAX_KEY_LENGTH",
    "Held",
    "IdempotencyKeys",
    "key_from",
]

_log = logging.getLogger("foldkit_agent.runtime")

DEFAULT_KEY_TTL: Final = 24 * 3600.0
"""Seconds a key counts after its first call (24 hours, as Stripe keeps them)."""
DEFAULT_LEASE: Final = 10.0
"""Seconds a database record of a running call stays vouched for without a renewal."""
MAX_KEY_LENGTH: Final = 255
"""The longest key accepted, in characters (Stripe's limit)."""
IDEMPOTENCY_META: Final = "io.modelcontextprotocol/idempotencyKey"
"""The MCP ``_meta`` key of a ``tools/call`` that carries one (as SEP-3182 names it)."""
IDEMPOTENCY_HEADER: Final = "Idempotency-Key"
"""The HTTP header of the page surface and Agent Native (the IETF httpapi draft's name)."""

_UNKNOWN: Final = "unknown"
"""The kept outcome of a first call whose outcome is unknown."""
_OWNER: Final = f"{os.getpid()}-{os.urandom(6).hex()}"
"""This process, as the owner of the keys it runs (unique across restarts and hosts)."""


def key_from(value: object) -> str | None:
    """The key a transport read off its wire: ``None`` for none, the string as it is, and
    ``""`` for anything else, so a malformed key is refused (never a call run unprotected).

    Example:
        >>> (key_from(None), key_from("k-1"), key_from(7))
        (None, 'k-1', '')
    """
    if value is None or isinstance(value, str):
        return value
    return ""


def canonical(value: Any) -> str:
    """``value`` (a decoded input: a model, a Message, plain data) as canonical JSON text:
    sorted keys, no spaces, non-ASCII as is."""
    return json.dumps(
        to_jsonable_python(value, fallback=str),
        sort_keys=True,
        separators=(",", ":"),
        ensure_ascii=False,
    )


def _hash(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


class IdempotencyKeys:
    """The runtime's idempotency keys: where they are kept and for how long (module docs).

    Every runtime has one (``AgentRuntime.idempotency``; by default in memory, 24 hours);
    ``serve --audit sqlite:...|postgres:...`` keeps them in the audit database.

    Args:
        store: a :class:`~foldkit_agent.audit.KeyStore`; default a new
            :class:`~foldkit_agent.audit.MemoryKeys` (per process).
        ttl: seconds (or a ``timedelta``) a key counts after its first call; default
            :data:`DEFAULT_KEY_TTL`. A key reused after that runs as a new call.
        lease: seconds a durable store's record of a running call stays vouched for
            without a renewal (renewed every ``lease / 3`` s); default :data:`DEFAULT_LEASE`.
            A retry within it of a call whose process died answers "in progress", after it
            "unknown".
        clock: the time in seconds since the epoch (every worker must read the same clock).
        namespace: hashed into every key, so runtimes sharing one store keep apart (``serve
            --tenant-from`` gives each tenant its own).

    Raises:
        ValueError: ``ttl`` or ``lease`` is not a positive number of seconds.

    Example:
        >>> rt.idempotency = IdempotencyKeys(SqliteAuditSink("audit.db").idempotency_keys())
        >>> inv = Invocation(idempotency_key="7f9c0b6e-order-1")
        >>> await rt.messages.dispatch("create_todo", {"title": "Milk"}, inv)  # runs
        >>> await rt.messages.dispatch("create_todo", {"title": "Milk"}, inv)  # its answer
    """

    def __init__(
        self,
        store: KeyStore | None = None,
        *,
        ttl: float | timedelta = DEFAULT_KEY_TTL,
        lease: float = DEFAULT_LEASE,
        clock: Callable[[], float] = time.time,
        namespace: str = "",
    ) -> None:
        seconds = ttl.total_seconds() if isinstance(ttl, timedelta) else ttl
        if not seconds > 0 or not lease > 0:
            raise ValueError("ttl and lease take a positive number of seconds")
        self.store: KeyStore = MemoryKeys() if store is None else store
        self.ttl = float(seconds)
        self.lease = float(lease)
        self.clock = clock
        self.namespace = namespace
        self.running: set[str] = set()
        """The scoped keys this process runs in a durable store (their lease is renewed)."""
        self._renewer: asyncio.Task[None] | None = None

    async def claim(self, call: Call, plan: Plan, decoded: Any, key: str) -> Held | DispatchResult:
        """Take ``key`` for ``call`` (decoded, authorized, nothing sent yet).

        Returns:
            A :class:`Held` the call ends with (:meth:`Held.end`), or the first call's
            :class:`~foldkit_agent.runtime.DispatchResult` (the call answers it, runs nothing).

        Raises:
            AgentIdempotencyError: ``"invalid"`` (not 1 to 255 characters), ``"conflict"``,
                ``"in_progress"`` or ``"unknown"``; nothing was sent.
        """
        rt = call.rt
        if plan.principal is None and rt.principal_provider is not None:
            await call.principal_for_record()  # the key is the caller's: know who calls
        if not 0 < len(key) <= MAX_KEY_LENGTH:
            raise AgentIdempotencyError(capability=plan.name, reason="invalid")
        who = call.principal if rt.principal_provider is not None else call.invocation.credentials
        scoped = _hash(canonical([self.namespace, who, plan.name, key]))
        fingerprint = _hash(canonical(decoded))
        now = self.clock()
        record = KeyRecord(fingerprint, "running", _OWNER, now + self.lease, now + self.ttl)
        store = self.store
        if store.durable:
            held = await asyncio.to_thread(store.claim, scoped, plan.name, record, now)
        else:
            held = store.claim(scoped, plan.name, record, now)
        if held is None:
            if store.durable:
                self._hold(scoped)
            return Held(self, scoped)
        seen = verdict(held, fingerprint, now)
        if seen == "replay" and held.outcome != _UNKNOWN:
            return self._replayed(call, plan, held.outcome)
        reason = {"conflict": "conflict", "running": "in_progress"}.get(seen, "unknown")
        raise AgentIdempotencyError(capability=plan.name, reason=reason)

    async def replay(self, call: Call, plan: Plan, key: str) -> DispatchResult | None:
        """The answer to a retry of a capability that is no longer available: its key's first
        call's result when that call finished with the same input, else ``None`` and the
        refusal stands (a key it took is let go at once, nothing having been sent).

        The first call may itself be what made the capability go away (``clear_selection``
        clears what makes it available), and its answer may be what the caller lost.
        """
        try:
            got = await self.claim(call, plan, plan.decode(plan.name, call.payload), key)
        except AgentError:
            return None
        if isinstance(got, Held):
            await got.end(call, None)
            return None
        return got

    def _replayed(self, call: Call, plan: Plan, kept: Any) -> DispatchResult:
        """The first call's result, from what :meth:`Held.end` kept of it."""
        if isinstance(kept, DispatchResult):
            return kept
        first = replace(call.invocation, id=kept["invocation_id"])
        message = plan.cap.message.model_validate(_fields(kept["message"]))
        done = kept["completion"]
        if done is None:
            return dispatch_result(plan.name, plan.tag, message, first, None)
        result = done["result"]
        built = None
        if result is not None:
            completion: Any = plan.completion
            by_tag = {c.tag(): c for c in (completion.success, completion.failure) if c}
            built = by_tag[result["_tag"]].model_validate(_fields(result))
        outcome = CompletionOutcome(done["status"], built)
        return dispatch_result(plan.name, plan.tag, message, first, outcome)

    # -- the lease of running calls in a durable store -----------------------------------

    def _hold(self, scoped: str) -> None:
        self.running.add(scoped)
        renewer = self._renewer
        if renewer is None or renewer.done():
            self._renewer = asyncio.get_running_loop().create_task(self._renew())

    async def _renew(self) -> None:
        """Every ``lease / 3`` seconds while this process runs keyed calls: extend their lease."""
        while self.running:
            await asyncio.sleep(self.lease / 3)
            if not self.running:
                return
            try:
                await asyncio.to_thread(self.store.renew, _OWNER, self.clock() + self.lease)
            except Exception:  # the next renewal tries again; a lapsed lease reads "unknown"
                _log.warning("renewing the idempotency keys' lease failed", exc_info=True)


class Held:
    """A key taken by a call: :meth:`end` keeps its outcome or lets the key go."""

    __slots__ = ("keys", "scoped")

    def __init__(self, keys: IdempotencyKeys, scoped: str) -> None:
        self.keys = keys
        self.scoped = scoped

    async def end(self, call: Call, result: DispatchResult | None) -> None:
        """Keep ``result`` under the key; without one, keep "unknown" when the Message was
        sent (``call.host_called``), else let the key go (a retry may run). A store that
        fails is logged: the call's own answer stands."""
        keys = self.keys
        store = keys.store
        scoped = self.scoped
        now = keys.clock()
        try:
            if result is None and not call.host_called:
                if store.durable:
                    await asyncio.shield(asyncio.to_thread(store.release, scoped, _OWNER))
                else:
                    store.release(scoped, _OWNER)
                return
            if not store.durable:
                store.finish(scoped, _OWNER, _UNKNOWN if result is None else result, now + keys.ttl)
                return
            kept = _UNKNOWN if result is None else _kept(result)
            await asyncio.shield(
                asyncio.to_thread(store.finish, scoped, _OWNER, kept, now + keys.ttl)
            )
        except Exception:
            _log.warning("keeping the outcome of an idempotency key failed", exc_info=True)
        finally:
            keys.running.discard(scoped)


def _kept(result: DispatchResult) -> dict[str, Any]:
    """``result`` as JSON data a durable store keeps (:meth:`IdempotencyKeys._replayed`
    makes it a result again)."""
    done = result.completion
    return {
        "invocation_id": result.invocation.id,
        "message": result.message.encode(),
        "completion": None
        if done is None
        else {
            "status": done.status,
            "result": None if done.message is None else done.message.encode(),
        },
    }


def _fields(encoded: dict[str, Any]) -> dict[str, Any]:
    """An encoded Message's fields, without its ``_tag``."""
    return {k: v for k, v in encoded.items() if k != "_tag"}
