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

Approval (a ``confirm`` capability, DESIGN §11). With ``approver=``, the runtime asks it during
the call. Without one, the call is deferred the pydantic-ai way: ``call_tool`` raises
``ApprovalRequired`` whose metadata is the :class:`~foldkit_agent.ApprovalRequest` as JSON
(``message``, ``preview``, ``summary``, ...) plus ``"text"`` to show a person, and the run ends
with ``DeferredToolRequests`` (give the agent ``output_type=[str, DeferredToolRequests]``). The
invocation itself waits in this toolset, its Message already built, until the run is resumed
with ``deferred_tool_results`` on the same toolset (or the runtime's ``approval_timeout``
passes): an approval sends that very Message, ``metadata={call_id: {"approved_by": "alice"}}``
records who approved, and a denial is audited as declined (pydantic-ai tells the model).
``HandleDeferredToolCalls`` answering in the run works the same way. A resumed call that no
longer waits here (timed out, or another toolset instance) is asked about again.

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
from typing import Any, Final, TypeAlias, cast

from ...errors import needs_extra

with needs_extra(__name__):  # a missing library is answered with the extra to install
    from pydantic_ai import ApprovalRequired, ModelRetry, RunContext, ToolDefinition, ToolFailed
    from pydantic_ai.messages import ModelRequest, ToolReturnPart
    from pydantic_ai.toolsets import AbstractToolset, ToolsetTool
    from pydantic_core import SchemaValidator, core_schema

    from ...contract.approval import Approval, Approver
    from ...contract.declare import AgentDefinition, Capability
    from ...edge.approvals import ParkedApproval
    from ...edge.calls import CallsInFlight
    from ...edge.credentials import CallerCredentials, InProcessCalls
    from ...runtime.bound import AgentRuntime
    from ...runtime.outcome import Outcome

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
    """The contract's capabilities as a pydantic-ai toolset, for ``Agent(toolsets=[...])`` or
    ``agent.run(toolsets=[...])`` (:func:`toolset` is this class).

    ``get_tools`` lists what is available now; ``call_tool`` dispatches through the runtime.

    Args:
        target: a bound runtime, or ``resolve(run_context) -> AgentRuntime`` (sync or async) to
            serve one application instance per user or tenant (read ``ctx.deps``).
        credentials: the credentials every call carries (``Invocation.credentials``, read by the
            runtime's principal provider), fixed by the application when it builds the toolset.
        credentials_of: ``(run_context) -> credentials`` (sync or async), read per call from the
            run's dependencies instead; exclusive with ``credentials``. Never the model's arguments.
        idempotency_key_of: ``(run_context) -> str | None`` (sync or async): each call's
            idempotency key (``docs/retries.md``), e.g. ``lambda ctx: ctx.tool_call_id`` so a
            durable run that replays a tool call gets its first outcome instead of running it
            again. Default: calls carry none.
        id: the toolset id (pydantic-ai needs one for durable execution).
        max_retries: how many ``ModelRetry`` refusals a tool may answer before pydantic-ai
            ends the run (pydantic-ai's own default is 1).
        strict: ``ToolDefinition.strict`` for every tool; ``None`` lets pydantic-ai decide per
            provider.
        approver: ``async (ApprovalRequest) -> Approval``, asked in the run for a ``confirm``
            capability (``Invocation.approver``). Without one, such a call is deferred the
            pydantic-ai way: the run ends with ``DeferredToolRequests`` and resumes with
            ``deferred_tool_results`` (see the module docstring).
        transport: ``Invocation.transport`` of its calls (default :data:`TRANSPORT`; the AG-UI
            app, :mod:`.ag_ui`, says ``"ag-ui"``).
        calls: the server's calls in flight
            (:class:`~foldkit_agent.edge.calls.CallsInFlight`), for a toolset serving many
            callers (``ag_ui_app`` under ``serve``); default one of the toolset's own.
        caller_of: ``(run_context) -> caller key``: whose per-caller caps each call counts
            against and who alone may answer its deferred approval (default: the
            application's, one caller).

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

    def __init__(
        self,
        target: AgentRuntime[Any, Any] | Resolve,
        *,
        credentials: Any = None,
        credentials_of: CredentialsOf | None = None,
        id: str | None = None,
        max_retries: int = 1,
        strict: bool | None = None,
        approver: Approver | None = None,
        transport: str = TRANSPORT,
        idempotency_key_of: CredentialsOf | None = None,
        calls: CallsInFlight | None = None,
        caller_of: Callable[[RunContext[Any]], str] | None = None,
    ) -> None:
        who = CallerCredentials[RunContext[Any]](
            credentials, credentials_of, caller="toolset", idempotency_key_of=idempotency_key_of
        )
        # deferred calls wait by pydantic-ai's tool call id
        self._in = InProcessCalls(
            target,
            who,
            approver,
            transport=transport,
            caller="toolset",
            calls=calls,
            caller_of=caller_of,
        )
        self._calls = self._in.calls
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
        return await self._in.runtime(ctx)

    async def credentials(self, ctx: RunContext[Any]) -> Any:
        """What this run's calls carry as ``Invocation.credentials``."""
        return await self._in.credentials.of(ctx)

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
        """The capabilities available in the application's current state, as tools.

        Also hands a declined approval to its waiting call (pydantic-ai answers a denied call
        itself, without calling the tool), so the refusal is audited as ``"declined"``.
        """
        self._decline_denied(ctx)
        rt = await self.runtime(ctx)
        return {c.name: self._tool(rt.definition, c) for c in rt.messages.available()}

    async def call_tool(
        self, name: str, tool_args: dict[str, Any], ctx: RunContext[Any], tool: ToolsetTool[Any]
    ) -> Any:
        """Dispatch ``name`` with the model's arguments; see the module docstring for results.

        Raises:
            ModelRetry: a refusal the model can fix (invalid input, unavailable, unknown).
            ToolFailed: any other refusal, a reported failure, an unknown outcome or a defect.
            ApprovalRequired: the call waits for a person (a ``confirm`` capability, without an
                ``approver``); its metadata is the :class:`~foldkit_agent.ApprovalRequest`'s
                JSON plus ``"text"``.
        """
        key = ctx.tool_call_id
        if ctx.tool_call_approved and key is not None:
            approved = Approval(approved=True, by=_approved_by(ctx))
            resumed = await self._in.resume(ctx, key, name, approved)
            if resumed is not None:
                return _answer(resumed)
        # without an approver a person is asked the pydantic-ai way: the call is deferred
        got = await self._in.run(ctx, name, tool_args, park=key)
        if isinstance(got, ParkedApproval):
            question = got.request
            raise ApprovalRequired(metadata={**question.to_json(), "text": question.text()})
        return _answer(got)

    def _decline_denied(self, ctx: RunContext[Any]) -> None:
        if not len(self._calls.parked) or not ctx.messages:
            return
        last = ctx.messages[-1]
        if not isinstance(last, ModelRequest):
            return
        for part in last.parts:
            if isinstance(part, ToolReturnPart) and part.outcome == "denied":
                declined = Approval(approved=False, by=_approved_by(ctx))
                self._in.answer(ctx, part.tool_call_id, part.tool_name, declined)


def _approved_by(ctx: RunContext[Any]) -> str | None:
    """Who answered, when the application put ``{"approved_by": ...}`` in the call's metadata."""
    metadata: Any = ctx.tool_call_metadata
    if not isinstance(metadata, dict):
        return None
    by: Any = cast("dict[str, Any]", metadata).get("approved_by")
    return by if isinstance(by, str) else None


def _answer(outcome: Outcome) -> Any:
    if outcome.ok:
        return outcome.data
    if outcome.kind == "refused" and outcome.data.get("_tag") in _RETRYABLE:
        raise ModelRetry(outcome.text)
    raise ToolFailed(outcome.text)


toolset = FoldkitToolset
"""The contract's capabilities as a pydantic-ai toolset: :class:`FoldkitToolset` itself, by the
name the docs use (``toolset(target, *, credentials=, credentials_of=, id=, max_retries=,
strict=, approver=, transport=, idempotency_key_of=)``)."""
