"""One outcome shape that every adapter maps from.

:func:`summarize` turns a :class:`~foldkit_agent.runtime.DispatchResult` or an exception
into an :class:`Outcome`; each adapter translates that one shape to its protocol, so a refusal
looks like a refusal everywhere and a defect never leaks its text.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from ..errors import AgentCancelledError, AgentCompletionTimeoutError, AgentError, AgentHostError
from .results import DispatchResult

__all__ = ["DEFECT", "Outcome", "OutcomeKind", "summarize"]

DEFECT = "defect"
"""The audit ``outcome`` of an invocation that failed with an unexpected (non-agent) error."""

OutcomeKind = Literal["dispatched", "completed", "failed", "refused", "unknown", "defect"]


@dataclass(frozen=True, slots=True)
class Outcome:
    """The protocol-neutral result of one invocation.

    Attributes:
        ok: ``True`` only for ``dispatched`` and ``completed``.
        kind: ``"dispatched"`` (no completion contract; the host accepted the Message),
            ``"completed"``, ``"failed"`` (the failure Message arrived), ``"refused"`` (nothing
            was sent), ``"unknown"`` (sent, outcome unknown: timeout, cancellation or a host
            failure), or ``"defect"`` (an unexpected error; no detail is given).
        capability: the capability name, when known.
        text: one agent-facing sentence.
        data: JSON data for structured output: for success ``{"status", "capability",
            "invocation_id", "message", "result"?}``; for errors the error's ``to_json()``
            plus ``"status"``.
    """

    ok: bool
    kind: OutcomeKind
    capability: str | None
    text: str
    data: dict[str, Any]


def summarize(result: DispatchResult | BaseException, *, capability: str | None = None) -> Outcome:
    """Summarize a dispatch result or the exception a dispatch raised.

    Args:
        result: what ``dispatch``/``dispatch_unknown`` returned or raised.
        capability: the name to report for a defect that carries none.

    Example:
        >>> summarize(await rt.messages.dispatch("create_todo", {"title": "Milk"})).ok
        True
    """
    if isinstance(result, DispatchResult):
        data: dict[str, Any] = {
            "capability": result.name,
            "invocation_id": result.invocation.id,
            "message": result.message.encode(),
        }
        completion = result.completion
        if completion is None:
            data["status"] = "dispatched"
            return Outcome(True, "dispatched", result.name, f"{result.name} was applied.", data)
        if completion.message is not None:
            data["result"] = completion.message.encode()
        data["status"] = completion.status
        if completion.status == "completed":
            return Outcome(True, "completed", result.name, f"{result.name} completed.", data)
        tag = completion.message.tag() if completion.message is not None else "a failure"
        return Outcome(
            False,
            "failed",
            result.name,
            f"{result.name} failed: the application reported {tag}. Nothing was rolled back.",
            data,
        )
    if isinstance(result, AgentError):
        data = result.to_json()
        unknown = isinstance(result, AgentCompletionTimeoutError | AgentHostError) or (
            isinstance(result, AgentCancelledError) and result.dispatched is not False
        )
        if isinstance(result, AgentHostError) and result.dispatched is False:
            unknown = False
        kind: OutcomeKind = "unknown" if unknown else "refused"
        data["status"] = kind
        return Outcome(False, kind, result.capability, result.message, data)
    name = capability or "this capability"
    text = f"The call to {name!r} failed unexpectedly; whether it was applied is unknown."
    return Outcome(
        False,
        "defect",
        capability,
        text,
        {"status": "defect", "capability": capability, "message": text},
    )
