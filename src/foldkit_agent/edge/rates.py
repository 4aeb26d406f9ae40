"""Rate limits: how often one caller may call, per server and per capability.

Two limits, each counted with the ``limits`` library (a moving window, so a caller is never
let through twice its rate across a window's edge):

* **per caller** (``RateLimits(per_caller="100/minute")``, ``serve --rate-limit``): every
  request one caller makes to an HTTP adapter (MCP, A2A, the page, Agent Native), checked by
  the edge guard right after step 3 (the caller is known, no byte of the body is read): past
  it, HTTP 429 with ``Retry-After`` in the route's error shape;
* **per capability** (``agent.variant(..., rate="10/minute")``, in the manifest as ``rate``):
  the calls of that capability one caller may start, on every transport (in-process toolsets
  and stdio included), checked in :meth:`~.calls.CallsInFlight.run` before the call starts:
  past it, the call is refused unstarted, saying in how many seconds to retry (an MCP
  ``isError`` result, an A2A ``REJECTED`` task, the framework's tool error).

Both are audited as ``refused`` decisions (outcome ``AgentCapabilityUnavailableError``, code
``rate-limited``) wherever the refused request names its capability, with the principal
of the caller that was limited. The counts live in one
storage per server: in memory by default, so **each worker process counts its own** (N workers
let a caller through N times the rate); ``storage=`` takes any URI of the ``limits``
library's storages (``redis://host:6379``, ``memcached://host:11211``, ``mongodb://...``,
each needing its client library) to share them across workers. ``limits`` has no SQLite or
PostgreSQL storage, so the database the audit uses cannot hold them.

Example:
    >>> rates = RateLimits(per_caller="100/minute")
    >>> rates.caller_refusal("alice") is None
    True
"""

from __future__ import annotations

import math
import time
from typing import TYPE_CHECKING, Any, Final

from ..contract.rates import Rate, parse_rate
from .wire import WireError

if TYPE_CHECKING:
    from limits.strategies import RateLimiter

__all__ = ["RATE_LIMITED", "RateLimits"]

RATE_LIMITED: Final = "rate-limited"
"""The refusal's ``code`` (``WireError.code``, an outcome's ``data["code"]``)."""


class RateLimits:
    """The rate limits of one server, on one storage of the ``limits`` library (module docs).

    Args:
        per_caller: requests one caller may make to the HTTP adapters, as ``limits`` writes a
            rate (``"100/minute"``, ``"10/second"``, ``"1000 per hour"``); ``None``: no limit
            per caller (capabilities declared with ``rate=`` are still limited).
        storage: a ``limits`` storage URI; ``"memory://"`` (the default) counts in this
            process only.

    Raises:
        ValueError: ``per_caller`` is not a rate, or ``storage`` is not a storage URI.
        MissingExtra: the ``limits`` library is not installed (``foldkit-agent[limits]``).

    Attributes:
        per_caller: the parsed per-caller :class:`~foldkit_agent.contract.rates.Rate`, or
            ``None``.
        storage: the storage URI.
    """

    def __init__(self, per_caller: str | None = None, *, storage: str = "memory://") -> None:
        self.per_caller: Rate | None = None if per_caller is None else parse_rate(per_caller)
        self.storage = storage
        self._limiter: RateLimiter | None = None

    def limiter(self) -> RateLimiter:
        """The ``limits`` limiter, made on first use (a memory storage starts a timer thread,
        which a server with no limit hit never needs)."""
        if self._limiter is None:
            from limits.storage import MovingWindowSupport, storage_from_string
            from limits.strategies import FixedWindowRateLimiter, MovingWindowRateLimiter

            try:
                store: Any = storage_from_string(self.storage)
            except Exception as err:  # the library's own kinds: ConfigurationError and more
                raise ValueError(
                    f"rate limit storage takes a limits storage URI such as memory:// or "
                    f"redis://host:6379, got {self.storage!r} ({type(err).__name__})"
                ) from None
            moving = isinstance(store, MovingWindowSupport)
            self._limiter = (MovingWindowRateLimiter if moving else FixedWindowRateLimiter)(store)
        return self._limiter

    def retry_after(self, rate: Rate, *keys: str) -> int | None:
        """Count one hit of ``keys`` against ``rate``: ``None`` when it is within the rate,
        else the whole seconds until the caller may try again (at least 1)."""
        limiter = self.limiter()
        if limiter.hit(rate.item, *keys):
            return None
        reset = limiter.get_window_stats(rate.item, *keys).reset_time
        return max(1, math.ceil(reset - time.time()))

    def caller_refusal(self, caller: str) -> WireError | None:
        """The edge guard's check: ``None``, or the 429 refusal of ``caller``'s request past
        :attr:`per_caller` (with ``Retry-After``)."""
        rate = self.per_caller
        if rate is None:
            return None
        wait = self.retry_after(rate, "caller", caller)
        if wait is None:
            return None
        return _limited(
            f"Too many requests: one caller may make {rate.amount} requests {_a(rate.per)} to "
            f"this server.",
            wait,
        )

    def capability_refusal(self, rate: Rate, capability: str, caller: str) -> WireError | None:
        """The check of :meth:`~.calls.CallsInFlight.run`: ``None``, or the refusal of a call
        of ``capability`` past its declared ``rate`` for ``caller``."""
        wait = self.retry_after(rate, "capability", capability, caller)
        if wait is None:
            return None
        return _limited(
            f"Too many calls: one caller may start {capability[:200]} {rate.amount} times "
            f"{_a(rate.per)}.",
            wait,
        )


def _a(per: str) -> str:
    """``"a minute"``, ``"an hour"``, ``"every 10 seconds"``."""
    if per[0].isdigit():
        return f"every {per}"
    return f"an {per}" if per == "hour" else f"a {per}"


def _limited(text: str, wait: int) -> WireError:
    """The 429 refusal saying ``text`` and when to retry (in the text and ``Retry-After``)."""
    return WireError(429, RATE_LIMITED, f"{text} Retry after {wait} s.", {"Retry-After": str(wait)})
