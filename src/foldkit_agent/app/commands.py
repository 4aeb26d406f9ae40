"""Commands that say what they do, so an approval preview can follow them.

A command (:data:`~.program.Command`) is an async function the runtime cannot look into. Two
values make one readable without running it:

* :class:`Then` - a pure command: it only yields a Message (``Then(ArchivedCards(ids))``).
  A preview runs ``update`` through that Message too, so a request -> command -> result
  Message shows the result's change.
* :class:`Effect` - a command with an external effect (a save, a payment), with a
  ``description`` of it (``"saves to the server"``). A preview says ``then: saves to the
  server``; the variant's ``preview=`` declares what Messages it brings back on success.

Both are ordinary commands to :class:`~.program.Program`; any other command is previewed as
one whose effect is not declared.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

__all__ = ["Effect", "Then"]


@dataclass(frozen=True, slots=True)
class Then:
    """A command that yields ``message`` and does nothing else (pure).

    Example:
        >>> return model.model_copy(update={"pending": ids}), [Then(ArchivedCards(ids=ids))]
    """

    message: Any

    async def __call__(self) -> Any:
        return self.message


@dataclass(frozen=True, slots=True)
class Effect:
    """A command with an external effect: ``run()`` does it and returns a Message (or
    ``None``); ``description`` says what it does, for a person (``"saves to the server"``).

    Example:
        >>> Effect("saves to the server", lambda: save(cards))
    """

    description: str
    run: Callable[[], Awaitable[Any]]

    async def __call__(self) -> Any:
        return await self.run()
