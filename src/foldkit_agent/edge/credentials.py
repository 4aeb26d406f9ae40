"""Where an in-process adapter's calls get ``Invocation.credentials`` from.

An in-process framework (pydantic-ai, OpenAI Agents, LangChain) has no transport that
authenticates anyone: the application says who is calling, either once when it builds the
tools (``credentials=``) or per run through a hook reading the framework's own context
(``credentials_of=``). Never from the model's arguments. The runtime's principal provider then
turns the credentials into a principal.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any, Generic, TypeVar

__all__ = ["CallerCredentials"]

C = TypeVar("C")


class CallerCredentials(Generic[C]):
    """A fixed credentials value, or ``credentials_of(context)`` read per call.

    Args:
        fixed: the credentials every call carries (``None``: nobody, unless a hook is given).
        credentials_of: ``(context) -> credentials`` (sync or async), exclusive with ``fixed``.
        caller: the function the application called, named in the error.

    Raises:
        TypeError: both a fixed value and a hook were given.

    Example:
        >>> creds = CallerCredentials(None, lambda ctx: ctx.deps, caller="toolset")
        >>> await creds.of(run_context)
        User(id='alice')
    """

    __slots__ = ("_fixed", "_of")

    def __init__(
        self, fixed: Any, credentials_of: Callable[[C], Any] | None, *, caller: str
    ) -> None:
        if fixed is not None and credentials_of is not None:
            raise TypeError(f"{caller} takes credentials= or credentials_of=, not both")
        self._fixed = fixed
        self._of = credentials_of

    async def of(self, context: C) -> Any:
        """The credentials of one call made in ``context``."""
        if self._of is None:
            return self._fixed
        got = self._of(context)
        return await got if inspect.isawaitable(got) else got
