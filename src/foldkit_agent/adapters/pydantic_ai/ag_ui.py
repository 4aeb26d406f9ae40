"""AG-UI: a copilot in the application's own front end, over the in-process pydantic-ai agent.

:func:`ag_ui_app` is an ASGI app speaking the AG-UI protocol (``POST`` a ``RunAgentInput``,
read a stream of events): it runs a pydantic-ai ``Agent`` with the contract's capabilities as
its tools (this package's :class:`~foldkit_agent.adapters.pydantic_ai.FoldkitToolset`), and
pydantic-ai's own AG-UI adapter writes the run's text and ``TOOL_CALL_*`` events. What this
module adds is the application's shared state:

* ``STATE_SNAPSHOT`` with the context the agent sees (``runtime.context()``, ``{}`` without a
  context projection) right after ``RUN_STARTED``;
* ``STATE_DELTA`` (RFC 6902 JSON Patch, made by the ``jsonpatch`` library) after each tool
  result that changed it, and once more before the run ends when a command's Message changed
  it later, so a front end that applies every delta to the snapshot holds the context the
  agent reads.

State the front end sends (``RunAgentInput.state``) is never written to the Model: a change a
person makes in the front end reaches the application as one of its Messages, or not at all.
Nothing here adds authority: availability, authorization, approval and the audit are the
runtime's, exactly as for any other caller; calls are audited with transport ``"ag-ui"``.

A ``confirm`` capability ends the run in an AG-UI interrupt (pydantic-ai's deferred approval:
its ``metadata`` is the :class:`~foldkit_agent.ApprovalRequest` as JSON plus ``"text"`` to show
the person); the front end resumes the run with the person's answer (``approved``, optionally
a ``reason``), and the call that waited in the toolset sends its Message or is declined. A run
the front end abandons (the request's connection closed) is cancelled with every call in it.

Many callers (``serve --ag-ui``). With bearer tokens in ``options`` (``tokens``, ``oauth``) a
run needs one (401 otherwise, before the body is read), and the verified
:class:`~foldkit_agent.edge.Grant` is what its calls carry as credentials. Each caller (the
token's subject; every anonymous caller together is one) holds at most its share of open runs
(``caps.streams_per_caller`` of ``caps.streams``; past it 429, at the total 503, both with
``Retry-After``), and its calls count against its share of the server's calls in flight and
calls waiting for a person (``calls=``, the :class:`~foldkit_agent.edge.calls.CallsInFlight`
every adapter of the server shares): one caller's runs cannot take what another's need. A call
parked for a person is answered only by a run of the caller that made it.

Example::

    from pydantic_ai import Agent
    from foldkit_agent.adapters.pydantic_ai.ag_ui import ag_ui_app

    copilot = Agent("openai:gpt-5", instructions="You help with the todo list.")
    app = ag_ui_app(runtime, copilot, credentials="alice")   # uvicorn app:app
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from functools import cached_property
from typing import Any, Final

from ...errors import needs_extra

with needs_extra(__name__):  # a missing library is answered with the extra to install
    import jsonpatch  # pyright: ignore[reportMissingTypeStubs]
    from ag_ui.core import BaseEvent, EventType, StateDeltaEvent, StateSnapshotEvent
    from pydantic_ai import Agent, DeferredToolRequests, RunContext
    from pydantic_ai.ui.ag_ui import AGUIAdapter
    from starlette.applications import Starlette
    from starlette.middleware import Middleware
    from starlette.requests import Request
    from starlette.responses import Response
    from starlette.routing import Route

    from ...edge.auth import bearer_step, granted
    from ...edge.callers import Slots, caller_key
    from ...edge.calls import CallsInFlight, credentials_or_none
    from ...edge.guard import EdgeGuard, Rules
    from ...edge.hosts import HostPolicy
    from ...edge.options import DEFAULT_HTTP_OPTIONS, HttpOptions
    from ...runtime.bound import AgentRuntime
    from . import FoldkitToolset

__all__ = ["DEFAULT_MAX_BODY", "TRANSPORT", "ag_ui_app", "with_state"]

TRANSPORT: Final = "ag-ui"
"""``Invocation.transport`` of every call an AG-UI run makes."""

DEFAULT_MAX_BODY: Final = 1 << 20
"""Largest ``RunAgentInput`` body, in bytes, unless ``HttpOptions.max_body`` says otherwise
(the conversation so far travels in every request)."""

_ENDS: Final = frozenset({EventType.RUN_FINISHED, EventType.RUN_ERROR})


@dataclass(frozen=True, slots=True)
class _Run:
    """A run's deps, as the one toolset reads them back per call: who it acts for (the
    credentials) and whose caps its calls count against (the caller key)."""

    credentials: Any
    caller: str


class _Adapter(AGUIAdapter[Any, Any]):
    """pydantic-ai's AG-UI adapter, blind to the state the front end sends: that state is
    the front end's, and the Model changes only by the application's own Messages."""

    @cached_property
    def state(self) -> dict[str, Any] | None:
        return None


def _context(rt: AgentRuntime[Any, Any]) -> dict[str, Any]:
    context = rt.context()
    return {} if context is None else context


async def with_state(
    rt: AgentRuntime[Any, Any], events: AsyncIterator[BaseEvent]
) -> AsyncIterator[BaseEvent]:
    """``events`` with the application's context woven in as ``STATE_SNAPSHOT`` and
    ``STATE_DELTA`` events (module docs).

    A delta is computed only where the context may have changed (after a tool result, before
    the run's last event), as a JSON Patch from the last state sent; no event is written when
    nothing changed.

    Example:
        >>> [e.type async for e in with_state(runtime, run_events)][:2]
        [<EventType.RUN_STARTED: 'RUN_STARTED'>, <EventType.STATE_SNAPSHOT: 'STATE_SNAPSHOT'>]
    """
    sent: dict[str, Any] | None = None
    async for event in events:
        if sent is not None and event.type in _ENDS:
            delta = _delta(rt, sent)
            if delta is not None:
                sent, patch = delta
                yield patch
        yield event
        if event.type == EventType.RUN_STARTED:
            sent = _context(rt)
            yield StateSnapshotEvent(snapshot=sent)
        elif sent is not None and event.type == EventType.TOOL_CALL_RESULT:
            delta = _delta(rt, sent)
            if delta is not None:
                sent, patch = delta
                yield patch


def _delta(
    rt: AgentRuntime[Any, Any], sent: dict[str, Any]
) -> tuple[dict[str, Any], StateDeltaEvent] | None:
    now = _context(rt)
    if now == sent:
        return None
    patch: Any = jsonpatch.make_patch(sent, now).patch  # pyright: ignore[reportUnknownMemberType]
    return now, StateDeltaEvent(delta=patch)


def ag_ui_app(
    runtime: AgentRuntime[Any, Any],
    agent: Agent[Any, Any],
    *,
    options: HttpOptions = DEFAULT_HTTP_OPTIONS,
    credentials: Any = None,
    credentials_of: Callable[[Request], Any] | None = None,
    max_retries: int = 1,
    path: str = "/",
    calls: CallsInFlight | None = None,
) -> Starlette:
    """An ASGI app serving ``agent``'s runs over AG-UI at ``POST path`` (module docs).

    Args:
        runtime: the bound runtime whose capabilities are the agent's tools.
        agent: a pydantic-ai ``Agent``, without the contract's tools (they are added per
            run, with ``output_type=[str, DeferredToolRequests]`` so a call waiting for a
            person ends the run in an interrupt).
        options: ``host``/``allowed_hosts`` (``Host`` and ``Origin`` checks, as every HTTP
            adapter), ``max_body`` (default :data:`DEFAULT_MAX_BODY`), ``max_items``; a body
            is strict JSON, checked before pydantic-ai reads it. ``tokens``/``oauth``: every
            run needs a bearer token they verify (module docs); ``caps``: the open runs per
            caller and in all (``streams_per_caller``, ``streams``) and, without ``calls``,
            the caps of this app's own calls in flight; ``rates``: the requests per caller.
        credentials: what every call carries as ``Invocation.credentials`` (read by the
            runtime's principal provider): the person this copilot acts for, when the app
            serves one. Default: the run's verified bearer token
            (:class:`~foldkit_agent.edge.Grant`), else ``None``.
        credentials_of: ``(request) -> credentials`` (sync or async), read per run from the
            request instead (the signed-in person of the application this app is mounted in:
            its session, ``request.user``); a hook that raises leaves the run's calls with no
            credentials, so a guarded capability is refused. Exclusive with ``credentials``.
            Never read from the run input: the front end cannot name who it acts for.
        max_retries: as :class:`~foldkit_agent.adapters.pydantic_ai.FoldkitToolset`.
        path: the route.
        calls: the server's calls in flight, shared with its other adapters (``serve`` passes
            its one); default one of this app's own within ``options.caps``.

    Returns:
        A Starlette app; one toolset serves every run, so a call waiting for a person is
        resumed by the run that answers its interrupt (by its tool call id, which only the
        front end that was asked holds).

    Raises:
        TypeError: both ``credentials`` and ``credentials_of`` given.

    Example:
        >>> app = ag_ui_app(runtime, Agent(FunctionModel(script)), credentials="alice")
    """
    if credentials is not None and credentials_of is not None:
        raise TypeError("ag_ui_app takes credentials= or credentials_of=, not both")
    # a run's credentials and caller travel as its deps: the toolset reads them back per call
    tools = FoldkitToolset(
        runtime,
        credentials_of=_run_credentials,
        max_retries=max_retries,
        transport=TRANSPORT,
        calls=CallsInFlight(options.caps, rates=options.rates) if calls is None else calls,
        caller_of=_run_caller,
    )

    async def run(request: Request) -> Response:
        who = credentials if credentials is not None else granted(request.scope)
        if credentials_of is not None:
            who = await credentials_or_none(credentials_of, request)
        adapter = await _Adapter.from_request(request, agent=agent)
        deps = _Run(who, caller_key(request.scope))
        events = adapter.run_stream(
            toolsets=[tools], deps=deps, output_type=[str, DeferredToolRequests]
        )
        return adapter.streaming_response(with_state(runtime, events))

    runs = Slots(
        "open AG-UI runs",
        per_caller=options.caps.streams_per_caller,
        total=options.caps.streams,
        advice="Let one of them finish (or stop one) before starting another.",
    )
    guard = Middleware(
        EdgeGuard,
        hosts=HostPolicy(options.allowed_hosts),
        classify=Rules(origin="api"),
        max_body=options.body_limit(DEFAULT_MAX_BODY),
        authenticate=bearer_step(options) if options.bearer_required else None,
        max_items=options.max_items,
        hold=lambda _scope, _body: runs,
        rates=options.rates,
    )
    app = Starlette(routes=[Route(path, run, methods=["POST"])], middleware=[guard])
    app.state.ag_ui_runs = runs
    return app


def _run_credentials(ctx: RunContext[Any]) -> Any:
    return ctx.deps.credentials


def _run_caller(ctx: RunContext[Any]) -> str:
    return ctx.deps.caller
