"""What ``runtime.messages`` and ``runtime.resources`` offer: list, dispatch and read."""

from __future__ import annotations

import logging
from collections.abc import Coroutine, Mapping
from typing import TYPE_CHECKING, Any, Generic

from pydantic import BaseModel
from typing_extensions import TypeVar

from ..contract.calls import Invocation
from ..contract.declare import Capability
from ..errors import AgentResourceError
from .results import DispatchResult

if TYPE_CHECKING:
    from .bound import AgentRuntime

__all__ = ["RuntimeMessages", "RuntimeResources"]

_log = logging.getLogger("foldkit_agent.runtime")

E = TypeVar("E", default=Any)


class RuntimeMessages(Generic[E]):
    """``runtime.messages``: list and dispatch capabilities (``E``: the exposed Messages)."""

    __slots__ = ("_rt",)

    def __init__(self, rt: AgentRuntime[Any, Any]) -> None:
        self._rt = rt

    def all(self) -> list[Capability]:
        """Every capability in the contract, available or not, in declaration order."""
        return list(self._rt.definition.capabilities)

    def available(self) -> list[Capability]:
        """The capabilities whose ``available`` predicate holds for the current Model.

        Reads the Model once. A predicate that raises counts as unavailable (and is logged);
        it never breaks the listing of the others.
        """
        return self._rt.available_in(self._rt.host.model())

    async def dispatch(
        self,
        ref: type[E] | str,
        input: BaseModel | Mapping[str, object] | None = None,
        invocation: Invocation | None = None,
    ) -> DispatchResult:
        """Invoke a capability named by its Message class, tag or protocol name.

        Args:
            ref: ``RequestedCreateTodo``, ``"RequestedCreateTodo"`` or ``"create_todo"``; a
                class the contract does not expose is a type error (and, at run time, an
                ``AgentUnknownCapabilityError``, which names the closest capability).
            input: the wire (JSON) form of the input, or the input itself: the variant's
                ``input=`` model or, for a direct variant, its Message
                (``DeleteInput(id="t1")``, whose constructor a type checker checks). A model
                is sent as its JSON data (``model_dump(mode="json", by_alias=True)``) and
                decoded like any payload. ``None`` means ``{}``.
            invocation: identity, transport, signal and credentials; a fresh in-app one by default.

        Returns:
            :class:`~foldkit_agent.runtime.DispatchResult`.

        Raises:
            AgentUnknownCapabilityError, AgentCapabilityUnavailableError,
            AgentInvalidInputError, AgentAuthorizationError, AgentCancelledError,
            AgentCompletionTimeoutError, AgentHostError: see :mod:`foldkit_agent.errors`.

        Example:
            >>> await rt.messages.dispatch(RequestedDeleteTodo, {"id": "t1"})
            >>> await rt.messages.dispatch(RequestedDeleteTodo, RequestedDeleteTodo(id="t1"))
        """
        cap = self._rt.definition.lookup(ref)
        name = ref if isinstance(ref, str) else getattr(ref, "__message_tag__", repr(ref))
        if input is None:
            payload: Any = {}
        elif isinstance(input, BaseModel):
            payload = input.model_dump(mode="json", by_alias=True)
        else:
            payload = input
        return await self._rt.invoke(cap, name, payload, invocation)

    def dispatch_unknown(
        self, name: str, payload: Any, invocation: Invocation | None = None
    ) -> Coroutine[Any, Any, DispatchResult]:
        """Invoke by a protocol name and an unvalidated payload, both read off the wire.

        Only capability *names* resolve here (not tags). Await it; raises as :meth:`dispatch`.
        (A plain function returning the invocation's coroutine: one frame fewer per call.)
        """
        return self._rt.start(name, payload, invocation)


class RuntimeResources:
    """``runtime.resources``: read the contract's named projections."""

    __slots__ = ("_rt",)

    def __init__(self, rt: AgentRuntime[Any, Any]) -> None:
        self._rt = rt

    def names(self) -> list[str]:
        """The resource names, in declaration order."""
        return list(self._rt.definition.resources)

    def read(self, name: str) -> dict[str, Any]:
        """The resource's current value as JSON data.

        Raises:
            AgentResourceError: no such resource, or its projection could not be read.
        """
        res = self._rt.definition.resources.get(name)
        if res is None:
            raise AgentResourceError(resource=str(name)[:200])
        try:
            return res.projection.encode(self._rt.host.model())
        except Exception as exc:
            _log.warning("resource %r could not be read", name, exc_info=True)
            raise AgentResourceError(resource=name, known=True) from exc
