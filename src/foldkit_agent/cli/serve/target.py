"""The runtime ``serve`` serves: what ``MODULE:ATTR`` names, opened for as long as it serves.

``ATTR`` is an :class:`~foldkit_agent.runtime.AgentRuntime`, or a zero-argument callable
returning an async context manager that yields one (``examples.todo:runtime``); the context
manager runs the application for as long as the server runs.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, Awaitable
from contextlib import AsyncExitStack, asynccontextmanager
from typing import Any, cast

from ...contract.declare import AgentDefinition
from ...errors import AgentContractError
from ...runtime.bound import AgentRuntime
from ..loading import TargetError

__all__ = ["open_runtime", "shape_hint"]


@asynccontextmanager
async def open_runtime(
    target: object, reference: str = "target"
) -> AsyncGenerator[AgentRuntime[Any, Any]]:
    """Yield the runtime ``target`` names, running its application while inside.

    Args:
        target: an ``AgentRuntime`` or a zero-argument callable returning an async context
            manager (or an awaitable) that yields one.
        reference: how to name the target in errors (``"examples.todo:runtime"``).

    Raises:
        TargetError: ``target`` is neither, it yields something else, or it raised an
            :class:`~foldkit_agent.errors.AgentContractError` while binding (such as ``bind``
            without ``principal=``); the text is one line naming the fix.

    Example:
        >>> async with open_runtime(load_attr("examples.todo:runtime")) as rt:
        ...     rt.messages.available()
    """
    if isinstance(target, AgentRuntime):
        yield cast("AgentRuntime[Any, Any]", target)
        return
    if isinstance(target, AgentDefinition):
        raise TargetError(
            f"{reference} is the contract (agent.make(...)), and serve needs it bound to the "
            f"running application: a runtime factory.{shape_hint(reference)}"
        )
    if not callable(target):
        kind = type(target).__name__
        article = "an" if kind[:1] in "AEIOU" else "a"
        raise TargetError(
            f"{reference} is {article} {kind}, and serve needs a runtime factory (or a bound "
            f"AgentRuntime).{shape_hint(reference)}"
        )
    async with AsyncExitStack() as stack:
        # a contract error while the factory binds is the application's to fix: one line,
        # as at import, never a traceback through the event loop
        try:
            try:
                made: Any = target()
            except TypeError as exc:
                raise TargetError(
                    f"{reference} must be callable with no arguments: {exc}{shape_hint(reference)}"
                ) from exc
            if hasattr(made, "__aenter__") and hasattr(made, "__aexit__"):
                rt = _runtime(await stack.enter_async_context(made), reference, _YIELDED)
            else:
                if isinstance(made, Awaitable):
                    made = await cast("Awaitable[Any]", made)
                rt = _runtime(made, reference, _RETURNED)
        except AgentContractError as err:
            raise TargetError(f"{reference}(): {err}") from None
        yield rt


_YIELDED = "yielded a {kind}, not an AgentRuntime: yield what agent.bind(...) returns."
_RETURNED = (
    "returned a {kind}; a runtime factory returns an async context manager that yields an "
    "AgentRuntime."
)


def _runtime(made: object, reference: str, wrong: str) -> AgentRuntime[Any, Any]:
    """``made`` if it is a runtime, else the error saying what the factory gave instead."""
    if not isinstance(made, AgentRuntime):
        kind = type(made).__name__
        raise TargetError(f"{reference}() {wrong.format(kind=kind)}{shape_hint(reference)}")
    return cast("AgentRuntime[Any, Any]", made)


def shape_hint(reference: str) -> str:
    """The shape ``serve`` wants, as an example to append to an error about ``reference``."""
    module = reference.partition(":")[0] or "my_app"
    return (
        "\n\nA runtime factory runs the application and binds its contract:\n\n"
        "    from contextlib import asynccontextmanager\n"
        "    from foldkit_agent import Program, agent\n\n"
        "    @asynccontextmanager\n"
        "    async def runtime():\n"
        "        async with Program(init=Model(), update=update).run() as running:\n"
        "            yield TodoAgent.bind(definition=AppAgent, host=running.host,\n"
        "                                 audit=agent.audit_log(principal=str),\n"
        "                                 principal=principal)\n\n"
        f"then: foldkit-agent serve {module}:runtime --mcp stdio (docs/serving.md has more)"
    )
