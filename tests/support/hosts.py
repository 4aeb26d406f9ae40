"""Hosts for tests: they record what the runtime asks of them."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any


class RecordingHost:
    """A host over a fixed or settable Model that records every call.

    Attributes:
        model_reads: how many times ``model()`` was called.
        dispatched: every Message handed to ``dispatch``, in order.
    """

    def __init__(self, model: Any, *, update: Callable[[Any, Any], Any] | None = None) -> None:
        self.current = model
        self.update = update
        self.model_reads = 0
        self.dispatched: list[Any] = []
        self.events: list[str] = []
        self._observers: list[Callable[[Any], None]] = []
        self._subscribers: list[Callable[[Any], None]] = []

    def model(self) -> Any:
        self.model_reads += 1
        self.events.append("model")
        return self.current

    def dispatch(self, message: Any) -> None:
        self.events.append("dispatch")
        self.dispatched.append(message)
        if self.update is not None:
            self.set_model(self.update(self.current, message))
        for cb in list(self._observers):
            cb(message)

    def set_model(self, model: Any) -> None:
        changed = model is not self.current
        self.current = model
        if changed:
            for cb in list(self._subscribers):
                cb(model)

    def emit(self, message: Any) -> None:
        """Apply a Message as the application would (not through the agent)."""
        for cb in list(self._observers):
            cb(message)

    def observe(self, cb: Callable[[Any], None]) -> Callable[[], None]:
        self._observers.append(cb)
        return lambda: self._observers.remove(cb)

    def subscribe(self, cb: Callable[[Any], None]) -> Callable[[], None]:
        self._subscribers.append(cb)
        return lambda: self._subscribers.remove(cb)

    @property
    def observer_count(self) -> int:
        return len(self._observers)

    @property
    def subscriber_count(self) -> int:
        return len(self._subscribers)
