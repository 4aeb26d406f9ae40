"""One outcome shape that every adapter maps from.

:func:`summarize` turns a :class:`~foldkit_agent.runtime.DispatchResult` or an exception
into an :class:`Outcome`; each adapter translates that one shape to its protocol, so a refusal
looks like a refusal everywhere and a defect never leaks its text.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from pydantic_core import to_json

from ..errors import (
    AgentCancelledError,
    AgentCompletionTimeoutError,
    AgentError,
    AgentHostError,
    AgentIdempotencyError,
)
from .results import DispatchResult

__all__ = [
    "DEFECT",
    "DEFECT_TEXT",
    "REFUSED",
    "Outcome",
    "OutcomeKind",
    "defect",
    "refused",
    "summarize",
]

DEFECT = "defect"
"""The audit ``outcome`` of an invocation that failed with an unexpected (non-agent) error."""

DEFECT_TEXT = "The call failed unexpectedly; whether it was applied is unknown."
"""The one sentence every adapter shows for a defect (an unexpected error): it names no
exception, library or input, and says that the outcome is unknown."""

REFUSED = "Refused: "
"""How the text of every refusal starts, on every transport: several agent frameworks drop
MCP's ``isError`` (and an A2A client may show only the text), so the model would read a bare
sentence as a result; the words themselves say that nothing was done."""

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

    def data_json(self) -> str:
        """``data`` as compact JSON text, for a channel that carries text.

        One pydantic-core encoding, keys in ``data``'s order (never sorted: this is on every
        call's path); a value JSON has no form for is written as its ``str``, a non-finite
        float as ``null``.

        Example:
            >>> defect("create_todo").data_json()
            '{"status":"defect","capability":"create_todo","message":"The call failed ..."}'
        """
        return to_json(self.data, fallback=str).decode()


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
            return Outcome(
                True,
                "dispatched",
                result.name,
                f"{result.name} was dispatched: the application received its Message.",
                data,
            )
        if completion.message is not None:
            data["result"] = completion.message.encode()
        data["status"] = completion.status
        if completion.status == "completed":
            return Outcome(True, "completed", result.name, f"{result.name} completed.", data)
        return Outcome(False, "failed", result.name, _failure_text(result.name, data), data)
    if isinstance(result, AgentError):
        data = result.to_json()
        unknown = (
            isinstance(result, AgentCompletionTimeoutError | AgentHostError)
            or (isinstance(result, AgentCancelledError) and result.dispatched is not False)
            or (isinstance(result, AgentIdempotencyError) and result.reason == "unknown")
        )
        if isinstance(result, AgentHostError) and result.dispatched is False:
            unknown = False
        if not unknown:
            data["status"] = "refused"
            return Outcome(False, "refused", result.capability, REFUSED + result.message, data)
        data["status"] = "unknown"
        return Outcome(False, "unknown", result.capability, result.message, data)
    return defect(capability)


def refused(text: str, capability: str | None = None) -> Outcome:
    """The :class:`Outcome` of a refusal an adapter makes before any capability runs (a
    malformed catalog call, a skill not named): ``kind="refused"``, its text starting with
    :data:`REFUSED` like every refusal :func:`summarize` makes.

    Example:
        >>> refused("Name the skill to run.").text
        'Refused: Name the skill to run.'
    """
    data = {"status": "refused", "capability": capability, "message": text}
    return Outcome(False, "refused", capability, REFUSED + text, data)


# The failure Message's own words, when it carries them in one of these fields.
REASON_FIELDS = ("reason", "error", "message", "detail")
MAX_REASON = 300


def _failure_text(capability: str, data: dict[str, Any]) -> str:
    """``"<capability> failed: <the application's reason>. Nothing was rolled back."``.

    The reason is the failure Message's first string field named in :data:`REASON_FIELDS`
    (cut to :data:`MAX_REASON` characters), since the application wrote it for whoever made
    the call; a failure Message without one is named by its tag.
    """
    encoded = data.get("result")
    if not isinstance(encoded, dict):
        return f"{capability} failed: the application reported a failure. Nothing was rolled back."
    fields: dict[str, Any] = encoded  # pyright: ignore[reportUnknownVariableType]
    tag = fields.get("_tag", "a failure")
    for key in REASON_FIELDS:
        reason = fields.get(key)
        if isinstance(reason, str) and reason.strip():
            text = reason.strip().rstrip(".")
            if len(text) > MAX_REASON:
                text = text[: MAX_REASON - 1].rstrip() + "…"
            return f"{capability} failed: {text} ({tag}). Nothing was rolled back."
    return f"{capability} failed: the application reported {tag}. Nothing was rolled back."


def defect(capability: str | None = None) -> Outcome:
    """The :class:`Outcome` of a defect: :data:`DEFECT_TEXT`, ``kind="defect"``.

    Every adapter answers a defect with it, whatever went wrong (the error is logged, never
    shown).

    Example:
        >>> defect("create_todo").data
        {'status': 'defect', 'capability': 'create_todo', 'message': 'The call failed ...'}
    """
    data = {"status": "defect", "capability": capability, "message": DEFECT_TEXT}
    return Outcome(False, "defect", capability, DEFECT_TEXT, data)
