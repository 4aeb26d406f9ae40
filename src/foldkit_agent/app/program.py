"""A minimal Elm-architecture runtime, and the host it offers a contract.

``update(model, message)`` returns the next Model, or ``(model, commands)``. A command is an
async function (no arguments) returning a Message or ``None``; it runs after ``update`` and
its Message is dispatched back when it finishes. Messages are applied one at a time, in the
order they were dispatched; a Message dispatched while another is being applied (from an
observer, say) is queued behind it::

    program = Program(init=Model(), update=update, message=TodoMessage)
    async with program.run() as running:
        runtime = agent.bind(definition=AppAgent, host=running.host)
        await runtime.messages.dispatch(RequestedCreateTodo, {"title": "Milk"})
        await running.settled()        # every command finished

It is the substrate for examples and for applications without a framework, not a UI
framework.
"""

from __future__ import annotations

import asyncio
import logging
from collections import deque
from collections.abc import AsyncGenerator, Awaitable, Callable, Container, Iterable
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any, Generic, TypeVar, cast

from .host import Host, Unsubscribe

__all__ = ["Command", "Program", "Running"]

_log = logging.getLogger("foldkit_agent.app.program")

M = TypeVar("M")
Msg = TypeVar("Msg")

Command = Callable[[], Awaitable[Any]]
"""An async function returning a Message (or ``None``), run after ``update``."""


def _split(result: Any) -> tuple[Any, tuple[Command, ...]]:
    """``model`` or ``(model, commands)`` -> ``(model, commands)``."""
    value: Any = result
    if isinstance(value, tuple):
        pair = cast(tuple[Any, ...], value)
        if len(pair) == 2 and isinstance(pair[1], list | tuple):
            return pair[0], tuple(cast(Iterable[Command], pair[1]))
    return cast(Any, value), ()


@dataclass(frozen=True, kw_only=True, eq=False)
class Program(Generic[M, Msg]):
    """An Elm-architecture program: ``init`` and ``update``, a value that :meth:`run` starts
    (each run is a :class:`Running` of its own).

    Args:
        init: the initial Model, ``(model, commands)``, or a function returning either.
        update: ``(model, message) -> model | (model, commands)``; must not mutate ``model``.
        message: the application's Message union (``message_union(...)``), when known: the
            host then declares it accepts exactly those (``Host.accepts``), and ``bind``
            refuses a contract that exposes any other Message.
    """

    init: Any
    update: Callable[[M, Msg], Any]
    message: Container[type[Any]] | None = None

    @asynccontextmanager
    async def run(self) -> AsyncGenerator[Running[M, Msg]]:
        """Start the program on the running event loop; stop its commands on exit."""
        init = self.init() if callable(self.init) else self.init
        model, commands = _split(init)
        running: Running[M, Msg] = Running(model, self.update, self.message)
        running.start(commands)
        try:
            yield running
        finally:
            await running.stop()


class Running(Generic[M, Msg]):
    """A running :class:`Program`.

    Attributes:
        host: the :class:`~foldkit_agent.app.host.Host` seam for ``agent.bind``.
    """

    def __init__(
        self,
        model: M,
        update: Callable[[M, Msg], Any],
        accepts: Container[type[Any]] | None = None,
    ) -> None:
        self._model = model
        self._update = update
        self._queue: deque[Msg] = deque()
        self._applying = False
        self._subscribers: dict[int, Callable[[M], None]] = {}
        self._observers: dict[int, Callable[[Msg], None]] = {}
        self._next = 0
        self._tasks: set[asyncio.Task[Any]] = set()
        self.applied = 0
        self.host: Host[M, Msg] = Host(
            model=self.model,
            dispatch=self.dispatch,
            subscribe=self.subscribe,
            observe=self.observe,
            simulate=self.simulate,
            accepts=accepts,
            step=self.step,
        )

    # -- the host seam --------------------------------------------------------------------------

    def model(self) -> M:
        """The current Model."""
        return self._model

    def dispatch(self, message: Msg) -> None:
        """Apply ``message`` (and anything queued behind it) now, then start its commands.

        Raises:
            Exception: whatever ``update`` raised for this call's Message (others queued behind
                it are still applied).
        """
        self._queue.append(message)
        if self._applying:
            return
        self._applying = True
        first_error: BaseException | None = None
        try:
            while self._queue:
                msg = self._queue.popleft()
                try:
                    before = self._model
                    after, commands = _split(self._update(before, msg))
                    self._model = after
                    self.applied += 1
                    for cb in list(self._observers.values()):
                        try:
                            cb(msg)
                        except Exception:
                            _log.exception("a Message observer raised")
                    if after is not before:
                        for sub in list(self._subscribers.values()):
                            try:
                                sub(after)
                            except Exception:
                                _log.exception("a Model subscriber raised")
                    if commands:
                        self.start(commands)
                except Exception as exc:
                    if first_error is None:
                        first_error = exc
                    else:
                        _log.exception("update raised")
        finally:
            self._applying = False
        if first_error is not None:
            raise first_error

    def simulate(self, message: Msg) -> M:
        """The Model ``update`` returns for the current Model and ``message``; nothing changes.

        Nothing is applied, no observer or subscriber hears of it, and the commands ``update``
        returns are dropped unrun, so this is safe to call as often as a preview needs (it
        relies on ``update`` being pure, as the Elm architecture requires).

        Raises:
            Exception: whatever ``update`` raised.

        Example:
            >>> running.simulate(RequestedDeleteTodo(id="t1")).todos
            ()
        """
        after, _dropped = _split(self._update(self._model, message))
        return after

    def step(self, model: M, message: Msg) -> tuple[M, tuple[Command, ...]]:
        """``update(model, message)`` as ``(model, commands)``, applying and running nothing.

        What an approval preview follows: the commands are returned unrun, so a pure one
        (:class:`~.commands.Then`) can be stepped through too.

        Raises:
            Exception: whatever ``update`` raised.
        """
        return _split(self._update(model, message))

    def subscribe(self, on_model: Callable[[M], None]) -> Unsubscribe:
        """Call ``on_model(model)`` after every update that produced a new Model."""
        key = self._next
        self._next += 1
        self._subscribers[key] = on_model
        return lambda: self._subscribers.pop(key, None) and None

    def observe(self, on_message: Callable[[Msg], None]) -> Unsubscribe:
        """Call ``on_message(message)`` after every applied Message."""
        key = self._next
        self._next += 1
        self._observers[key] = on_message
        return lambda: self._observers.pop(key, None) and None

    # -- commands -----------------------------------------------------------------------------

    def start(self, commands: Iterable[Command]) -> None:
        """Run commands as tasks; each Message they return is dispatched when they finish."""
        for command in commands:
            task = asyncio.get_running_loop().create_task(self._run(command))
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)

    async def _run(self, command: Command) -> None:
        try:
            result = await command()
        except asyncio.CancelledError:
            raise
        except Exception:
            _log.exception("a command raised")
            return
        if result is not None:
            try:
                self.dispatch(result)
            except Exception:
                _log.exception("update raised for a command's Message")

    async def settled(self) -> None:
        """Wait until no command is running (commands started meanwhile are waited for too)."""
        while self._tasks:
            # A finished task leaves the set by its first done callback, before asyncio.wait's
            # own: once the wait returns, the set holds only what is still running.
            await asyncio.wait(list(self._tasks))

    async def stop(self) -> None:
        """Cancel running commands and wait for them to end."""
        tasks = list(self._tasks)
        for t in tasks:
            t.cancel()
        if tasks:
            await asyncio.gather(*tasks, return_exceptions=True)
