"""What the console shows, as plain values its templates render (Jinja2 escapes every string).

* :func:`approval_view`: one call waiting for a person: the capability's title, the caller
  (who, over which transport), what it does (the request's sentence, else its input as
  labelled fields), and the preview as a line diff of what the agent sees: the context the
  preview was computed on (``ApprovalRequest.before``) and after the request's JSON Patch
  (applied with ``jsonpatch``, diffed with :mod:`difflib`).
* :func:`folded`: the activity, newest first, with each run of refused calls folded into one
  row ("3 refused calls"), so an agent's real actions stay in view.
* :func:`context_text`: the current context as indented JSON.
"""

from __future__ import annotations

import difflib
import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, cast

import jsonpatch  # pyright: ignore[reportMissingTypeStubs]

from ....contract.visible import visible, visible_value
from ....edge.activity import ActivityItem
from ....edge.approvals import ParkedApproval
from ..signin import subject_of_caller

__all__ = [
    "ActivityRow",
    "ApprovalView",
    "DiffLine",
    "approval_view",
    "context_text",
    "diff_lines",
    "folded",
    "outcome_words",
    "who_is",
]

MAX_CONTEXT_CHARS = 20_000
"""Longest context text shown; a longer one is cut with a note."""

_AGENTS = {
    "mcp": "MCP agent",
    "a2a": "A2A agent",
    "webmcp": "browser agent",
    "agent-native": "Agent Native agent",
}


_OUTCOMES = {
    "failed": "the application reported a failure",
    "AgentAuthorizationError": "not allowed",
    "AgentCapabilityUnavailableError": "not available then",
    "AgentInvalidInputError": "invalid input",
    "AgentUnknownCapabilityError": "no such capability",
    "AgentCancelledError": "cancelled",
    "AgentCompletionTimeoutError": "no result in time",
    "AgentApprovalError": "not approved",
    "AgentHostError": "the application failed",
}


def outcome_words(outcome: str) -> str:
    """An activity item's outcome as a person reads it (``"AgentInvalidInputError"`` ->
    ``"invalid input"``); an outcome without words of its own is shown as it is.

    Example:
        >>> outcome_words("AgentAuthorizationError")
        'not allowed'
    """
    return _OUTCOMES.get(outcome, outcome)


def who_is(transport: str, by_person: bool = False) -> str:
    """How the console names an actor: ``"person"``, ``"MCP agent"``, ``"browser agent"``,
    ``"A2A agent"``, ``"Agent Native agent"``, else ``"<transport> agent"``."""
    if by_person:
        return "person"
    return _AGENTS.get(transport, f"{transport or 'in-process'} agent")


@dataclass(frozen=True, slots=True)
class DiffLine:
    """One line of a preview's diff: ``kind`` ``"added"``, ``"removed"``, ``"same"`` or
    ``"gap"`` (lines left out between two changes), and its text."""

    kind: Literal["added", "removed", "same", "gap"]
    text: str


def _pretty(value: Any) -> list[str]:
    """JSON lines of ``value`` with every string made visible, so a line separator or a bidi
    override in agent-supplied text can neither add a line to the diff nor reorder it."""
    return _json(value).splitlines()


def _json(value: Any) -> str:
    return json.dumps(visible_value(value), indent=2, ensure_ascii=False, default=str)


def diff_lines(before: Any, patch: Sequence[dict[str, Any]]) -> list[DiffLine] | None:
    """The lines that change when ``patch`` (RFC 6902) is applied to ``before`` (JSON data),
    with two lines around each change; ``None`` when the patch does not apply to ``before``
    (the Model moved on since), ``[]`` for no change.

    Example:
        >>> [d.text for d in diff_lines({"todos": ["a"]}, [{"op": "remove", "path": "/todos/0"}])
        ...  if d.kind == "removed"]
        ['    "a"']
    """
    try:
        after = cast(Any, jsonpatch).apply_patch(before, list(patch))
    except Exception:
        return None
    lines: list[DiffLine] = []
    for line in difflib.unified_diff(_pretty(before), _pretty(after), n=2, lineterm=""):
        if line.startswith(("---", "+++")):
            continue
        if line.startswith("@@"):
            if lines:
                lines.append(DiffLine("gap", "…"))
        elif line.startswith("+"):
            lines.append(DiffLine("added", line[1:]))
        elif line.startswith("-"):
            lines.append(DiffLine("removed", line[1:]))
        else:
            lines.append(DiffLine("same", line[1:]))
    return lines


@dataclass(frozen=True, slots=True)
class ApprovalView:
    """One waiting call as the console shows it.

    Attributes:
        key: what the answer is posted under.
        title: the capability's title; ``capability`` its name.
        caller: who asks (``"MCP agent of alice"``, ``"browser agent (anonymous)"``).
        sentence: what it does in a sentence, or ``None``.
        fields: the input as ``(label, value)`` pairs, shown without a sentence.
        summary: the preview in words, or ``None`` without a preview.
        diff: the preview as lines, or ``None`` when it cannot be shown as lines.
        effects: what its commands do beyond the Model (``"saves to the server"``).
        may_answer: the signed-in person may answer it.
        version: changes when the request does (the person is asked again).
    """

    key: str
    capability: str
    title: str
    caller: str
    sentence: str | None
    fields: list[tuple[str, str]]
    summary: str | None
    diff: list[DiffLine] | None
    effects: list[str]
    input_json: str
    may_answer: bool
    version: str = field(default="")


def _fields(shown: dict[str, Any]) -> list[tuple[str, str]]:
    listed: Any = shown.get("fields")
    if isinstance(listed, list):
        out: list[tuple[str, str]] = []
        for f in cast(list[Any], listed):
            if isinstance(f, dict):
                entry = cast(dict[str, Any], f)
                out.append((str(entry.get("label", "")), str(entry.get("value", ""))))
        if out:
            return out
    data: Any = shown.get("input")
    if isinstance(data, dict):
        return [
            (
                visible(str(k)),
                visible(v if isinstance(v, str) else json.dumps(v, ensure_ascii=False)),
            )
            for k, v in cast(dict[str, Any], data).items()
        ]
    return []


def approval_view(parked: ParkedApproval, may_answer: bool) -> ApprovalView:
    """The view of ``parked``: its preview as a diff of the context it was previewed on (left
    out when that is unknown; the summary then says what changes)."""
    shown = parked.request.to_json()
    before = parked.request.before
    subject = subject_of_caller(parked.caller)
    agent = who_is(parked.transport)
    caller = f"{agent} of {subject}" if subject else f"{agent} (anonymous)"
    preview = parked.request.preview
    diff = None if preview is None or before is None else diff_lines(before, preview)
    sentence: Any = shown.get("sentence")
    effects: Any = shown.get("effects") or []
    summary: Any = shown.get("summary")
    return ApprovalView(
        key=parked.key,
        capability=parked.capability,
        title=str(shown.get("title") or parked.capability),
        caller=caller,
        sentence=sentence if isinstance(sentence, str) else None,
        fields=_fields(shown),
        summary=summary if isinstance(summary, str) else None,
        diff=diff,
        effects=[str(e) for e in cast(list[Any], effects)],
        input_json=json.dumps(shown.get("input"), indent=2, ensure_ascii=False, default=str),
        may_answer=may_answer,
        version=str(shown.get("asks", 1)),
    )


@dataclass(frozen=True, slots=True)
class ActivityRow:
    """One row of the activity view: an item, or a run of refused calls folded into one.

    Attributes:
        item: the action (``None`` for a folded run).
        refused: the refused calls folded into this row, newest first (empty for an action).
    """

    item: ActivityItem | None
    refused: tuple[ActivityItem, ...] = ()

    @property
    def who(self) -> str:
        first = self.item or self.refused[0]
        return who_is(first.transport, first.by_person)


def folded(items: Sequence[ActivityItem]) -> list[ActivityRow]:
    """``items`` (oldest first) newest first, each run of refused calls one row.

    A call a person declined (or that timed out waiting for one) is a decision, not noise: it
    keeps its own row.

    Example:
        >>> [len(r.refused) for r in folded(items)]  # an action between two runs
        [3, 0, 2]
    """
    rows: list[ActivityRow] = []
    run: list[ActivityItem] = []
    for item in reversed(items):
        if item.decision == "refused" and item.approval in (None, "unavailable"):
            run.append(item)
            continue
        if run:
            rows.append(ActivityRow(None, tuple(run)))
            run = []
        rows.append(ActivityRow(item))
    if run:
        rows.append(ActivityRow(None, tuple(run)))
    return rows


def context_text(context: Any) -> str:
    """The context as indented JSON, cut at :data:`MAX_CONTEXT_CHARS`."""
    text = "\n".join(_pretty(context))
    if len(text) > MAX_CONTEXT_CHARS:
        return text[:MAX_CONTEXT_CHARS] + "\n… (cut: the context is longer)"
    return text
