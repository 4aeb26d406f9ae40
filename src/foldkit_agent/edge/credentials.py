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

from ..contract.approval import Approval, Approver
from ..runtime.bound import AgentRuntime
from ..runtime.idempotency import key_from
from ..runtime.outcome import Outcome
from .approvals import ParkedApproval
from .callers import ANONYMOUS
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
        calls: the server's calls in flight, when the toolset serves many callers (the AG-UI
            route of ``serve`` shares the one every adapter counts against); default one of
            its own within :data:`~foldkit_agent.edge.calls.IN_PROCESS_LIMITS`, the
            application being its one caller.
        caller_of: ``(context) -> caller key`` (:func:`~.callers.caller_key` of the request
            the run came in on): whose per-caller caps a call counts against, and the one
            caller that may answer its parked approval. Default: every call is the
            application's (:data:`~.callers.ANONYMOUS`, no owner).

    Raises:
        TypeError: ``target`` is neither a runtime nor a callable.

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
        calls: CallsInFlight | None = None,
        caller_of: Callable[[C], str] | None = None,
    ) -> None:
        check_target(target, caller)
        self.target = target
        self.static = static_runtime(target)
        self.credentials = credentials
        self.approver = approver
        self.transport = transport
        self.calls = CallsInFlight(IN_PROCESS_LIMITS) if calls is None else calls
        self._caller_of = caller_of

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
        idempotency_key = await self.credentials.key(context)
        caller, owner = self._who(context)
        request = CallRequest(
            self.transport,
            caller=caller,
            credentials=credentials,
            ask=ask,
            owner=owner,
            key=None if park is None else self._key(owner, park),
            idempotency_key=idempotency_key,
        )
        return await self.calls.run(rt, name, payload, request)

    def answer(self, context: C, key: str, name: str, approval: Approval) -> ParkedApproval | None:
        """Hand ``approval`` to the call of ``name`` parked under the framework's ``key`` by
        the caller of ``context`` (:meth:`CallsInFlight.answer`); ``None``: none waits."""
        owner = self._who(context)[1]
        return self.calls.answer(self._key(owner, key), owner, name, approval)

    async def resume(self, context: C, key: str, name: str, approval: Approval) -> Outcome | None:
        """:meth:`answer`, then the call's outcome (``None``: no call of this caller waits)."""
        parked = self.answer(context, key, name, approval)
        return None if parked is None else await self.calls.settle(parked.task)

    def _who(self, context: C) -> tuple[str, str | None]:
        """The caller key of ``context`` and the owner of its parked calls (``None``: the
        application's own)."""
        if self._caller_of is None:
            return ANONYMOUS, None
        caller = self._caller_of(context)
        return caller, caller

    @staticmethod
    def _key(owner: str | None, key: str) -> str:
        # the framework's ids are unique per run, not among callers of a shared server
        return key if owner is None else f"{owner} {key}"
