"""Approval previews: what a Message would change in what the agent sees (DESIGN §11).

Because ``update`` is pure, the runtime can ask the host what the Model *would* become
(``host.step(model, message)``, following the pure commands ``update`` returns, or
``host.simulate(message)``: nothing applied, nothing run) and show a person the difference in
the context projection before anything is sent: as a JSON Patch (RFC 6902,
computed by the ``jsonpatch`` library) and as a one-line summary.
"""

from __future__ import annotations

import logging
from collections import deque
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, cast

import jsonpatch  # pyright: ignore[reportMissingTypeStubs]
import jsonpointer  # pyright: ignore[reportMissingTypeStubs]

from ..app.commands import Effect, Then
from ..app.host import host_simulate, host_step
from ..app.message import Message
from ..app.projection import Projection
from ..contract.approval import short_json

__all__ = [
    "MAX_STEPS",
    "NO_PREVIEW",
    "UNDECLARED",
    "Preview",
    "diff",
    "preview_of",
    "summarize_patch",
]

_log = logging.getLogger("foldkit_agent.runtime")

MAX_SUMMARY_CHANGES = 5
"""How many operations the summary spells out before it says "and N more"."""

_VALUE_WIDTH = 60


def diff(before: Any, after: Any) -> list[dict[str, Any]]:
    """The JSON Patch (RFC 6902) that turns JSON data ``before`` into ``after``.

    Example:
        >>> diff({"todos": ["a", "b"]}, {"todos": ["b"]})
        [{'op': 'remove', 'path': '/todos/0'}]
    """
    patch = cast(Any, jsonpatch).make_patch(before, after)
    return [dict(op) for op in cast(list[Mapping[str, Any]], patch.patch)]


def summarize_patch(before: Any, patch: Sequence[Mapping[str, Any]]) -> str:
    """A few words per operation of ``patch`` (applied to ``before``), for a person.

    Paths are written dotted, list positions as numbers (``todos.0.title``), like the paths
    of input issues; values are shortened to about 60 characters.

    Example:
        >>> summarize_patch({"todos": ["a"]}, [{"op": "remove", "path": "/todos/0"}])
        'removes todos.0 (was "a")'
    """
    if not patch:
        return "no change to what the agent sees"
    parts: list[str] = []
    for op in patch[:MAX_SUMMARY_CHANGES]:
        kind = op.get("op")
        path = _dotted(str(op.get("path", "")))
        if kind == "add":
            parts.append(f"adds {path} = {_short(op.get('value'))}")
        elif kind == "remove":
            parts.append(
                f"removes {path} (was {_short(value_at(before, str(op.get('path', ''))))})"
            )
        elif kind == "replace":
            old = _short(value_at(before, str(op.get("path", ""))))
            parts.append(f"changes {path} from {old} to {_short(op.get('value'))}")
        elif kind == "move":
            parts.append(f"moves {_dotted(str(op.get('from', '')))} to {path}")
        elif kind == "copy":
            parts.append(f"copies {_dotted(str(op.get('from', '')))} to {path}")
        else:
            parts.append(f"{kind} {path}")
    if len(patch) > MAX_SUMMARY_CHANGES:
        parts.append(f"and {len(patch) - MAX_SUMMARY_CHANGES} more")
    return "; ".join(parts)


MAX_STEPS = 32
"""How many Messages a preview follows (the call's, its pure commands', ``preview=``'s)."""

UNDECLARED = "runs a command whose effect is not declared"
"""What a preview says of a command that is neither ``Then`` nor ``Effect``."""


@dataclass(frozen=True, slots=True)
class Preview:
    """What a Message would change: the patch, its summary and the external effects.

    Attributes:
        patch: the JSON Patch from the snapshot's context to the outcome's, or ``None``
            when there can be no preview.
        summary: :func:`summarize_patch` of it, or ``None``.
        effects: what the commands on the way do beyond the Model (each ``Effect``'s
            description, :data:`UNDECLARED` for an opaque command), in order, each once.
        before: the snapshot's context (JSON data) the patch applies to, or ``None``.
    """

    patch: list[dict[str, Any]] | None
    summary: str | None
    effects: tuple[str, ...] = ()
    before: Any = None


NO_PREVIEW = Preview(None, None)


def preview_of(
    host: Any,
    context: Projection | None,
    snapshot: Any,
    message: Message,
    capability: str,
    outcome: Sequence[Message] = (),
) -> Preview:
    """The :class:`Preview` of ``message`` on ``snapshot`` (the invocation's Model).

    With a host that can ``step`` (``Program`` can), ``update`` runs on the snapshot through
    ``message``, then through the Message of each pure command (:class:`~..app.commands.Then`)
    it returns, in order, then through ``outcome`` (what the variant's ``preview=`` says an
    external effect brings back); each :class:`~..app.commands.Effect` on the way is named
    in ``effects`` ("saves to the server"). A host with only ``simulate`` previews
    ``message`` alone. The patch goes from the snapshot's context projection to the last
    Model's. No preview without a context projection or either hook, or when stepping or
    projecting raises (logged, never raised: a broken preview must not break the call; the
    person is told there is none).
    """
    if context is None:
        return NO_PREVIEW
    step = host_step(host)
    try:
        if step is None:
            simulate = host_simulate(host)
            if simulate is None:
                return NO_PREVIEW
            after, effects = simulate(message), ()
        else:
            after, effects = _follow(step, snapshot, message, outcome)
        before = context.encode(snapshot)
        patch = diff(before, context.encode(after))
        return Preview(patch, summarize_patch(before, patch), effects, before)
    except Exception:
        _log.warning("the approval preview of %r could not be computed", capability, exc_info=True)
        return NO_PREVIEW


def _follow(
    step: Callable[[Any, Any], tuple[Any, Any]],
    model: Any,
    message: Message,
    outcome: Sequence[Message],
) -> tuple[Any, tuple[str, ...]]:
    queue: deque[Any] = deque([message])
    effects: list[str] = []
    steps = 0
    while queue and steps < MAX_STEPS:
        steps += 1
        model, commands = step(model, queue.popleft())
        for command in commands:
            if isinstance(command, Then):
                queue.append(command.message)
                continue
            said = command.description if isinstance(command, Effect) else UNDECLARED
            if said not in effects:
                effects.append(said)
        if not queue and outcome:
            queue.extend(outcome)
            outcome = ()
    return model, tuple(effects)


def _dotted(pointer: str) -> str:
    if not pointer:
        return "the context"
    parts = [p.replace("~1", "/").replace("~0", "~") for p in pointer.split("/")[1:]]
    return ".".join(parts)


def value_at(doc: Any, pointer: str) -> Any:
    """The value at JSON Pointer ``pointer`` in ``doc``, or ``None`` where there is none."""
    try:
        return cast(Any, jsonpointer).resolve_pointer(doc, pointer)
    except Exception:
        return None


def _short(value: Any) -> str:
    # the Model's own field order: what names a removed item (its id, its title) comes first
    return short_json(value, _VALUE_WIDTH, sort_keys=False)
