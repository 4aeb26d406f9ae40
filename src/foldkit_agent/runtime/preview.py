"""Approval previews: what a Message would change in what the agent sees (DESIGN §11).

Because ``update`` is pure, the runtime can ask the host what the Model *would* become
(``host.simulate(message)``: nothing applied, commands dropped) and show a person the
difference in the context projection before anything is sent: as a JSON Patch (RFC 6902,
computed by the ``jsonpatch`` library) and as a one-line summary.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from typing import Any, cast

import jsonpatch  # pyright: ignore[reportMissingTypeStubs]
import jsonpointer  # pyright: ignore[reportMissingTypeStubs]

from ..app.host import host_simulate
from ..app.message import Message
from ..app.projection import Projection
from ..contract.approval import short_json

__all__ = ["diff", "preview_of", "summarize_patch"]

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
            parts.append(f"removes {path} (was {_short(_at(before, str(op.get('path', ''))))})")
        elif kind == "replace":
            old = _short(_at(before, str(op.get("path", ""))))
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


def preview_of(
    host: Any, context: Projection | None, snapshot: Any, message: Message, capability: str
) -> tuple[list[dict[str, Any]] | None, str | None]:
    """``(patch, summary)`` for ``message``, or ``(None, None)`` when there can be no preview.

    ``snapshot`` is the invocation's Model; the patch goes from its context projection to the
    projection of ``host.simulate(message)``. No preview without a context projection, a
    host without ``simulate``, or when simulating or projecting raises (logged, never raised:
    a broken preview must not break the call; the person is told there is none).
    """
    simulate = host_simulate(host)
    if context is None or simulate is None:
        return None, None
    try:
        before = context.encode(snapshot)
        after = context.encode(simulate(message))
        patch = diff(before, after)
        return patch, summarize_patch(before, patch)
    except Exception:
        _log.warning("the approval preview of %r could not be computed", capability, exc_info=True)
        return None, None


def _dotted(pointer: str) -> str:
    if not pointer:
        return "the context"
    parts = [p.replace("~1", "/").replace("~0", "~") for p in pointer.split("/")[1:]]
    return ".".join(parts)


def _at(doc: Any, pointer: str) -> Any:
    try:
        return cast(Any, jsonpointer).resolve_pointer(doc, pointer)
    except Exception:
        return None


def _short(value: Any) -> str:
    # the Model's own field order: what names a removed item (its id, its title) comes first
    return short_json(value, _VALUE_WIDTH, sort_keys=False)
