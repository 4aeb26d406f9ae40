"""The contract as a pydantic-ai toolset: an in-process agent drives the application.

:func:`toolset` returns a :class:`FoldkitToolset`, a pydantic-ai ``AbstractToolset`` whose tools
are the capabilities available at each run step (``runtime.messages.available()`` is read when
pydantic-ai asks for the step's tools). Every call goes through the runtime's five dispatch
steps with ``Invocation(transport="pydantic-ai", credentials=...)``: the credentials are what
the application passed when it built the toolset (``credentials=``) or what
``credentials_of(ctx)`` reads from the run's dependencies, never anything from the model's
arguments.

What the model sees:

* a tool per available capability, with the capability's description and its compatibility
  profile input schema (objects closed, no ``$ref``); pydantic-ai decides per provider whether
  to ask for strict mode (``strict=None``), unless ``strict=`` is given;
* success: the outcome's data, ``{"status": "dispatched" | "completed", "capability",
  "invocation_id", "message", "result"?}``;
* a refusal it can fix by calling differently (invalid input, a capability no longer
  available, an unknown name): ``ModelRetry`` with our agent-facing sentence, counted against
  the tool's ``max_retries``;
* any other refusal (not authorized, cancelled), a failure the application reported, an
  unknown outcome (timeout) and a defect: ``ToolFailed`` with our sentence (the run goes on and
  the model adapts; no retry budget is spent). A defect's text is the one generic sentence.

Each tool's ``ToolDefinition.metadata["foldkit"]`` holds the capability's tag, title and declared
hints (``read_only``, ``destructive``, ...), for ``toolset(...).filtered(...)``; pydantic-ai never
sends metadata to the model.

The arguments are not validated by pydantic-ai (its validation errors would reach the model in
library words); the runtime's strict decoding is the one validator.

Example::

    from pydantic_ai import Agent
    from foldkit_agent.adapters.pydantic_ai import toolset

    copilot = Agent("openai:gpt-5", toolsets=[toolset(runtime, credentials=current_user)])
    result = await copilot.run("Add milk to my list")
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any, Final, TypeAlias

from pydantic_ai import ModelRetry, RunContext, ToolDefinition, ToolFailed
from pydantic_ai.toolsets import AbstractToolset, ToolsetTool
from pydantic_core import SchemaValidator, core_schema

from ..contract.calls import Invocation
from ..contract.declare import AgentDefinition, Capability
from ..edge.credentials import CallerCredentials
from ..edge.resolve import check_target, resolve_runtime
from ..runtime.bound import AgentRuntime

__all__ = ["TRANSPORT", "CredentialsOf", "FoldkitToolset", "Resolve", "toolset"]

TRANSPORT: Final = "pydantic-ai"
"""``Invocation.transport`` of every call made through a :class:`FoldkitToolset`."""

Resolve: TypeAlias = Callable[
    [RunContext[Any]], "AgentRuntime[Any, Any] | Awaitable[AgentRuntime[Any, Any]]"
]
"""``(run_context) -> AgentRuntime`` (or an awaitable of one): one runtime per user or tenant,
read from the run's ``deps``."""

CredentialsOf: TypeAlias = Callable[[RunContext[Any]], Any]
"""``(run_context) -> credentials`` (or an awaitable), put on ``Invocation.credentials``."""

# Any JSON the model sends reaches the runtime, whose strict decoding is the one validator.
_ANY_ARGS: Final = SchemaValidator(core_schema.any_schema())

# Refusals the model can fix by calling differently; everything else is a terminal tool error.
_RETRYABLE: Final = frozenset(
    {"AgentInvalidInputError", "AgentCapabilityUnavailableError", "AgentUnknownCapabilityError"}
)


class FoldkitToolset(AbstractToolset[Any]):
    """A pydantic-ai toolset over a bound runtime (build it with :func:`toolset`).

    ``get_tools`` lists what is available now; ``call_tool`` dispatches through the runtime.
    """

    def __init__(
        self,
        target: AgentRuntime[Any, Any] | Resolve,
        *,
        credentials: Any = None,
        credentials_of: CredentialsOf | None = None,
        id: str | None = None,
        max_retries: int = 1,
        strict: bool | None = None,
    ) -> None:
        check_target(target, "toolset")
        self._target = target
        self._credentials = CallerCredentials(credentials, credentials_of, caller="toolset")
        self._id = id
        self._max_retries = max_retries
        self._strict = strict
        self._tools: dict[int, tuple[AgentDefinition, dict[str, ToolsetTool[Any]]]] = {}

    @property
    def id(self) -> str | None:
        """The toolset id given to :func:`toolset` (needed for durable execution), or ``None``."""
        return self._id

    async def runtime(self, ctx: RunContext[Any]) -> AgentRuntime[Any, Any]:
        """The runtime serving this run: the one given, or ``resolve(ctx)``.

        Raises:
            RuntimeUnavailableError: ``resolve`` raised or returned no ``AgentRuntime`` (logged).
        """
        return await resolve_runtime(self._target, ctx)

    async def credentials(self, ctx: RunContext[Any]) -> Any:
        """What this run's calls carry as ``Invocation.credentials``."""
        return await self._credentials.of(ctx)

    def _tool(self, definition: AgentDefinition, cap: Capability) -> ToolsetTool[Any]:
        entry = self._tools.get(id(definition))
        if entry is None or entry[0] is not definition:
            entry = self._tools[id(definition)] = (definition, {})
        tool = entry[1].get(cap.name)
        if tool is None:
            tool = entry[1][cap.name] = ToolsetTool(
                toolset=self,
                tool_def=ToolDefinition(
                    name=cap.name,
                    description=cap.description,
                    parameters_json_schema=cap.input_schema,
                    strict=self._strict,
                    metadata={
                        "foldkit": {"tag": cap.tag, "title": cap.title, **cap.hints.declared()}
                    },
                ),
                max_retries=self._max_retries,
                args_validator=_ANY_ARGS,
            )
        return tool

    async def get_tools(self, ctx: RunContext[Any]) -> dict[str, ToolsetTool[Any]]:
        """The capabilities available in the application's current state, as tools."""
        rt = await self.runtime(ctx)
        return {c.name: self._tool(rt.definition, c) for c in rt.messages.available()}

    async def call_tool(
        self, name: str, tool_args: dict[str, Any], ctx: RunContext[Any], tool: ToolsetTool[Any]
    ) -> Any:
        """Dispatch ``name`` with the model's arguments; see the module docstring for results.

        Raises:
            ModelRetry: a refusal the model can fix (invalid input, unavailable, unknown).
            ToolFailed: any other refusal, a reported failure, an unknown outcome or a defect.
        """
        rt = await self.runtime(ctx)
        invocation = Invocation(transport=TRANSPORT, credentials=await self.credentials(ctx))
        outcome = await rt.call(name, tool_args, invocation)
        if outcome.ok:
            return outcome.data
        if outcome.kind == "refused" and outcome.data.get("_tag") in _RETRYABLE:
            raise ModelRetry(outcome.text)
        raise ToolFailed(outcome.text)


def toolset(
    target: AgentRuntime[Any, Any] | Resolve,
    *,
    credentials: Any = None,
    credentials_of: CredentialsOf | None = None,
    id: str | None = None,
    max_retries: int = 1,
    strict: bool | None = None,
) -> FoldkitToolset:
    """The contract's capabilities as a pydantic-ai toolset.

    Args:
        target: a bound runtime, or ``resolve(run_context) -> AgentRuntime`` (sync or async) to
            serve one application instance per user or tenant (read ``ctx.deps``).
        credentials: the credentials every call carries (``Invocation.credentials``, read by the
            runtime's principal provider), fixed by the application when it builds the toolset.
        credentials_of: ``(run_context) -> credentials`` (sync or async), read per call from the
            run's dependencies instead; exclusive with ``credentials``. Never the model's arguments.
        id: the toolset id (pydantic-ai needs one for durable execution).
        max_retries: how many ``ModelRetry`` refusals a tool may answer before pydantic-ai
            ends the run (pydantic-ai's own default is 1).
        strict: ``ToolDefinition.strict`` for every tool; ``None`` lets pydantic-ai decide per
            provider.

    Returns:
        A :class:`FoldkitToolset`, for ``Agent(toolsets=[...])`` or ``agent.run(toolsets=[...])``.

    Raises:
        TypeError: ``target`` is neither a runtime nor a callable; both credentials forms given.

    A ``resolve`` that raises or returns no runtime makes the run fail with
    :class:`~foldkit_agent.edge.RuntimeUnavailableError` (logged): the application's error,
    never shown to the model.

    Example:
        >>> agent = Agent(model, deps_type=User,
        ...               toolsets=[toolset(runtime, credentials_of=lambda ctx: ctx.deps)])
        >>> await agent.run("Delete the selected todo", deps=alice)
    """
    return FoldkitToolset(
        target,
        credentials=credentials,
        credentials_of=credentials_of,
        id=id,
        max_retries=max_retries,
        strict=strict,
    )
