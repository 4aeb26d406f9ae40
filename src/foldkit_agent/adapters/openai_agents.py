"""The contract as OpenAI Agents SDK function tools: an in-process agent drives the application.

:func:`tools` returns one :class:`agents.FunctionTool` per capability of the contract. Each is
enabled (``is_enabled``) only while its capability is available, so at every turn the model is
offered what the application allows now. Every call goes through the runtime's five dispatch
steps with ``Invocation(transport="openai-agents", credentials=...)``: the credentials are what
the application passed when it built the tools (``credentials=``) or what ``credentials_of(ctx)``
reads from the run's context, never anything from the model's arguments.

Strict mode. OpenAI's strict function calling requires every property to be listed in
``required`` and knows only part of JSON Schema. With ``strict=True`` (the default) each tool's
schema is rewritten for it: an optional field becomes required but nullable (``null`` means
"leave it out", and the adapter removes it again before decoding, so the field's default
applies), ``default`` and ``title`` are dropped, and the keywords strict mode cannot carry
(``minLength``, ``maxLength``, ``uniqueItems``, a ``format`` it lacks, ...) move into the
field's description — the runtime's strict decoding still enforces them and refuses in words
the model reads. A schema that cannot be rewritten without changing what it accepts is sent
non-strict for that one tool (:func:`strict_schema` returns ``None``).

What the model reads:

* success: the outcome's data as JSON, ``{"status": "dispatched" | "completed", "capability",
  "invocation_id", "message", "result"?}``;
* every refusal (invalid input, unavailable, not authorized, ...), a failure the application
  reported and an unknown outcome: the tool's output is our agent-facing sentence, so the run
  goes on and the model adapts; a defect's output is the one generic sentence.

Approval (a ``confirm`` capability, DESIGN §11). With ``approver=``, the runtime asks it during
the call. Without one, such a tool has ``needs_approval``: when the SDK asks, the invocation
starts and, if its ``confirm`` says a person must approve, waits with its Message built and the
run is interrupted (``result.interruptions``); a call its ``confirm`` predicate lets through
runs to its end there and no one is asked. Show the person
``tools(...).approval_request(item)`` (the Message and its preview), then
``state = result.to_state(); state.approve(item)`` (or ``state.reject(item)``) and
``Runner.run(agent, state)``: an approval sends that very Message, a rejection is audited as
declined. Resume in the same process, before the runtime's ``approval_timeout``; a call that no
longer waits is refused (nobody can be asked).

Example::

    from agents import Agent, Runner
    from foldkit_agent.adapters.openai_agents import tools

    copilot = Agent(name="copilot", tools=tools(runtime, credentials_of=lambda ctx: ctx.context))
    await Runner.run(copilot, "Add milk to my list", context=current_user)
"""

from __future__ import annotations

import copy
import json
import re
from collections import OrderedDict
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Final, TypeAlias, cast

from ..errors import needs_extra

with needs_extra(__name__):  # a missing library is answered with the extra to install
    from agents import AgentBase, FunctionTool, RunContextWrapper, Tool, ToolApprovalItem
    from agents.tool_context import ToolContext

    from ..contract.approval import Approval, ApprovalRequest, Approver
    from ..contract.declare import AgentDefinition, Capability
    from ..edge.approvals import ParkedApproval
    from ..edge.credentials import CallerCredentials, InProcessCalls
    from ..edge.wire import WireError, loads_strict
    from ..runtime.bound import AgentRuntime
    from ..runtime.outcome import Outcome

__all__ = ["TRANSPORT", "CredentialsOf", "FoldkitTools", "Resolve", "strict_schema", "tools"]


TRANSPORT: Final = "openai-agents"
"""``Invocation.transport`` of every call made through these tools."""

Resolve: TypeAlias = Callable[
    [RunContextWrapper[Any]], "AgentRuntime[Any, Any] | Awaitable[AgentRuntime[Any, Any]]"
]
"""``(run_context) -> AgentRuntime`` (or an awaitable of one): one runtime per user or tenant,
read from ``ctx.context``."""

CredentialsOf: TypeAlias = Callable[[RunContextWrapper[Any]], Any]
"""``(run_context) -> credentials`` (or an awaitable), put on ``Invocation.credentials``."""


# -- strict mode ------------------------------------------------------------------------------

# Keywords OpenAI's strict mode accepts as they are.
_KEPT: Final = frozenset(
    {
        "type",
        "properties",
        "required",
        "additionalProperties",
        "items",
        "anyOf",
        "enum",
        "const",
        "description",
        "pattern",
        "format",
        "minimum",
        "maximum",
        "exclusiveMinimum",
        "exclusiveMaximum",
        "multipleOf",
        "minItems",
        "maxItems",
    }
)
# Annotations that only inform; strict mode refuses them, so they are dropped.
_DROPPED: Final = frozenset({"default", "title", "examples", "$schema", "$comment"})
# Constraints strict mode cannot carry; they move into the description (the runtime enforces).
_NOTED: Final = frozenset(
    {"minLength", "maxLength", "uniqueItems", "minProperties", "maxProperties"}
)
# String formats strict mode knows.
_FORMATS: Final = frozenset(
    {"date-time", "time", "date", "duration", "email", "hostname", "ipv4", "ipv6", "uuid"}
)
_LOOKAROUND: Final = re.compile(r"\(\?<?[=!]")
_NULL: Final[dict[str, Any]] = {"type": "null"}


class _NotStrict(Exception):
    """The schema cannot be rewritten for strict mode without changing what it accepts."""


@dataclass
class _Nulls:
    """Where strict mode's ``null`` stands for a field left out, mirroring a schema's shape."""

    drop: frozenset[str] = frozenset()  # optional, non-nullable fields of this object
    keys: frozenset[str] | None = None  # this object's properties (to pick an anyOf branch)
    props: dict[str, _Nulls] = field(default_factory=lambda: {})
    items: _Nulls | None = None
    any_of: list[_Nulls] = field(default_factory=lambda: [])

    def restore(self, value: Any) -> None:
        """Remove, in place, the ``null`` fields strict mode made the model send."""
        if isinstance(value, dict):
            obj = cast("dict[str, Any]", value)
            if self.keys is not None:
                for key in self.drop:
                    if key in obj and obj[key] is None:
                        del obj[key]
                for key, child in self.props.items():
                    if key in obj:
                        child.restore(obj[key])
            else:
                present = frozenset(obj)
                for branch in self.any_of:
                    if branch.keys == present:
                        branch.restore(obj)
                        break
        elif isinstance(value, list):
            items = self.items if self.items is not None else _branch_with_items(self.any_of)
            if items is not None:
                for item in cast("list[Any]", value):
                    items.restore(item)


def _branch_with_items(branches: list[_Nulls]) -> _Nulls | None:
    return next((b.items for b in branches if b.items is not None), None)


def _nullable(schema: Mapping[str, Any]) -> bool:
    if schema.get("type") == "null":
        return True
    any_of = schema.get("anyOf")
    return isinstance(any_of, list) and any(
        isinstance(b, dict) and _nullable(cast("dict[str, Any]", b))
        for b in cast("list[Any]", any_of)
    )


def _strict(schema: Any) -> tuple[dict[str, Any], _Nulls | None]:
    if not isinstance(schema, dict):
        raise _NotStrict
    source = cast("dict[str, Any]", schema)
    out: dict[str, Any] = {}
    notes: list[str] = []
    for key, value in source.items():
        if key in _DROPPED:
            continue
        if key in _NOTED:
            notes.append(f"{key}={json.dumps(value)}")
        elif key == "format" and value not in _FORMATS:
            notes.append(f"format={json.dumps(value)}")
        elif key == "pattern" and isinstance(value, str) and _LOOKAROUND.search(value):
            notes.append(f"pattern={json.dumps(value)}")
        elif key in _KEPT:
            out[key] = value
        else:
            raise _NotStrict
    nulls = _Nulls()
    useful = False
    if out.get("type") == "object" or "properties" in out:
        if out.get("additionalProperties", False) is not False:
            raise _NotStrict
        props = cast("dict[str, Any]", out.get("properties", {}))
        required = set(cast("list[str]", out.get("required", [])))
        strict_props: dict[str, Any] = {}
        drop: set[str] = set()
        for name, prop in props.items():
            strict_prop, child = _strict(prop)
            if name not in required and not _nullable(strict_prop):
                description = strict_prop.pop("description", None)
                strict_prop = {"anyOf": [strict_prop, dict(_NULL)]}
                if description is not None:
                    strict_prop["description"] = description
                drop.add(name)
            strict_props[name] = strict_prop
            if child is not None:
                nulls.props[name] = child
        out.update(
            type="object", properties=strict_props, required=list(props), additionalProperties=False
        )
        nulls.drop, nulls.keys = frozenset(drop), frozenset(props)
        useful = bool(drop or nulls.props)
    if out.get("type") == "array":
        items = out.get("items")
        if not isinstance(items, dict) or not items:
            raise _NotStrict  # strict mode needs typed items
        out["items"], nulls.items = _strict(items)
        useful = useful or nulls.items is not None
    if "anyOf" in out:
        branches = out["anyOf"]
        if not isinstance(branches, list) or not branches:
            raise _NotStrict
        strict_branches: list[Any] = []
        for branch in cast("list[Any]", branches):
            strict_branch, child = _strict(branch)
            strict_branches.append(strict_branch)
            if child is not None:
                nulls.any_of.append(child)
        out["anyOf"] = strict_branches
        useful = useful or bool(nulls.any_of)
    if notes:
        note = "; ".join(notes)
        description = out.get("description")
        out["description"] = f"{description} ({note})" if description else f"({note})"
    return out, (nulls if useful else None)


def strict_schema(schema: Mapping[str, Any]) -> tuple[dict[str, Any], Callable[[Any], Any]] | None:
    """Rewrite a compatibility-profile input schema for OpenAI's strict function calling.

    Args:
        schema: a capability's ``input_schema`` (an object schema, closed, without ``$ref``).

    Returns:
        ``(strict_schema, restore)`` where ``restore(arguments)`` turns arguments the model
        sent under the strict schema back into the capability's input (it removes the ``null``
        of each optional field strict mode made required, in place, and returns the
        arguments); or ``None`` when the schema has something strict mode cannot express
        without accepting other values (``oneOf``, ``allOf``, tuples, untyped arrays, open
        objects...), in which case the tool is sent non-strict.

    Example:
        >>> strict, restore = strict_schema({"type": "object", "additionalProperties": False,
        ...     "properties": {"n": {"type": "integer", "default": 1}}})
        >>> strict["properties"]["n"], strict["required"]
        ({'anyOf': [{'type': 'integer'}, {'type': 'null'}]}, ['n'])
        >>> restore({"n": None})
        {}
    """
    if schema.get("type") != "object":
        return None
    try:
        rewritten, nulls = _strict(copy.deepcopy(dict(schema)))
    except _NotStrict:
        return None

    def restore(arguments: Any) -> Any:
        if nulls is not None:
            nulls.restore(arguments)
        return arguments

    return rewritten, restore


# -- tools ------------------------------------------------------------------------------------


_UNSEEN: Final = object()


class _Availability:
    """The names available in one Model, computed once for all of a turn's ``is_enabled``."""

    __slots__ = ("_model", "_names")

    def __init__(self) -> None:
        self._model: Any = _UNSEEN
        self._names: frozenset[str] = frozenset()

    def names(self, rt: AgentRuntime[Any, Any]) -> frozenset[str]:
        model = rt.host.model()
        if model is not self._model:
            self._names = frozenset(c.name for c in rt.available_in(model))
            self._model = model
        return self._names


class _Tools(InProcessCalls[RunContextWrapper[Any]]):
    """What every tool built by one :func:`tools` call shares; calls waiting for a person wait
    by the SDK's tool call id."""

    def __init__(
        self,
        target: object,
        credentials: CallerCredentials[RunContextWrapper[Any]],
        approver: Approver | None,
    ) -> None:
        super().__init__(target, credentials, approver, transport=TRANSPORT, caller="tools")
        self.parked = self.calls.parked
        # calls a needs_approval check already ran to the end (nobody had to be asked)
        self.answered: OrderedDict[str, Outcome] = OrderedDict()
        self.availability: dict[int, tuple[AgentRuntime[Any, Any], _Availability]] = {}

    async def available(self, ctx: RunContextWrapper[Any], name: str) -> bool:
        rt = await self.runtime(ctx)
        entry = self.availability.get(id(rt))
        if entry is None or entry[0] is not rt:
            entry = self.availability[id(rt)] = (rt, _Availability())
        return name in entry[1].names(rt)

    def tool(self, cap: Capability, strict: bool) -> FunctionTool:
        name = cap.name
        rewritten = strict_schema(cap.input_schema) if strict else None
        restore = rewritten[1] if rewritten is not None else None

        def payload_of(arguments: str) -> Any:
            try:
                payload: Any = loads_strict(arguments or "{}")
            except WireError:
                return arguments  # not a JSON object: the runtime refuses it, audited
            return restore(payload) if restore is not None else payload

        async def on_invoke_tool(ctx: ToolContext[Any], arguments: str) -> str:
            call_id = ctx.tool_call_id
            answered = self.answered.pop(call_id, None)
            if answered is not None:
                return _text(answered)
            # the SDK ran it, so the person approved
            resumed = await self.calls.resume(call_id, None, name, Approval(approved=True))
            if resumed is not None:
                return _text(resumed)
            got = await self.run(ctx, name, payload_of(arguments))
            assert not isinstance(got, ParkedApproval)  # parked only when given park=
            return _text(got)

        async def is_enabled(ctx: RunContextWrapper[Any], agent: AgentBase[Any]) -> bool:
            self.decline_rejected(ctx)
            return await self.available(ctx, name)

        async def needs_approval(
            ctx: RunContextWrapper[Any], params: dict[str, Any], call_id: str
        ) -> bool:
            if call_id in self.parked:
                return True
            payload = copy.deepcopy(params)  # the SDK's parse of the model's arguments
            return await self.ask(ctx, name, restore(payload) if restore else payload, call_id)

        return FunctionTool(
            name=name,
            description=cap.description,
            params_json_schema=rewritten[0] if rewritten is not None else cap.input_schema,
            on_invoke_tool=on_invoke_tool,
            strict_json_schema=rewritten is not None,
            is_enabled=is_enabled,
            needs_approval=needs_approval if cap.confirm and self.approver is None else False,
        )

    async def ask(self, ctx: RunContextWrapper[Any], name: str, payload: Any, call_id: str) -> bool:
        """Start the call; ``True`` when it now waits for a person (parked under ``call_id``)."""
        got = await self.run(ctx, name, payload, park=call_id)
        if isinstance(got, ParkedApproval):
            return True
        self.answered[call_id] = got
        while len(self.answered) > _MAX_ANSWERED:
            self.answered.popitem(last=False)
        return False

    def decline_rejected(self, ctx: RunContextWrapper[Any]) -> None:
        """Hand each call the person rejected its answer (the SDK runs no tool for it)."""
        for parked in self.parked.of(None):
            if ctx.is_tool_approved(parked.capability, parked.key) is False:
                self.calls.answer(parked.key, None, parked.capability, Approval(approved=False))

    def approval_request(self, call_id: str) -> ApprovalRequest | None:
        for parked in self.parked.of(None):
            if parked.key == call_id:
                return parked.request
        return None


_MAX_ANSWERED: Final = 1024  # calls answered at the approval check, waiting for the SDK to ask


def _text(outcome: Outcome) -> str:
    return outcome.data_json() if outcome.ok else outcome.text


class FoldkitTools(list[Tool]):
    """The list :func:`tools` returns: one ``FunctionTool`` per capability (typed as the SDK's
    ``Tool``, so it is what ``Agent(tools=...)`` takes), plus :meth:`approval_request` for a
    run interrupted to ask a person."""

    def __init__(self, tools: list[FunctionTool], shared: _Tools) -> None:
        super().__init__(tools)
        self._shared = shared

    def approval_request(self, call: ToolApprovalItem | str) -> ApprovalRequest | None:
        """What the person is asked about an interrupted call: the Message and its preview.

        Args:
            call: one of ``result.interruptions``, or its call id.

        Returns:
            The :class:`~foldkit_agent.ApprovalRequest` (show ``request.text()``); ``None`` when
            that call no longer waits (answered, timed out) or is not one of these tools'.

        Example:
            >>> for item in result.interruptions:
            ...     print(every.approval_request(item).text())
        """
        call_id = call if isinstance(call, str) else call.call_id
        return None if call_id is None else self._shared.approval_request(call_id)


def tools(
    target: AgentRuntime[Any, Any] | Resolve,
    *,
    definition: AgentDefinition | None = None,
    credentials: Any = None,
    credentials_of: CredentialsOf | None = None,
    strict: bool = True,
    approver: Approver | None = None,
    idempotency_key_of: CredentialsOf | None = None,
) -> FoldkitTools:
    """The contract's capabilities as OpenAI Agents SDK function tools.

    Args:
        target: a bound runtime, or ``resolve(run_context) -> AgentRuntime`` (sync or async) to
            serve one application instance per user or tenant (read ``ctx.context``).
        definition: the contract (from ``agent.make``); required with a ``resolve`` target,
            since the tools are built before any run. Defaults to the runtime's.
        credentials: the credentials every call carries (``Invocation.credentials``, read by the
            runtime's principal provider), fixed by the application when it builds the tools.
        credentials_of: ``(run_context) -> credentials`` (sync or async), read per call from the
            run's context instead; exclusive with ``credentials``. Never the model's arguments.
        idempotency_key_of: ``(run_context) -> str | None`` (sync or async): each call's
            idempotency key (``docs/retries.md``), read from the ``ToolContext`` of the call
            (``lambda ctx: ctx.tool_call_id``; at a ``needs_approval`` check, the run's
            context). Default: calls carry none.
        strict: rewrite each schema for strict function calling (see the module docstring);
            ``False`` sends the compatibility-profile schema non-strict.
        approver: ``async (ApprovalRequest) -> Approval``, asked during the call for a
            ``confirm`` capability (``Invocation.approver``). Without one, such a tool has
            ``needs_approval``: the run is interrupted the SDK's way (see the module docstring).

    Returns:
        :class:`FoldkitTools`: one ``FunctionTool`` per capability, in declaration order; each
        is enabled only while its capability is available.

    Raises:
        TypeError: ``target`` is neither a runtime nor a callable; a ``resolve`` target without
            ``definition``; both credentials forms given.

    Example:
        >>> copilot = Agent(name="copilot", model=model, tools=tools(runtime, credentials=alice))
        >>> await Runner.run(copilot, "Add milk to my list")
    """
    who = CallerCredentials[RunContextWrapper[Any]](
        credentials, credentials_of, caller="tools", idempotency_key_of=idempotency_key_of
    )
    shared = _Tools(target, who, approver)
    if definition is None:
        if shared.static is None:
            raise TypeError("tools(resolve, ...) needs definition= (the contract from agent.make)")
        definition = shared.static.definition
    return FoldkitTools([shared.tool(cap, strict) for cap in definition.capabilities], shared)
