"""A2A adapter: every exposed capability becomes an A2A skill, served with ``a2a-sdk`` 1.x.

:func:`a2a_app` returns a Starlette application that speaks A2A 1.0 over JSON-RPC and
HTTP+JSON and serves the Agent Card at ``/.well-known/agent-card.json``. It translates only:
the bound runtime resolves, checks, authorizes, dispatches and audits every call.

Routes (absolute paths; mount the app at the root of its origin)::

    GET  /.well-known/agent-card.json       public Agent Card (every capability as a skill)
    POST /a2a/jsonrpc                       JSON-RPC binding (SendMessage, GetTask, ...)
    *    /a2a/rest/...                      HTTP+JSON binding (POST /a2a/rest/message:send, ...)

Calling a skill. A2A has no field that names a skill, so this package defines an extension,
:data:`EXTENSION_URI`. A call is a ``SendMessage`` whose request metadata (or message metadata)
holds ``{EXTENSION_URI: {"skill": "<capability name>"}}`` and whose message carries the input
as one data part (no data part means ``{}``). The card lists the extension in
``capabilities.extensions``; its ``params`` hold ``{"skills": {name: {"inputSchema": ...}}}``.

Outcome mapping (from :func:`foldkit_agent.runtime.outcome.summarize`):

=================================  ==========================================================
outcome                            A2A result
=================================  ==========================================================
success (dispatched / completed)   task ``COMPLETED``, one data artifact ``result``
refusal (unavailable, invalid      task ``REJECTED``; status message: a text part for the
input, unauthorized, ...)          agent and a data part with the error JSON
completion failure                 task ``FAILED``, same message shape
timeout / delivery unknown         task ``FAILED``; the text says the outcome is unknown
cancelled (``CancelTask``)         task ``CANCELED``
no skill / unknown skill           JSON-RPC ``-32602`` (HTTP+JSON: 400) invalid params
anything unexpected                task ``FAILED`` with a generic text (never exception text)
=================================  ==========================================================
"""

from __future__ import annotations

import asyncio
import inspect
import json
import logging
import math
from collections.abc import (
    AsyncGenerator,
    AsyncIterator,
    Awaitable,
    Callable,
    Iterable,
    Mapping,
    Sequence,
)
from contextlib import asynccontextmanager, suppress
from dataclasses import dataclass
from typing import Any, cast
from urllib.parse import urlsplit

from a2a.helpers import new_data_part, new_text_part
from a2a.server.agent_execution import AgentExecutor, RequestContext
from a2a.server.context import ServerCallContext
from a2a.server.events import EventQueue
from a2a.server.request_handlers import DefaultRequestHandler
from a2a.server.request_handlers.response_helpers import agent_card_to_dict
from a2a.server.routes import create_jsonrpc_routes, create_rest_routes
from a2a.server.routes.common import DefaultServerCallContextBuilder
from a2a.server.routes.jsonrpc_dispatcher import JsonRpcDispatcher
from a2a.server.tasks import InMemoryTaskStore, TaskUpdater
from a2a.types import (
    AgentCapabilities,
    AgentCard,
    AgentExtension,
    AgentInterface,
    AgentSkill,
    GetTaskRequest,
    HTTPAuthSecurityScheme,
    ListTaskPushNotificationConfigsRequest,
    ListTasksRequest,
    Message,
    Part,
    SecurityRequirement,
    SecurityScheme,
    SendMessageRequest,
    StringList,
    Task,
    TaskPushNotificationConfig,
    TaskState,
    TaskStatus,
)
from a2a.utils.constants import AGENT_CARD_WELL_KNOWN_PATH
from a2a.utils.errors import (
    A2A_ERROR_REASONS,
    JSON_RPC_ERROR_CODE_MAP,
    A2AError,
    InternalError,
    InvalidParamsError,
)
from a2a.utils.proto_utils import parse_params
from google.protobuf.json_format import MessageToDict, ParseDict
from google.protobuf.message import Message as ProtoMessage
from starlette.applications import Starlette
from starlette.authentication import (
    AuthCredentials,
    AuthenticationBackend,
    AuthenticationError,
    BaseUser,
    SimpleUser,
)
from starlette.datastructures import Headers, MutableHeaders, QueryParams
from starlette.middleware import Middleware
from starlette.middleware.authentication import AuthenticationMiddleware
from starlette.requests import HTTPConnection, Request
from starlette.responses import JSONResponse, Response
from starlette.routing import BaseRoute, Route
from starlette.types import ASGIApp, Receive, Scope, Send
from starlette.types import Message as AsgiMessage

from ...contract.calls import Invocation, new_invocation_id
from ...contract.declare import Capability
from ...edge.wire import LOOPBACK_HOSTS, JsonBodyGuard, is_json_content_type
from ...errors import AgentCancelledError, AgentUnknownCapabilityError
from ...runtime.bound import AgentRuntime
from ...runtime.outcome import Outcome, summarize

__all__ = [
    "CARD_PATH",
    "DEFAULT_MAX_BODY",
    "EXTENSION_URI",
    "JSONRPC_PATH",
    "REST_PREFIX",
    "A2ACaller",
    "BearerTokenBackend",
    "CapabilityExecutor",
    "CredentialsRequiredError",
    "RuntimeTarget",
    "a2a_app",
    "build_agent_card",
    "integers_from_doubles",
]

_log = logging.getLogger("foldkit_agent.adapters.a2a")

EXTENSION_URI = "https://foldkit-agent.dev/a2a/skills/v1"
"""The extension that names the skill of a call and publishes each skill's input schema.

Stable for the life of major version 1 of this package. On a call:
``metadata[EXTENSION_URI] = {"skill": "<capability name>"}`` (request or message metadata).
On the card: ``AgentExtension(uri=EXTENSION_URI, params={"skills": {name: {"inputSchema":
<JSON Schema>}}})``.
"""

CARD_PATH = AGENT_CARD_WELL_KNOWN_PATH
"""``/.well-known/agent-card.json``."""

JSONRPC_PATH = "/a2a/jsonrpc"
"""Where the JSON-RPC binding is served."""

REST_PREFIX = "/a2a/rest"
"""The prefix of the HTTP+JSON binding (``POST /a2a/rest/message:send`` and so on)."""

DEFAULT_MAX_BODY = 1024 * 1024
"""Largest request body :func:`a2a_app` accepts, in bytes (1 MiB); larger is HTTP 413."""

_CREDENTIALS_KEY = "foldkit_agent.credentials"
_SECRET_HEADERS = ("authorization", "cookie", "proxy-authorization")
_CANCEL_GRACE = 2.0  # seconds cancel() waits for the running call to record its own answer
_GENERIC_FAILURE = "The call failed unexpectedly; whether it was applied is unknown."

RuntimeTarget = AgentRuntime[Any, Any] | Callable[[ServerCallContext], Any]
"""An :class:`AgentRuntime`, or ``resolve(call_context) -> AgentRuntime`` (sync or async)."""


@dataclass(frozen=True, slots=True)
class A2ACaller:
    """What Starlette authentication established for one A2A request.

    Put on :attr:`Invocation.credentials <foldkit_agent.contract.calls.Invocation.credentials>`
    (transport ``"a2a"``) for the runtime's principal provider. Unauthenticated requests carry
    ``credentials=None`` instead.

    Attributes:
        subject: the user's identity (``user.identity``, else ``user.display_name``).
        scopes: the scopes of ``request.auth`` (``AuthCredentials.scopes``).
        user: the Starlette user object the backend returned.
    """

    subject: str
    scopes: tuple[str, ...]
    user: BaseUser


class CredentialsRequiredError(AuthenticationError):
    """Raised by an authentication backend for a request that must carry credentials but
    carries none; :func:`a2a_app` answers it 401 saying a bearer token is required."""


class BearerTokenBackend(AuthenticationBackend):
    """A Starlette authentication backend over a fixed bearer-token table.

    For demos, tests and local tools (the counterpart of the MCP adapter's
    ``StaticTokenVerifier``); production deployments verify real tokens. A header with an
    unknown token (or another scheme) is answered 401 by :func:`a2a_app`. A request without an
    ``Authorization`` header is anonymous (protected capabilities then refuse it), unless
    ``required``.

    Args:
        tokens: ``{token: (subject, scopes)}``.
        required: every request except the public Agent Card (``GET`` or ``HEAD``
            :data:`CARD_PATH`) must carry a known bearer token; without one it is answered
            401. :func:`a2a_app` then also declares the scheme in the card's top-level
            ``securityRequirements``. Default ``False``.

    Attributes:
        required: as given; :func:`a2a_app` reads it (any backend may define it).

    Example:
        >>> a2a_app(rt, name="todo", version="1", base_url=url,
        ...         authentication=BearerTokenBackend({"alice-token": ("alice", ["todos:delete"])},
        ...                                           required=True))
    """

    def __init__(
        self, tokens: Mapping[str, tuple[str, Sequence[str]]], *, required: bool = False
    ) -> None:
        self._tokens = {t: (who, list(scopes)) for t, (who, scopes) in tokens.items()}
        self.required = required

    async def authenticate(self, conn: HTTPConnection) -> tuple[AuthCredentials, BaseUser] | None:
        header = conn.headers.get("authorization")
        if header is None:
            if self.required and not _is_public_card(conn.scope):
                raise CredentialsRequiredError("a bearer token is required")
            return None
        scheme, _, token = header.partition(" ")
        found = self._tokens.get(token.strip()) if scheme.lower() == "bearer" else None
        if found is None:
            raise AuthenticationError("unknown bearer token")
        who, scopes = found
        return AuthCredentials(scopes), SimpleUser(who)


def _route_path(scope: Scope) -> str:
    """The request path relative to the app (``root_path`` removed, as Starlette routes it)."""
    path = str(scope.get("path", ""))
    root = str(scope.get("root_path", ""))
    return path[len(root) :] if root and path.startswith(root) else path


def _is_public_card(scope: Scope) -> bool:
    return scope.get("method") in ("GET", "HEAD") and _route_path(scope) == CARD_PATH


# ---------------------------------------------------------------------------------------------
# numbers
# ---------------------------------------------------------------------------------------------


def integers_from_doubles(value: Any, schema: Mapping[str, Any]) -> Any:
    """Turn integral floats back into ints wherever ``schema`` says ``integer``.

    A2A 1.x carries data parts as ``google.protobuf.Value``, where every number is a double:
    ``{"qty": 2}`` arrives as ``{"qty": 2.0}``. This walks the value along the schema
    (``properties``, ``additionalProperties``, ``items``, ``prefixItems``, ``anyOf``,
    ``allOf``) and converts only finite integral floats at integer positions. Nothing else is
    coerced: ``2.5`` stays ``2.5`` (and is refused by the decoder), a float where the schema
    says ``number`` stays a float, strings and booleans are untouched.

    Args:
        value: decoded JSON data (dicts, lists, str, float, bool, None).
        schema: the capability's input JSON Schema (compatibility profile).

    Returns:
        A new value of the same shape (the input is not modified).

    Protocol: A2A 1.0 ``Part.data`` is a ``google.protobuf.Value`` (JSON numbers are doubles).

    Example:
        >>> integers_from_doubles({"qty": 2.0, "price": 2.0},
        ...     {"type": "object", "properties": {"qty": {"type": "integer"},
        ...                                       "price": {"type": "number"}}})
        {'qty': 2, 'price': 2.0}
    """
    for part in _schemas(schema.get("allOf")):
        value = integers_from_doubles(value, part)
    branches = _schemas(schema.get("anyOf"))
    if branches:
        branch = _pick_branch(value, branches)
        return value if branch is None else integers_from_doubles(value, branch)
    types = _types(schema)
    if isinstance(value, float):
        integral = math.isfinite(value) and value.is_integer()
        return int(value) if integral and "integer" in types and "number" not in types else value
    if isinstance(value, dict):
        props = _schema_map(schema.get("properties"))
        extra = _schema(schema.get("additionalProperties"))
        out: dict[str, Any] = {}
        for key, item in cast(dict[str, Any], value).items():
            sub = props.get(key, extra)
            out[key] = item if sub is None else integers_from_doubles(item, sub)
        return out
    if isinstance(value, list):
        prefix = _schemas(schema.get("prefixItems"))
        rest = _schema(schema.get("items"))
        result: list[Any] = []
        for i, item in enumerate(cast(list[Any], value)):
            sub = prefix[i] if i < len(prefix) else rest
            result.append(item if sub is None else integers_from_doubles(item, sub))
        return result
    return value


def _schema(value: Any) -> Mapping[str, Any] | None:
    return cast(Mapping[str, Any], value) if isinstance(value, Mapping) else None


def _schemas(value: Any) -> list[Mapping[str, Any]]:
    items = cast(list[Any], value) if isinstance(value, list) else []
    return [s for s in (_schema(i) for i in items) if s is not None]


def _schema_map(value: Any) -> dict[str, Mapping[str, Any]]:
    props = _schema(value) or {}
    return {k: s for k, s in ((k, _schema(v)) for k, v in props.items()) if s is not None}


def _types(schema: Mapping[str, Any]) -> set[str]:
    t: Any = schema.get("type")
    if isinstance(t, str):
        return {t}
    items = cast(list[Any], t) if isinstance(t, list) else []
    return {x for x in items if isinstance(x, str)}


def _pick_branch(value: Any, branches: Sequence[Mapping[str, Any]]) -> Mapping[str, Any] | None:
    """The first ``anyOf`` branch whose JSON type fits ``value`` (consts and keys pick objects)."""
    if isinstance(value, float):
        fits = [b for b in branches if _types(b) & {"integer", "number"}]
        if any("number" in _types(b) for b in fits):
            return None  # a number is acceptable as it is
        return fits[0] if fits else None
    if isinstance(value, dict):
        data = cast(dict[str, Any], value)
        objects = [b for b in branches if "object" in _types(b) or "properties" in b]
        for b in objects:
            props = _schema_map(b.get("properties"))
            consts_ok = all(
                key not in data or data[key] == sub["const"]
                for key, sub in props.items()
                if "const" in sub
            )
            if consts_ok and all(k in props for k in data):
                return b
        return objects[0] if objects else None
    if isinstance(value, list):
        arrays = [b for b in branches if "array" in _types(b) or "items" in b or "prefixItems" in b]
        return arrays[0] if arrays else None
    return None  # strings, booleans and null are never converted


# ---------------------------------------------------------------------------------------------
# the card
# ---------------------------------------------------------------------------------------------


def _skill_title(name: str) -> str:
    words = name.replace("-", "_").split("_")
    text = " ".join(w for w in words if w)
    return text[:1].upper() + text[1:] if text else name


def _skill(cap: Capability, scheme_name: str | None) -> AgentSkill:
    skill = AgentSkill(
        id=cap.name,
        name=_skill_title(cap.name),
        description=cap.description,
        tags=[cap.tag],
        input_modes=["application/json"],
        output_modes=["application/json"],
    )
    if scheme_name is not None and cap.authorize is not None:
        skill.security_requirements.append(
            SecurityRequirement(schemes={scheme_name: StringList(list=[])})
        )
    return skill


def _extension_params(caps: Sequence[Capability]) -> dict[str, Any]:
    return {"skills": {c.name: {"inputSchema": c.input_schema} for c in caps}}


def build_agent_card(
    capabilities: Sequence[Capability],
    *,
    name: str,
    version: str,
    base_url: str,
    description: str | None = None,
    security_scheme: SecurityScheme | None = None,
    security_required: bool = False,
) -> AgentCard:
    """The Agent Card listing ``capabilities`` as skills.

    Args:
        capabilities: the capabilities to list (all of them for the public card, the available
            ones for a caller's extended card).
        name, version: the agent's name and version.
        base_url: the origin the app is served at (``http://127.0.0.1:8000``); the JSON-RPC and
            HTTP+JSON interface URLs are derived from it.
        description: the agent's description; a default sentence when omitted.
        security_scheme: declared as ``"foldkit"`` in ``security_schemes`` when given, and
            required by every skill whose capability has an ``authorize`` hook.
        security_required: with ``security_scheme``, the card also lists it in its top-level
            ``security_requirements``: every call needs credentials, whatever the skill.

    Returns:
        An ``a2a.types.AgentCard`` (protobuf) with one ``AgentSkill`` per capability (``id`` is
        the capability name, ``tags`` its Message tag) and :data:`EXTENSION_URI` in
        ``capabilities.extensions`` carrying every listed skill's input JSON Schema.

    Protocol: A2A 1.0 ``AgentCard``, ``AgentSkill``, ``AgentExtension`` (extensions carry
    their data in ``params``), ``SecurityScheme``/``SecurityRequirement``.

    Example:
        >>> card = build_agent_card(rt.messages.all(), name="todo", version="1", base_url=url)
        >>> [s.id for s in card.skills]
        ['create_todo', ...]
    """
    base = base_url.rstrip("/")
    scheme_name = "foldkit" if security_scheme is not None else None
    extension = AgentExtension(
        uri=EXTENSION_URI,
        description=(
            'Invoke a skill: put {"skill": <skill id>} under this URI in the request (or message) '
            "metadata and send the input as one data part. params.skills[<id>].inputSchema is "
            "the JSON Schema the input must satisfy; undeclared fields are refused."
        ),
        required=False,
    )
    extension.params.update(_extension_params(capabilities))
    card = AgentCard(
        name=name,
        description=description or f"{name}: an application an agent can drive through its skills.",
        version=version,
        supported_interfaces=[
            AgentInterface(
                protocol_binding="JSONRPC", protocol_version="1.0", url=base + JSONRPC_PATH
            ),
            AgentInterface(
                protocol_binding="HTTP+JSON", protocol_version="1.0", url=base + REST_PREFIX
            ),
        ],
        capabilities=AgentCapabilities(
            streaming=True,
            push_notifications=False,
            extended_agent_card=True,
            extensions=[extension],
        ),
        default_input_modes=["application/json"],
        default_output_modes=["application/json"],
        skills=[_skill(c, scheme_name) for c in capabilities],
    )
    if security_scheme is not None:
        card.security_schemes["foldkit"].CopyFrom(security_scheme)
        if security_required:
            card.security_requirements.append(
                SecurityRequirement(schemes={"foldkit": StringList(list=[])})
            )
    return card


# ---------------------------------------------------------------------------------------------
# the executor
# ---------------------------------------------------------------------------------------------


@dataclass(slots=True)
class _Run:
    signal: asyncio.Event
    updater: TaskUpdater
    done: asyncio.Event


class CapabilityExecutor(AgentExecutor):
    """The ``AgentExecutor`` that runs one capability per A2A task.

    Reads the skill name from the extension metadata and the input from the one data part,
    restores integers, dispatches through the runtime with an :class:`Invocation` (transport
    ``"a2a"``, id = task id, the task's cancel signal, the caller's credentials) and publishes
    the outcome as task events. Every exception is caught: nothing unexpected reaches the SDK,
    which would echo its text to the caller.

    Protocol: ``a2a.server.agent_execution.AgentExecutor``; a ``Task`` is enqueued before any
    status update, as the SDK requires.

    Args:
        resolve: ``async (call_context) -> AgentRuntime``.

    Example:
        >>> DefaultRequestHandler(agent_executor=CapabilityExecutor(resolve), ...)
    """

    def __init__(
        self, resolve: Callable[[ServerCallContext], Awaitable[AgentRuntime[Any, Any]]]
    ) -> None:
        self._resolve = resolve
        self._runs: dict[str, _Run] = {}

    async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
        """Run the call named by ``context`` and publish its outcome (see the module docs).

        Raises:
            InvalidParamsError: no skill named, an unknown skill, or the input split over more
                than one data part (raised before any task is created).
        """
        task_id = context.task_id or ""
        context_id = context.context_id or ""
        updater = TaskUpdater(event_queue, task_id, context_id)
        run = _Run(asyncio.Event(), updater, asyncio.Event())
        self._runs[task_id] = run
        started = False
        name: str | None = None
        try:
            message = context.message
            name = _skill_name(context.metadata, message)
            payload = _payload(message)
            runtime = await self._resolve(context.call_context)
            invocation = Invocation(
                id=task_id or new_invocation_id(),
                transport="a2a",
                signal=run.signal,
                credentials=context.call_context.state.get(_CREDENTIALS_KEY),
            )
            cap = await _known(runtime, name, payload, invocation)
            payload = integers_from_doubles(payload, cap.input_schema)
            if context.current_task is None:
                await event_queue.enqueue_event(_new_task(task_id, context_id, message))
            started = True
            await _quietly(updater.start_work())
            try:
                result: Any = await runtime.messages.dispatch_unknown(name, payload, invocation)
            except asyncio.CancelledError:
                raise
            except Exception as exc:
                result = exc
            await self._publish(updater, result, name)
        except InvalidParamsError as err:
            raise _ours(context.call_context, err) from None
        except asyncio.CancelledError:
            raise
        except Exception:
            _log.exception("A2A call of %r failed unexpectedly", name)
            try:
                if not started and context.current_task is None:
                    await event_queue.enqueue_event(_new_task(task_id, context_id, context.message))
                await _finish(
                    updater, TaskState.TASK_STATE_FAILED, summarize(RuntimeError(), capability=name)
                )
            except Exception:
                _log.debug("could not record the failure of task %s", task_id, exc_info=True)
        finally:
            run.done.set()
            self._runs.pop(task_id, None)

    async def _publish(self, updater: TaskUpdater, result: Any, name: str) -> None:
        outcome = summarize(result, capability=name)
        if outcome.ok:
            await updater.add_artifact([new_data_part(outcome.data)], name="result")
            await updater.complete()
            return
        if isinstance(result, AgentCancelledError):
            state = TaskState.TASK_STATE_CANCELED
        elif outcome.kind == "refused":
            state = TaskState.TASK_STATE_REJECTED
        else:  # failed, unknown (timeout, delivery unknown), defect
            state = TaskState.TASK_STATE_FAILED
            if outcome.kind == "defect" and isinstance(result, BaseException):
                _log.error("capability %r raised", name, exc_info=result)
        await _finish(updater, state, outcome)

    async def abort_runs(self, grace: float) -> None:
        """Abort every running call (server shutdown) and wait up to ``grace`` seconds for each
        to publish its own answer (``CANCELED``: whether the Message was sent)."""
        runs = list(self._runs.values())
        for run in runs:
            run.signal.set()
        waits = [asyncio.ensure_future(r.done.wait()) for r in runs]
        if waits:
            await asyncio.wait(waits, timeout=grace)
        for wait in waits:
            wait.cancel()

    async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
        """Abort the task's invocation (sets its signal) and record the task as ``CANCELED``.

        The running call answers with the runtime's own cancellation text (whether the Message
        was sent); if it has not answered within a short grace period, a generic cancellation
        is recorded instead.
        """
        run = self._runs.get(context.task_id or "")
        if run is None:
            updater = TaskUpdater(event_queue, context.task_id or "", context.context_id or "")
            await _quietly(updater.cancel(_agent_message(updater, "The call was cancelled.", None)))
            return
        run.signal.set()
        with suppress(TimeoutError):
            await asyncio.wait_for(run.done.wait(), _CANCEL_GRACE)
        await _quietly(
            run.updater.cancel(_agent_message(run.updater, "The call was cancelled.", None))
        )


async def _settle(handler: DefaultRequestHandler, grace: float) -> None:
    """Wait up to ``grace`` seconds for the SDK to deliver the events already published.

    ``aclose`` force-closes its active tasks; one closed before it consumed a task's last
    status update would answer the caller with a task still ``WORKING``. The registry has no
    public accessor in a2a-sdk 1.3, hence the guarded private reads.
    """
    registry = getattr(handler, "_active_task_registry", None)
    active: Any = getattr(registry, "_active_tasks", None)
    if not isinstance(active, dict):
        return
    events = [getattr(t, "_is_finished", None) for t in cast(dict[str, Any], active).values()]
    waits = [asyncio.ensure_future(e.wait()) for e in events if isinstance(e, asyncio.Event)]
    if waits:
        await asyncio.wait(waits, timeout=grace)
    for wait in waits:
        wait.cancel()
    await asyncio.sleep(0)  # let the requests waiting on those events write their answers


async def _quietly(step: Awaitable[None]) -> None:
    with suppress(RuntimeError):  # the task already reached a terminal state
        await step


def _agent_message(updater: TaskUpdater, text: str, data: Mapping[str, Any] | None) -> Message:
    parts: list[Part] = [new_text_part(text)]
    if data is not None:
        parts.append(new_data_part(dict(data)))
    return updater.new_agent_message(parts)


async def _finish(updater: TaskUpdater, state: TaskState, outcome: Outcome) -> None:
    text = _GENERIC_FAILURE if outcome.kind == "defect" else outcome.text
    data = dict(outcome.data)
    if outcome.kind == "defect":
        data["message"] = text
    await _quietly(updater.update_status(state, message=_agent_message(updater, text, data)))


def _new_task(task_id: str, context_id: str, message: Message | None) -> Task:
    task = Task(
        id=task_id, context_id=context_id, status=TaskStatus(state=TaskState.TASK_STATE_SUBMITTED)
    )
    if message is not None:
        task.history.append(message)
    return task


async def _known(
    runtime: AgentRuntime[Any, Any], name: str, payload: Any, invocation: Invocation
) -> Capability:
    """The capability named ``name``; an unknown name is audited and raised as invalid params."""
    cap = runtime.definition.by_name.get(name)
    if cap is not None:
        return cap
    with suppress(AgentUnknownCapabilityError):
        await runtime.messages.dispatch_unknown(name, payload, invocation)
    raise InvalidParamsError(
        message=(
            f"There is no skill named {name!r}. Fetch the agent card (or the extended card) and "
            "use the id of one of its skills."
        )
    )


class _Handler(DefaultRequestHandler):
    """Refuses a call without a known skill before the SDK creates a task for it."""

    def __init__(
        self,
        *,
        resolve: Callable[[ServerCallContext], Awaitable[AgentRuntime[Any, Any]]],
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        self._resolve_runtime = resolve

    async def _precheck(self, params: SendMessageRequest, context: ServerCallContext) -> None:
        try:
            metadata = MessageToDict(params.metadata) if params.HasField("metadata") else {}
            message = params.message if params.HasField("message") else None
            name = _skill_name(metadata, message)
            payload = _payload(message)
            try:
                runtime = await self._resolve_runtime(context)
            except Exception:
                return  # the call itself reports the failure, as a FAILED task (generic text)
            if name not in runtime.definition.by_name:
                invocation = Invocation(
                    transport="a2a", credentials=context.state.get(_CREDENTIALS_KEY)
                )
                await _known(runtime, name, payload, invocation)
        except InvalidParamsError as err:
            raise _ours(context, err) from None

    async def on_message_send(
        self, params: SendMessageRequest, context: ServerCallContext
    ) -> Message | Task:
        await self._precheck(params, context)
        parent: Any = super()
        return cast(Message | Task, await parent.on_message_send(params, context))

    async def on_message_send_stream(  # pyright: ignore[reportIncompatibleMethodOverride]
        self, params: SendMessageRequest, context: ServerCallContext
    ) -> AsyncIterator[Any]:
        await self._precheck(params, context)
        parent: Any = super()
        events = cast(AsyncIterator[Any], parent.on_message_send_stream(params, context))
        async for event in events:
            yield event


def _skill_name(metadata: Mapping[str, Any], message: Message | None) -> str:
    """The skill named in request metadata, else in message metadata."""
    sources: list[Any] = [metadata.get(EXTENSION_URI)]
    if message is not None and message.HasField("metadata"):
        sources.append(MessageToDict(message.metadata).get(EXTENSION_URI))
    for entry in sources:
        if isinstance(entry, Mapping):
            skill = cast(Mapping[str, Any], entry).get("skill")
            if isinstance(skill, str) and skill:
                return skill[:200]
            if skill is not None:
                raise InvalidParamsError(message="The skill must be named by its id, a string.")
    raise InvalidParamsError(
        message=(
            f'Name the skill to run: set metadata[{EXTENSION_URI!r}] = {{"skill": <skill id>}} '
            "on the request or the message, and send the input as one data part."
        )
    )


def _payload(message: Message | None) -> Any:
    """The one data part's value, ``{}`` without one."""
    if message is None:
        return {}
    data = [_value(p) for p in message.parts if p.HasField("data")]
    if len(data) > 1:
        raise InvalidParamsError(message="Send the skill's input as exactly one data part.")
    return data[0] if data else {}


def _value(part: Part) -> Any:
    # MessageToDict on a non-struct Value returns the plain value (list, str, float, ...).
    return cast(Any, MessageToDict(part.data))


# ---------------------------------------------------------------------------------------------
# error answers and log records in our own words
# ---------------------------------------------------------------------------------------------

_ERROR_INFO = "type.googleapis.com/google.rpc.ErrorInfo"
_A2A_DOMAIN = "a2a-protocol.org"
_METHODS = (
    "SendMessage, SendStreamingMessage, GetTask, ListTasks, CancelTask, SubscribeToTask or "
    "GetExtendedAgentCard"
)
_REASON_OF_CODE: dict[int, str] = {
    code: A2A_ERROR_REASONS.get(kind, "INTERNAL_ERROR")
    for kind, code in JSON_RPC_ERROR_CODE_MAP.items()
}
_REASON_OF_CODE[-32700] = "PARSE_ERROR"
_REASON_OF_STATUS = {404: "NOT_FOUND", 405: "METHOD_NOT_ALLOWED"}
_FIXED_TEXTS: dict[str, str] = {
    "PARSE_ERROR": "The body is not valid JSON.",
    "INVALID_REQUEST": (
        'Send one JSON-RPC 2.0 request object: {"jsonrpc": "2.0", "id": 1, "method": "...", '
        '"params": {...}}.'
    ),
    "TASK_NOT_FOUND": "There is no task with that id on this server.",
    "TASK_NOT_CANCELABLE": "The task has already ended, so it can no longer be cancelled.",
    "PUSH_NOTIFICATION_NOT_SUPPORTED": "This agent does not support push notifications.",
    "UNSUPPORTED_OPERATION": "This agent does not support that operation.",
    "CONTENT_TYPE_NOT_SUPPORTED": "This agent accepts and produces application/json only.",
    "INVALID_AGENT_RESPONSE": "The agent produced an answer the server could not deliver.",
    "EXTENDED_AGENT_CARD_NOT_CONFIGURED": "This agent has no extended agent card.",
    "EXTENSION_SUPPORT_REQUIRED": "The call needs an extension the request did not declare.",
    "NOT_FOUND": (
        "There is no A2A route at this path; the agent card's supportedInterfaces name the "
        "JSON-RPC and HTTP+JSON endpoints."
    ),
    "METHOD_NOT_ALLOWED": "This route does not answer that HTTP method.",
}
_GENERIC_ERROR = "The server could not answer this request."
_OWN_TEXTS_KEY = "foldkit_agent.a2a.own_error_texts"
_MAX_ECHO = 64  # characters of a client's method or field name quoted back


def _ours(context: ServerCallContext, error: A2AError) -> A2AError:
    """Mark ``error``'s message as written by this adapter, so the answer keeps it."""
    own = context.state.get(_OWN_TEXTS_KEY)
    if isinstance(own, set):
        cast(set[str], own).add(error.message)
    return error


def _echo(text: str) -> str:
    return repr(text if len(text) <= _MAX_ECHO else text[:_MAX_ECHO] + "...")


def _bad_field(model: type[ProtoMessage], params: Mapping[str, Any]) -> str | None:
    """The first top-level field of ``params`` that does not parse as part of ``model``."""
    for key, value in params.items():
        try:
            ParseDict({key: value}, model(), ignore_unknown_fields=True)
        except Exception:
            return key
    return None


def _bad_query(model: type[ProtoMessage], query: QueryParams) -> str | None:
    for key in query:
        try:
            parse_params(QueryParams([(key, v) for v in query.getlist(key)]), model())
        except Exception:
            return key
    return None


@dataclass(slots=True)
class _Exchange:
    """What the error rewriter needs to know about the request it answers."""

    scope: Scope
    body: bytearray
    own: set[str]

    @property
    def path(self) -> str:
        return _route_path(self.scope)

    def document(self) -> Any:
        try:
            return json.loads(bytes(self.body))
        except ValueError:
            return None

    def rpc_method(self) -> str:
        doc = self.document()
        method: Any = cast(dict[str, Any], doc).get("method") if isinstance(doc, dict) else None
        return method if isinstance(method, str) else ""

    def version_text(self) -> str:
        version = (Headers(scope=self.scope).get("a2a-version") or "").strip()
        if not version:
            return (
                "The request must carry the header A2A-Version: 1.0 (this server speaks A2A "
                "1.0 only)."
            )
        return (
            f"This server speaks A2A 1.0 only and the request asked for version "
            f"{_echo(version)}: send the header A2A-Version: 1.0."
        )

    def rpc_params_text(self) -> str:
        method = self.rpc_method()
        model = JsonRpcDispatcher.METHOD_TO_MODEL.get(method)
        doc = self.document()
        params: Any = cast(dict[str, Any], doc).get("params", {}) if isinstance(doc, dict) else {}
        head = f"The params of {method or 'the call'} do not match the A2A 1.0 schema: "
        if not isinstance(params, dict):
            return head + "params must be a JSON object."
        field = None if model is None else _bad_field(model, cast(dict[str, Any], params))
        if field is None:
            return head + "check them against the specification."
        return head + f"the field {_echo(field)} does not hold a valid value."

    def rest_params_text(self) -> str:
        path, method = self.path, self.scope.get("method")
        head = "The request does not match the A2A 1.0 schema of this route: "
        field: str | None = None
        if method == "GET":
            model: type[ProtoMessage] = GetTaskRequest
            if path.endswith("/tasks"):
                model = ListTasksRequest
            elif path.endswith("/pushNotificationConfigs"):
                model = ListTaskPushNotificationConfigsRequest
            field = _bad_query(model, QueryParams(self.scope.get("query_string", b"")))
            if field is not None:
                return head + f"the query parameter {_echo(field)} does not hold a valid value."
            return head + "check its query parameters against the specification."
        doc = self.document()
        if not isinstance(doc, dict):
            return head + "the body must be a JSON object."
        model = (
            TaskPushNotificationConfig
            if path.endswith("/pushNotificationConfigs")
            else SendMessageRequest
        )
        field = _bad_field(model, cast(dict[str, Any], doc))
        if field is None:
            return head + "check the body against the specification."
        return head + f"the field {_echo(field)} does not hold a valid value."

    def text(self, reason: str, jsonrpc: bool) -> str:
        if reason == "VERSION_NOT_SUPPORTED":
            return self.version_text()
        if reason == "METHOD_NOT_FOUND":
            return (
                f"There is no A2A 1.0 method named {_echo(self.rpc_method())} here; use {_METHODS}."
            )
        if jsonrpc and reason == "INVALID_PARAMS":
            return self.rpc_params_text()
        if not jsonrpc and reason in ("INVALID_PARAMS", "INVALID_REQUEST"):
            return self.rest_params_text()
        return _FIXED_TEXTS.get(reason, _GENERIC_ERROR)


def _error_info(reason: str) -> dict[str, Any]:
    return {"@type": _ERROR_INFO, "reason": reason, "domain": _A2A_DOMAIN, "metadata": {}}


def _first_reason(details: Any) -> str | None:
    if isinstance(details, list) and details:
        first: Any = cast(list[Any], details)[0]
        if isinstance(first, dict):
            reason: Any = cast(dict[str, Any], first).get("reason")
            return reason if isinstance(reason, str) else None
    return None


def _rewrite_rpc_error(error: dict[str, Any], ex: _Exchange) -> dict[str, Any]:
    code: Any = error.get("code")
    code = code if isinstance(code, int) and code in _REASON_OF_CODE else -32603
    reason = _REASON_OF_CODE[code]
    out: dict[str, Any] = {"code": code, "message": ex.text(reason, jsonrpc=True)}
    if "data" in error:
        out["data"] = [_error_info(_first_reason(error["data"]) or reason)]
    return out


def _rewrite_rest_error(error: dict[str, Any], status: int, ex: _Exchange) -> dict[str, Any]:
    reason = _first_reason(error.get("details")) or _REASON_OF_STATUS.get(status, "INTERNAL")
    out: dict[str, Any] = {
        "code": status,
        "status": error.get("status") if isinstance(error.get("status"), str) else "UNKNOWN",
        "message": ex.text(reason, jsonrpc=False),
    }
    if "details" in error:
        out["details"] = [_error_info(reason)]
    return out


def _own_error(error: Any, ex: _Exchange) -> bool:
    message: Any = cast(dict[str, Any], error).get("message") if isinstance(error, dict) else None
    return isinstance(message, str) and message in ex.own


class _OwnErrorText:
    """ASGI middleware: every error answer of the A2A routes carries text written here.

    The SDK phrases errors with parser and library text (``"Failed to parse message field:
    'int' object is not iterable."``). This rewrites the ``message`` (and drops the ``data``
    / ``details`` metadata) of every JSON-RPC error object, HTTP+JSON error body and
    server-sent ``error`` event, keeping the code, status and A2A reason, unless the message
    is one this adapter raised for this request (:func:`_ours`). Router 404/405 plain-text
    answers become JSON errors. The public card route is not touched.
    """

    def __init__(self, app: ASGIApp, *, jsonrpc_path: str) -> None:
        self.app = app
        self.jsonrpc_path = jsonrpc_path

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or _route_path(scope) == CARD_PATH:
            await self.app(scope, receive, send)
            return
        own: set[str] = set()
        scope[_OWN_TEXTS_KEY] = own
        ex = _Exchange(scope, bytearray(), own)
        jsonrpc = ex.path == self.jsonrpc_path
        mode = "pass"
        start: AsgiMessage | None = None
        held = bytearray()

        async def receive_body() -> AsgiMessage:
            message = await receive()
            if message["type"] == "http.request":
                ex.body += message.get("body", b"")  # bounded by JsonBodyGuard's max_body
            return message

        async def send_rewritten(message: AsgiMessage) -> None:
            nonlocal mode, start
            if message["type"] == "http.response.start":
                status = int(message["status"])
                ctype = Headers(raw=message.get("headers", [])).get("content-type", "")
                if ctype.startswith("text/event-stream"):
                    mode = "sse"
                elif is_json_content_type(ctype) and (jsonrpc or status >= 400):
                    mode = "json"
                elif status >= 400 and not is_json_content_type(ctype):
                    mode = "plain"
                if mode in ("json", "plain"):
                    start = message
                    return
            elif message["type"] == "http.response.body" and mode != "pass":
                body = bytes(message.get("body", b""))
                if mode == "sse":
                    await send({**message, "body": self._sse(body, ex, jsonrpc)})
                    return
                held.extend(body)
                if message.get("more_body", False):
                    return
                assert start is not None
                status = int(start["status"])
                new = self._body(bytes(held), status, ex, jsonrpc, plain=mode == "plain")
                headers = MutableHeaders(raw=list(start.get("headers", [])))
                headers["content-length"] = str(len(new))
                if mode == "plain":
                    headers["content-type"] = "application/json"
                await send({**start, "headers": headers.raw})
                await send({"type": "http.response.body", "body": new, "more_body": False})
                return
            await send(message)

        await self.app(scope, receive_body, send_rewritten)

    def _body(self, body: bytes, status: int, ex: _Exchange, jsonrpc: bool, plain: bool) -> bytes:
        if plain:
            reason = _REASON_OF_STATUS.get(status, "INTERNAL")
            grpc = "NOT_FOUND" if status == 404 else "UNKNOWN"
            fresh = {"code": status, "status": grpc, "message": ex.text(reason, jsonrpc=False)}
            return json.dumps({"error": fresh}).encode()
        if jsonrpc and b'"error"' not in body:
            return body  # a result (the common case): nothing to rewrite
        try:
            doc: Any = json.loads(body)
        except ValueError:
            return body
        rewritten = self._document(doc, status, ex, jsonrpc)
        return body if rewritten is None else json.dumps(rewritten).encode()

    def _document(self, doc: Any, status: int, ex: _Exchange, jsonrpc: bool) -> Any:
        """``doc`` with its error rewritten, or ``None`` when it needs no change."""
        if not isinstance(doc, dict):
            return None
        data = cast(dict[str, Any], doc)
        error: Any = data.get("error")
        if not isinstance(error, dict) or _own_error(error, ex):
            return None
        err = cast(dict[str, Any], error)
        if jsonrpc:
            return {**data, "error": _rewrite_rpc_error(err, ex)}
        code: Any = err.get("code")
        return {
            **data,
            "error": _rewrite_rest_error(err, code if isinstance(code, int) else status, ex),
        }

    def _sse(self, chunk: bytes, ex: _Exchange, jsonrpc: bool) -> bytes:
        if b"event: error" not in chunk:
            return chunk
        text = chunk.decode("utf-8", "replace")
        sep = "\r\n" if "\r\n" in text else "\n"
        lines = text.split(sep)
        out: list[str] = []
        for line in lines:
            if line.startswith("data:"):
                try:
                    doc: Any = json.loads(line[5:])
                except ValueError:
                    doc = {"error": {"code": -32603 if jsonrpc else 500}}
                new = self._document(doc, 500, ex, jsonrpc)
                line = "data: " + json.dumps(doc if new is None else new)
            out.append(line)
        return sep.join(out).encode()


_CLIENT_ERROR_RECORDS: dict[str, tuple[str, ...]] = {
    # logger name -> message templates that describe a client's mistake, not a defect
    "a2a.server.routes.jsonrpc_dispatcher": ("Request Error (ID: %s)",),
    "a2a.utils.error_handlers": ("Request error: ", "Parse error: "),
}
_DUPLICATE_RECORDS: dict[str, tuple[str, ...]] = {
    # followed by one of the records above for the same request: dropped
    "a2a.server.routes.jsonrpc_dispatcher": (
        "Failed to parse request params",
        "Failed to validate base JSON-RPC request",
    ),
    "a2a.utils.version_validator": ("Version mismatch",),
}


class _ClientErrorLogFilter(logging.Filter):
    """Keeps a client's mistakes to one DEBUG line without a traceback in the SDK's logs.

    a2a-sdk logs a bad request as a traceback (``logger.exception``) plus a WARNING line, so
    any anonymous caller could flood a server's logs. This filter, on the SDK's own loggers
    only, drops the traceback records of client errors and demotes their one-line summary
    to DEBUG (emitted only when that logger is enabled for DEBUG). Internal errors (JSON-RPC
    ``-32603``, HTTP 5xx) and unexpected exceptions keep their level and traceback.
    """

    def filter(self, record: logging.LogRecord) -> bool:
        template = str(record.msg)
        if template.startswith(_DUPLICATE_RECORDS.get(record.name, ())):
            return False
        if record.levelno != logging.WARNING or not template.startswith(
            _CLIENT_ERROR_RECORDS.get(record.name, ())
        ):
            return True
        record.levelno, record.levelname = logging.DEBUG, logging.getLevelName(logging.DEBUG)
        record.exc_info, record.exc_text, record.stack_info = None, None, None
        return logging.getLogger(record.name).isEnabledFor(logging.DEBUG)


def _install_log_filter() -> None:
    """Attach :class:`_ClientErrorLogFilter` to the SDK loggers, once."""
    for name in {*_CLIENT_ERROR_RECORDS, *_DUPLICATE_RECORDS}:
        logger = logging.getLogger(name)
        if not any(isinstance(f, _ClientErrorLogFilter) for f in logger.filters):
            logger.addFilter(_ClientErrorLogFilter())


# ---------------------------------------------------------------------------------------------
# caller identity and the app
# ---------------------------------------------------------------------------------------------


class _ContextBuilder(DefaultServerCallContextBuilder):
    """Adds the Starlette-authenticated caller (or ``None``) to the call context's state.

    The raw ``Authorization`` and ``Cookie`` headers are dropped from ``state["headers"]``:
    authentication already consumed them, and the SDK logs the call context at DEBUG level.
    """

    def build(self, request: Request) -> ServerCallContext:
        ctx = super().build(request)
        headers = ctx.state.get("headers")
        if isinstance(headers, dict):
            for secret in _SECRET_HEADERS:
                cast(dict[str, Any], headers).pop(secret, None)
        ctx.state[_CREDENTIALS_KEY] = _caller(request)
        own = request.scope.get(_OWN_TEXTS_KEY)
        if isinstance(own, set):
            ctx.state[_OWN_TEXTS_KEY] = own
        return ctx


def _caller(conn: HTTPConnection) -> A2ACaller | None:
    if "user" not in conn.scope:
        return None
    user: Any = conn.scope["user"]
    if not isinstance(user, BaseUser) or not user.is_authenticated:
        return None
    try:
        subject = str(user.identity)
    except NotImplementedError:
        subject = user.display_name
    auth = conn.scope.get("auth")
    scopes = tuple(str(s) for s in cast(list[Any], getattr(auth, "scopes", None) or []))
    return A2ACaller(subject=subject, scopes=scopes, user=user)


def _auth_error(challenge: str | None) -> Callable[[HTTPConnection, AuthenticationError], Response]:
    """The 401 answer for a failed authentication (never the backend's own exception text)."""
    headers = {"WWW-Authenticate": challenge} if challenge else None

    def respond(_conn: HTTPConnection, exc: AuthenticationError) -> Response:
        if isinstance(exc, CredentialsRequiredError):
            text = "This server requires credentials: send Authorization: Bearer <token>."
        else:
            text = "The credentials sent could not be verified."
        return JSONResponse({"error": text}, status_code=401, headers=headers)

    return respond


def _hosts(allowed_hosts: Iterable[str] | None, base_url: str) -> tuple[str, ...]:
    if allowed_hosts is None:
        return (*LOOPBACK_HOSTS, urlsplit(base_url).hostname or "127.0.0.1")
    hosts: tuple[Any, ...] = (
        (allowed_hosts,) if isinstance(allowed_hosts, str) else tuple(allowed_hosts)
    )
    if not hosts or not all(isinstance(h, str) and h.strip() for h in hosts):
        raise ValueError('allowed_hosts must name at least one host (or be ["*"])')
    return hosts


def _resolver(
    target: RuntimeTarget,
) -> Callable[[ServerCallContext], Awaitable[AgentRuntime[Any, Any]]]:
    if isinstance(target, AgentRuntime):
        runtime = cast(AgentRuntime[Any, Any], target)

        async def fixed(_ctx: ServerCallContext) -> AgentRuntime[Any, Any]:
            return runtime

        return fixed
    resolve = target

    async def resolved(ctx: ServerCallContext) -> AgentRuntime[Any, Any]:
        rt = resolve(ctx)
        if inspect.isawaitable(rt):
            rt = await rt
        if not isinstance(rt, AgentRuntime):
            raise TypeError("resolve(call_context) must return an AgentRuntime")
        return cast(AgentRuntime[Any, Any], rt)

    return resolved


def a2a_app(
    target: RuntimeTarget,
    *,
    name: str,
    version: str,
    base_url: str,
    authentication: AuthenticationBackend | None = None,
    description: str | None = None,
    security_scheme: SecurityScheme | None = None,
    max_body: int = DEFAULT_MAX_BODY,
    allowed_hosts: Iterable[str] | None = None,
) -> Starlette:
    """Serve a bound runtime over A2A 1.0 (JSON-RPC and HTTP+JSON) as a Starlette app.

    Args:
        target: an :class:`~foldkit_agent.runtime.AgentRuntime`, or ``resolve(call_context)``
            (``a2a.server.context.ServerCallContext``; sync or async) returning the runtime for
            that caller, so one server can host an application instance per user or tenant.
        name, version: the Agent Card's name and version.
        base_url: the public origin the app is reachable at (``http://127.0.0.1:8000``); the
            card's interface URLs are ``{base_url}/a2a/jsonrpc`` and ``{base_url}/a2a/rest``.
        authentication: a Starlette ``AuthenticationBackend``. Its user (``identity`` or
            ``display_name``) and ``AuthCredentials.scopes`` reach the runtime's principal
            provider as :class:`A2ACaller` on ``Invocation.credentials``; unauthenticated calls
            carry ``None`` and are refused by any capability whose ``authorize`` hook requires
            a principal (the SDK does not enforce the card's security itself). A backend that
            raises ``AuthenticationError`` gets a 401 with a generic body. A backend whose
            ``required`` attribute is true (``BearerTokenBackend(..., required=True)``)
            refuses anonymous requests itself; the card then lists the scheme in its
            top-level ``securityRequirements``.
        description: the card's description.
        security_scheme: the scheme the card declares when ``authentication`` is set
            (default: HTTP bearer).
        max_body: the largest request body in bytes (default 1 MiB); larger is HTTP 413.
            Every ``POST`` must be JSON (else 415) and parse strictly
            (:func:`foldkit_agent.edge.wire.loads_strict`; else 400), before the SDK reads it.
        allowed_hosts: host names (or IP addresses) the ``Host`` (and any ``Origin``) header
            may name, any port, against DNS rebinding (421/403 otherwise). Default: the host
            of ``base_url`` and the loopback names. An explicit list replaces that default
            (include the loopback names if local clients should still work); ``["*"]``
            accepts any host and origin, which is safe only behind a proxy that checks
            ``Host``.

    Returns:
        A Starlette app with the routes listed in this module's docs, all at absolute paths
        (the card must sit at the root of the origin). Its lifespan drains running tasks on
        shutdown. To serve it next to other apps, mount it last at the root
        (``Mount("", app=a2a)``) and enter ``a2a.router.lifespan_context(a2a)`` from the
        parent's lifespan (Starlette does not run a mounted app's lifespan).
        ``app.state.a2a_handler`` is the SDK request handler.

    Protocol (A2A 1.0, spec sections "Agent Card", "Extensions", "Task lifecycle"): see the
    module docs for the skill extension and the outcome mapping. ``GetExtendedAgentCard`` is
    per caller and lists only the capabilities available right now.

    Every error answer (JSON-RPC error, HTTP+JSON error body, streamed error event) carries
    text written by this adapter, never the SDK's or a parser's; a client's mistakes are
    logged by the SDK as one DEBUG line without a traceback.

    Raises:
        TypeError: ``target`` is neither a runtime nor a callable.
        ValueError: ``allowed_hosts`` names no host.

    Example:
        >>> async with examples.todo.runtime() as rt:
        ...     app = a2a_app(rt, name="todo", version="1.0", base_url="http://127.0.0.1:8000")
        ...     await uvicorn.Server(uvicorn.Config(app, port=8000)).serve()
    """
    target_any: Any = target
    if not isinstance(target_any, AgentRuntime) and not callable(target_any):
        raise TypeError("a2a_app target must be an AgentRuntime or resolve(call_context)")
    resolve = _resolver(cast(RuntimeTarget, target_any))
    hosts = _hosts(allowed_hosts, base_url)
    _install_log_filter()
    scheme = security_scheme
    if authentication is not None and scheme is None:
        scheme = SecurityScheme(
            http_auth_security_scheme=HTTPAuthSecurityScheme(
                scheme="bearer", description="Credentials checked by the server's authentication."
            )
        )
    if authentication is None:
        scheme = None
    required = bool(getattr(authentication, "required", False))
    bearer = scheme is not None and scheme.http_auth_security_scheme.scheme.lower() == "bearer"

    def card_for(caps: Sequence[Capability]) -> AgentCard:
        return build_agent_card(
            caps,
            name=name,
            version=version,
            base_url=base_url,
            description=description,
            security_scheme=scheme,
            security_required=required,
        )

    fixed = cast(AgentRuntime[Any, Any], target) if isinstance(target, AgentRuntime) else None
    base_card = card_for(fixed.messages.all() if fixed is not None else [])

    async def extended(_card: AgentCard, ctx: ServerCallContext) -> AgentCard:
        try:
            rt = await resolve(ctx)
            return card_for(rt.messages.available())
        except Exception:
            _log.exception("building the extended agent card failed")
            failed = InternalError(message="The agent card could not be built right now.")
            raise _ours(ctx, failed) from None

    executor = CapabilityExecutor(resolve)
    handler = _Handler(
        resolve=resolve,
        agent_executor=executor,
        task_store=InMemoryTaskStore(),
        agent_card=base_card,
        extended_agent_card=base_card,
        extended_card_modifier=extended,
    )
    builder = _ContextBuilder()

    async def public_card(request: Request) -> Response:
        try:
            rt = fixed if fixed is not None else await resolve(builder.build(request))
            caps = rt.messages.all()
            body = agent_card_to_dict(card_for(caps))
        except Exception:
            _log.exception("building the public agent card failed")
            return JSONResponse(
                {"error": "The agent card is not available right now."}, status_code=503
            )
        # protobuf carries numbers as doubles; publish the schemas exactly as exported.
        for ext in body.get("capabilities", {}).get("extensions", []):
            if ext.get("uri") == EXTENSION_URI:
                ext["params"] = _extension_params(caps)
        return JSONResponse(body)

    routes: list[BaseRoute] = [
        Route(CARD_PATH, public_card, methods=["GET"]),
        *create_jsonrpc_routes(handler, rpc_url=JSONRPC_PATH, context_builder=builder),
        *create_rest_routes(handler, context_builder=builder, path_prefix=REST_PREFIX),
    ]
    middleware: list[Middleware] = [
        Middleware(
            JsonBodyGuard,
            max_body=max_body,
            jsonrpc_paths={JSONRPC_PATH},
            require_json=True,
            allowed_hosts=hosts,
        )
    ]
    if authentication is not None:
        on_error = _auth_error("Bearer" if bearer else None)
        middleware.append(
            Middleware(AuthenticationMiddleware, backend=authentication, on_error=on_error)
        )
    middleware.append(Middleware(_OwnErrorText, jsonrpc_path=JSONRPC_PATH))

    @asynccontextmanager
    async def lifespan(_app: Starlette) -> AsyncGenerator[None]:
        try:
            yield
        finally:
            # Calls still running answer "cancelled, outcome unknown" before the SDK drains.
            await executor.abort_runs(_CANCEL_GRACE)
            await _settle(handler, _CANCEL_GRACE)
            await handler.aclose()

    app = Starlette(routes=routes, middleware=middleware, lifespan=lifespan)
    app.state.a2a_handler = handler
    return app
