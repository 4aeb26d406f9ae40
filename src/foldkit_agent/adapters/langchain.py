"""The contract as LangChain structured tools: an in-process agent drives the application.

:func:`tools` returns one :class:`langchain_core.tools.StructuredTool` per capability, whose
``args_schema`` is the capability's compatibility-profile JSON schema. LangChain tool lists are
fixed when a model is bound or an agent graph is built, so availability is followed per step
with :func:`available`: bind the model to ``available(all_tools, runtime)`` before each model
call (or filter ``request.tools`` with it in a ``create_agent`` middleware). A tool called while
its capability is unavailable is refused by the runtime, and the model reads why.

Every call goes through the runtime's five dispatch steps with
``Invocation(transport="langchain", credentials=...)``: the credentials are what the application
passed when it built the tools (``credentials=``) or what ``credentials_of(config)`` reads from the
run's ``RunnableConfig`` (``config["configurable"]``), never anything from the model's arguments.

What the model reads, as the ``ToolMessage`` of a tool call:

* success: ``status="success"``, the outcome's data as JSON text (``{"status", "capability",
  "invocation_id", "message", "result"?}``), and the data itself as the message's ``artifact``;
* every refusal (invalid input, unavailable, not authorized, ...), a failure the application
  reported and an unknown outcome: a ``ToolException`` handled by the tool
  (``handle_tool_error=True``), so the message has ``status="error"`` and our agent-facing
  sentence as content; a defect's content is the one generic sentence.

The runtime decodes exactly the arguments the model sent: LangChain passes its own values under
the keyword arguments ``config`` and ``run_manager``, so :class:`CapabilityTool` reads the tool
call's arguments before LangChain unpacks them (an undeclared ``config`` field is refused like
any other, and a capability may declare one).

Each tool's ``metadata`` holds ``foldkit_capability`` (the capability's name, which
:func:`available` reads), its ``title`` and its declared hints (``read_only``, ...).

Example::

    from foldkit_agent.adapters.langchain import available, tools

    every_tool = tools(runtime, credentials=current_user)
    ai = await llm.bind_tools(available(every_tool, runtime)).ainvoke(messages)
    for call in ai.tool_calls:
        messages.append(await by_name[call["name"]].ainvoke(call))
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from contextvars import ContextVar
from typing import Any, Final, TypeAlias, TypeVar, cast

from ..errors import needs_extra

with needs_extra(__name__):  # a missing library is answered with the extra to install
    from langchain_core.runnables import RunnableConfig
    from langchain_core.tools import BaseTool, StructuredTool, ToolException

    from ..contract.approval import Approver
    from ..contract.declare import AgentDefinition, Capability
    from ..edge.approvals import ParkedApproval
    from ..edge.credentials import CallerCredentials, InProcessCalls
    from ..runtime.bound import AgentRuntime

__all__ = ["TRANSPORT", "CapabilityTool", "CredentialsOf", "Resolve", "available", "tools"]


TRANSPORT: Final = "langchain"
"""``Invocation.transport`` of every call made through these tools."""

Resolve: TypeAlias = Callable[
    [RunnableConfig], "AgentRuntime[Any, Any] | Awaitable[AgentRuntime[Any, Any]]"
]
"""``(config) -> AgentRuntime`` (or an awaitable of one): one runtime per user or tenant, read
from ``config["configurable"]``."""

CredentialsOf: TypeAlias = Callable[[RunnableConfig], Any]
"""``(config) -> credentials`` (or an awaitable), put on ``Invocation.credentials``."""

T = TypeVar("T")

_METADATA_KEY: Final = "foldkit_capability"
_UNSET: Final = object()
# The arguments of the tool call being run, as the model sent them (see CapabilityTool).
_ARGUMENTS: ContextVar[Any] = ContextVar("foldkit_langchain_arguments", default=_UNSET)


class CapabilityTool(StructuredTool):
    """A ``StructuredTool`` that hands the runtime the model's arguments exactly as sent.

    LangChain unpacks a tool call's arguments into keyword arguments and sets its own
    ``config`` and ``run_manager`` among them; :meth:`ainvoke` keeps the arguments as the model
    sent them for the call, so nothing is dropped or replaced before strict decoding.
    """

    async def ainvoke(self, input: Any, config: RunnableConfig | None = None, **kwargs: Any) -> Any:
        """As ``StructuredTool.ainvoke``; ``input`` is a ``ToolCall`` or the arguments dict."""
        arguments: Any = input
        if isinstance(input, dict):
            call = cast("dict[str, Any]", input)
            if call.get("type") == "tool_call":
                arguments = call.get("args")
        token = _ARGUMENTS.set(arguments)
        try:
            return await super().ainvoke(cast(Any, input), config, **kwargs)
        finally:
            _ARGUMENTS.reset(token)


class _Tools(InProcessCalls[RunnableConfig]):
    """What every tool built by one :func:`tools` call shares."""

    def tool(self, cap: Capability) -> CapabilityTool:
        name = cap.name

        async def call(config: RunnableConfig, **unpacked: Any) -> tuple[str, dict[str, Any]]:
            sent = _ARGUMENTS.get()
            payload = unpacked if sent is _UNSET else sent
            outcome = await self.run(config, name, payload)
            assert not isinstance(outcome, ParkedApproval)  # parked only when given park=
            if not outcome.ok:
                raise ToolException(outcome.text)
            return outcome.data_json(), outcome.data

        return CapabilityTool(
            name=name,
            description=cap.description,
            args_schema=cap.input_schema,
            coroutine=call,
            response_format="content_and_artifact",
            handle_tool_error=True,
            metadata={_METADATA_KEY: name, "title": cap.title, **cap.hints.declared()},
        )


def tools(
    target: AgentRuntime[Any, Any] | Resolve,
    *,
    definition: AgentDefinition | None = None,
    credentials: Any = None,
    credentials_of: CredentialsOf | None = None,
    approver: Approver | None = None,
    idempotency_key_of: CredentialsOf | None = None,
) -> list[CapabilityTool]:
    """The contract's capabilities as LangChain structured tools (every one; see :func:`available`).

    Args:
        target: a bound runtime, or ``resolve(config) -> AgentRuntime`` (sync or async) to serve
            one application instance per user or tenant (read ``config["configurable"]``).
        definition: the contract (from ``agent.make``); required with a ``resolve`` target.
            Defaults to the runtime's.
        credentials: the credentials every call carries (``Invocation.credentials``, read by the
            runtime's principal provider), fixed by the application when it builds the tools.
        credentials_of: ``(config) -> credentials`` (sync or async), read per call from the run's
            ``RunnableConfig`` instead; exclusive with ``credentials``. Never the model's arguments.
        idempotency_key_of: ``(config) -> str | None`` (sync or async): each call's
            idempotency key (``docs/retries.md``), read from the call's ``RunnableConfig``
            (e.g. ``config["configurable"]["call_key"]``). Default: calls carry none.
        approver: ``async (ApprovalRequest) -> Approval``, asked during the call for a
            ``confirm`` capability (``Invocation.approver``): show the person the request
            (``request.text()``) and answer. Without one such a call fails closed, refused as
            ``AgentApprovalError("unavailable")``.

    Returns:
        One :class:`CapabilityTool` (a ``StructuredTool``) per capability, in declaration order.

    Raises:
        TypeError: ``target`` is neither a runtime nor a callable; a ``resolve`` target without
            ``definition``; both credentials forms given.

    Example:
        >>> every_tool = tools(runtime, credentials_of=lambda cfg: cfg["configurable"]["user"])
        >>> await every_tool[0].ainvoke(call, {"configurable": {"user": alice}})
    """
    who = CallerCredentials[RunnableConfig](
        credentials, credentials_of, caller="tools", idempotency_key_of=idempotency_key_of
    )
    shared = _Tools(target, who, approver, transport=TRANSPORT, caller="tools")
    if definition is None:
        if shared.static is None:
            raise TypeError("tools(resolve, ...) needs definition= (the contract from agent.make)")
        definition = shared.static.definition
    return [shared.tool(cap) for cap in definition.capabilities]


def available(all_tools: Sequence[T], runtime: AgentRuntime[Any, Any]) -> list[T]:
    """The tools to offer the model now: those whose capability is available in ``runtime``.

    Anything :func:`tools` did not build (other tools, provider tool dicts) passes through
    unchanged. Reads the Model once.

    Args:
        all_tools: a tool list containing what :func:`tools` returned.
        runtime: the runtime of this run (the one given to :func:`tools`, or what its
            ``resolve`` returns for this run).

    Example:
        >>> llm.bind_tools(available(every_tool, runtime))
    """
    names = {c.name for c in runtime.messages.available()}
    kept: list[T] = []
    for tool in all_tools:
        metadata = tool.metadata if isinstance(tool, BaseTool) else None
        capability = (metadata or {}).get(_METADATA_KEY)
        if capability is None or capability in names:
            kept.append(tool)
    return kept
