"""What an in-process adapter's tools share: who calls, who approves, the calls in flight.

An in-process framework (pydantic-ai, OpenAI Agents, LangChain) has no transport that
authenticates anyone: the application says who is calling, either once when it builds the
tools (``credentials=``) or per run through a hook reading the framework's own context
(``credentials_of=``). Never from the model's arguments. The runtime's principal provider then
turns the credentials into a principal. The application may also name each call for retries
(``idempotency_key_of``: an idempotency key read from the framework's context, such as its
tool call id, which a durable run's replay repeats). :class:`InProcessCalls` holds that with
the target, the approver and the toolset's calls in flight, and runs one call the way all
three toolsets do.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any, Generic, TypeVar

from ..contract.approval import Approver
from ..runtime.bound import AgentRuntime
from ..runtime.idempotency import key_from
from ..runtime.outcome import Outcome
from .approvals import ParkedApproval
from .calls import IN_PROCESS_LIMITS, PARK, CallRequest, CallsInFlight
from .resolve import check_target, resolve_runtime, static_runtime

__all__ = ["CallerCredentials", "InProcessCalls"]

C = TypeVar("C")


class CallerCredentials(Generic[C]):
    """A fixed credentials value, or ``credentials_of(context)`` read per call; and the call's
    idempotency key, ``idempotency_key_of(context)``, when the application names calls.

    Args:
        fixed: the credentials every call carries (``None``: nobody, unless a hook is given).
        credentials_of: ``(context) -> credentials`` (sync or async), exclusive with ``fixed``.
        caller: the function the application called, named in the error.
        idempotency_key_of: ``(context) -> str | None`` (sync or async): the call's
            ``Invocation.idempotency_key`` (``docs/retries.md``); ``None`` (the default, or
            returned): the call has none. A value that is not a string is refused.

    Raises:
        TypeError: both a fixed value and a hook were given.

    Example:
        >>> creds = CallerCredentials(None, lambda ctx: ctx.deps, caller="toolset")
        >>> await creds.of(run_context)
        User(id='alice')
    """

    __slots__ = ("_fixed", "_key_of", "_of")

    def __init__(
        self,
        fixed: Any,
        credentials_of: Callable[[C], Any] | None,
        *,
        caller: str,
        idempotency_key_of: Callable[[C], Any] | None = None,
    ) -> None:
        if fixed is not None and credentials_of is not None:
            raise TypeError(f"{caller} takes credentials= or credentials_of=, not both")
        self._fixed = fixed
        self._of = credentials_of
        self._key_of = idempotency_key_of

    async def of(self, context: C) -> Any:
        """The credentials of one call made in ``context``."""
        if self._of is None:
            return self._fixed
        got = self._of(context)
        return await got if inspect.isawaitable(got) else got

    async def key(self, context: C) -> str | None:
        """The idempotency key of one call made in ``context`` (``None``: it has none)."""
        if self._key_of is None:
            return None
        got = self._key_of(context)
        return key_from(await got if inspect.isawaitable(got) else got)


class InProcessCalls(Generic[C]):
    """What every tool built by one in-process toolset shares, and how it runs one call.

    Args:
        target: a bound runtime, or ``resolve(context)`` (sync or async) returning the
            runtime of one run.
        credentials: who calls (:class:`CallerCredentials`, read per call from ``context``).
        approver: asked for a ``confirm`` capability during the call (``Invocation.approver``);
            ``None``: the toolset parks the call for its framework's approval, or refuses it.
        transport: ``Invocation.transport`` of every call (``"langchain"``, ...).
        caller: the function the application called, named in the error.

    Raises:
        TypeError: ``target`` is neither a runtime nor a callable.

    The calls in flight are counted within
    :data:`~foldkit_agent.edge.calls.IN_PROCESS_LIMITS`: the application is their one caller.

    Example:
        >>> calls = InProcessCalls(rt, CallerCredentials(alice, None, caller="tools"), None,
        ...                        transport="langchain", caller="tools")
        >>> (await calls.run(config, "create_todo", {"title": "Milk"})).ok
        True
    """

    def __init__(
        self,
        target: object,
        credentials: CallerCredentials[C],
        approver: Approver | None,
        *,
        transport: str,
        caller: str,
    ) -> None:
        check_target(target, caller)
        self.target = target
        self.static = static_runtime(target)
        self.credentials = credentials
        self.approver = approver
        self.transport = transport
        self.calls = CallsInFlight(IN_PROCESS_LIMITS)

    async def runtime(self, context: C) -> AgentRuntime[Any, Any]:
        """The runtime of the run ``context`` belongs to: the one given, or ``resolve``'s.

        Raises:
            RuntimeUnavailableError: ``resolve`` raised or returned no runtime (logged).
        """
        return await resolve_runtime(self.target, context)

    async def run(
        self, context: C, name: str, payload: Any, *, park: str | None = None
    ) -> Outcome | ParkedApproval:
        """Run one call of ``name`` made in ``context`` until it answers.

        A ``confirm`` capability asks the approver; without one, a call given ``park`` (the
        framework's tool call id) waits under it for the framework's approval
        (:class:`~foldkit_agent.edge.approvals.ParkedApproval` is returned), and any other is
        refused as ``"unavailable"``.
        """
        rt = await self.runtime(context)
        ask = self.approver or (PARK if park is not None else None)
        credentials = await self.credentials.of(context)
        key = await self.credentials.key(context)
        request = CallRequest(
            self.transport, credentials=credentials, ask=ask, key=park, idempotency_key=key
        )
        return await self.calls.run(rt, name, payload, request)
