"""The contract as a committed manifest (``agent.json``) and as documentation (``AGENT.md``).

Both are computed from the declaration alone: nothing is read from a Model, nothing depends
on the machine, the clock, dict hashing or the Python version, so the same contract gives the
same bytes everywhere. Commit them, and a change to what an application exposes shows up in
review; ``foldkit-agent check`` fails CI when the committed manifest drifted.

Sizes. An agent pays for a contract in context-window tokens, mostly for the tool listing.
Each capability, resource and the context report ``{"bytes", "tokens"}``:

* ``bytes`` is the length in UTF-8 of the canonical JSON (sorted keys, no whitespace, non-ASCII
  kept as is) of what a client is shown: ``{"name", "description", "input_schema", "hints"}``
  (plus ``"title"`` when there is one; ``hints`` without the undeclared ones) for a
  capability, ``{"name", "description", "schema"}`` for a resource, and the context schema;
* each capability also reports ``schema_size``, its input schema alone, and the manifest the
  sum of those as ``size.schemas`` (already counted in ``size.capabilities``);
* ``tokens`` is ``ceil(bytes / 4)``, the usual rule of thumb for English text and JSON with
  BPE tokenizers. It is an estimate for budgeting and comparing, not a count for any model.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import Any

from ..contract.completion import Completion, StateCompletion
from ..contract.declare import AgentDefinition, Capability
from ..contract.schema import projection_schema

__all__ = [
    "MANIFEST_VERSION",
    "TOKEN_ESTIMATOR",
    "canonical_json",
    "context_schema",
    "estimate_tokens",
    "manifest_json",
    "messages",
    "resources",
    "schema",
    "to_manifest",
]

MANIFEST_VERSION = 4
"""Bumped when the manifest's shape changes (2: capabilities carry ``title`` and ``hints``;
3: each capability's ``schema_size`` and the ``schemas`` total, ``source`` on a state
completion, and ``approval``; 4: ``approval_request``, whether ``describe=`` and ``preview=``
are declared)."""

TOKEN_ESTIMATOR = (
    "bytes = UTF-8 length of the canonical JSON (sorted keys, no whitespace); "
    "tokens = ceil(bytes / 4)"
)
"""How sizes are computed, as recorded in the manifest."""


def canonical_json(value: Any) -> bytes:
    """``value`` as canonical JSON bytes: sorted keys, no whitespace, UTF-8.

    Example:
        >>> canonical_json({"b": 1, "a": [True, None]})
        b'{"a":[true,null],"b":1}'
    """
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()


def estimate_tokens(n_bytes: int) -> int:
    """The token estimate for ``n_bytes`` of JSON: ``ceil(n_bytes / 4)``.

    Example:
        >>> estimate_tokens(9)
        3
    """
    return -(-n_bytes // 4)


def _size(value: Any) -> dict[str, int]:
    n = len(canonical_json(value))
    return {"bytes": n, "tokens": estimate_tokens(n)}


def _sum(sizes: Iterable[Mapping[str, int]]) -> dict[str, int]:
    n = sum(s["bytes"] for s in sizes)
    return {"bytes": n, "tokens": estimate_tokens(n)}


def _completion(cap: Capability) -> dict[str, Any]:
    done = cap.completion
    if isinstance(done, Completion):
        return {
            "kind": "message",
            "success": done.success.__message_tag__,
            "failure": done.failure.__message_tag__ if done.failure is not None else None,
            "correlated": done.correlate is not None,
            "timeout_seconds": float(done.seconds),
        }
    if isinstance(done, StateCompletion):
        return {
            "kind": "state",
            "watches": list(done.projection.fields) if done.projection is not None else [],
            "source": done.source is not None,
            "timeout_seconds": float(done.seconds),
        }
    return {"kind": "none"}


def _shown(cap: Capability, schema: Any) -> dict[str, Any]:
    shown: dict[str, Any] = {
        "name": cap.name,
        "description": cap.listed_description,
        "input_schema": schema,
        "hints": cap.hints.declared(),
    }
    if cap.title is not None:
        shown["title"] = cap.title
    return shown


def _capability(cap: Capability) -> dict[str, Any]:
    schema = cap.input_schema
    shown = _shown(cap, schema)
    entry: dict[str, Any] = {
        "name": cap.name,
        "tag": cap.tag,
        "title": cap.title,
        "description": cap.description,
        "hints": cap.hints.all(),
        "input_schema": schema,
        "model_dependent": cap.available is not None,
        "has_authorize": cap.authorize is not None,
        "scopes": list(cap.scopes),
        "approval": cap.approval,
        "approval_request": {
            "describe": cap.presentation.describe is not None,
            "preview": cap.presentation.preview is not None,
        },
        "completion": _completion(cap),
        "size": _size(shown),
        "schema_size": _size(schema),
    }
    if cap.rate is not None:
        entry["rate"] = cap.rate.text  # only where declared: other manifests stay as they were
    if cap.available_when is not None:  # only when declared: older manifests stay as they were
        entry["available_when"] = cap.available_when
    return entry


def to_manifest(definition: AgentDefinition) -> dict[str, Any]:
    """The contract as JSON data: the content of ``agent.json``.

    Serialise it with :func:`manifest_json` (``json.dumps(m, sort_keys=True, indent=2)`` plus
    a final newline); the bytes are identical across processes, machines and
    ``PYTHONHASHSEED`` values for a given contract.

    Shape::

        {"manifest_version": 4,
         "capabilities": [{"name", "tag", "title": str | None, "description", "input_schema",
                           "hints": {"read_only": bool, "destructive": bool | None,
                                     "idempotent": bool, "open_world": bool | None},
                           "model_dependent": bool,   # has an available() predicate
                           "available_when": str,     # only where declared
                           "has_authorize": bool,     # an authorize() hook checks the caller
                           "scopes": [str],           # OAuth scopes a token needs (scopes=)
                           "approval": "none" | "always" | "conditional",   # confirm=
                           "approval_request": {"describe": bool,   # describe= declared
                                                "preview": bool},   # preview= declared
                           "completion": {"kind": "none"}
                                       | {"kind": "message", "success": tag, "failure": tag|None,
                                          "correlated": bool, "timeout_seconds": float}
                                       | {"kind": "state", "watches": [field],
                                          "source": bool,     # when(source=...)
                                          "timeout_seconds"},
                           "size": {"bytes", "tokens"},          # all a client is shown
                           "schema_size": {"bytes", "tokens"},   # input_schema alone
                           "rate": str},   # rate= as declared ("10/minute"), only if declared
                          ...],                                  # declaration order
         "resources": [{"name", "description", "schema", "size"}, ...],
         "context": {"schema", "size"} | None,
         "size": {"estimator": str, "capabilities", "resources", "context", "total",
                  "schemas"}}    # the input schemas alone (part of "capabilities")

    See the module docstring for how sizes are estimated.

    Raises:
        TypeError: ``definition`` is not from ``agent.make``.

    Example:
        >>> [c["name"] for c in to_manifest(AppAgent)["capabilities"]][:2]
        ['create_todo', 'rename_todo']
    """
    if not isinstance(definition, AgentDefinition):  # pyright: ignore[reportUnnecessaryIsInstance]
        raise TypeError("to_manifest takes the result of agent.make(...)")
    capabilities = [_capability(c) for c in definition.capabilities]
    resources: list[dict[str, Any]] = []
    for res in definition.resources.values():
        schema = projection_schema(res.projection)
        shown = {"name": res.name, "description": res.description, "schema": schema}
        resources.append({**shown, "size": _size(shown)})
    context: dict[str, Any] | None = None
    if definition.context is not None:
        schema = projection_schema(definition.context)
        context = {"schema": schema, "size": _size(schema)}
    caps_size = _sum(c["size"] for c in capabilities)
    res_size = _sum(r["size"] for r in resources)
    ctx_size = context["size"] if context is not None else {"bytes": 0, "tokens": 0}
    return {
        "manifest_version": MANIFEST_VERSION,
        "capabilities": capabilities,
        "resources": resources,
        "context": context,
        "size": {
            "estimator": TOKEN_ESTIMATOR,
            "capabilities": caps_size,
            "resources": res_size,
            "context": ctx_size,
            "total": _sum((caps_size, res_size, ctx_size)),
            "schemas": _sum(c["schema_size"] for c in capabilities),
        },
    }


def manifest_json(definition: AgentDefinition) -> str:
    """``agent.json`` as text: ``json.dumps(to_manifest(d), sort_keys=True, indent=2) + "\\n"``.

    Example:
        >>> Path("agent.json").write_text(manifest_json(AppAgent), encoding="utf-8")
    """
    return json.dumps(to_manifest(definition), sort_keys=True, indent=2) + "\n"


# -- introspection: the contract as plain data --------------------------------------------


def messages(definition: AgentDefinition) -> list[dict[str, Any]]:
    """One dict per capability, in declaration order.

    Keys: ``name``, ``tag``, ``title`` (or ``None``), ``description``, ``input_schema``,
    ``hints`` (``read_only``, ``destructive``, ``idempotent``, ``open_world``; ``None`` where
    not declared), ``model_dependent`` (has an ``available`` predicate),
    ``requires_authorization`` (an ``authorize`` hook checks the caller; the original's name)
    and ``has_authorize`` (the same, under the name agent.json uses), ``approval``
    (``"none"``, ``"always"`` or ``"conditional"``: its ``confirm``), ``completion``
    (``"none"``, ``"message"`` or ``"state"``).

    >>> [m["name"] for m in messages(AppAgent)]
    ['create_todo', 'rename_todo', 'delete_todo']
    """
    return [
        {
            "name": c.name,
            "tag": c.tag,
            "title": c.title,
            "description": c.description,
            "input_schema": c.input_schema,
            "hints": c.hints.all(),
            "model_dependent": c.available is not None,
            "requires_authorization": c.authorize is not None,
            "has_authorize": c.authorize is not None,
            "approval": c.approval,
            "completion": c.completion_kind,
        }
        for c in definition.capabilities
    ]


def resources(definition: AgentDefinition) -> list[dict[str, Any]]:
    """One dict per resource: ``name``, ``description``, ``schema``."""
    return [
        {"name": r.name, "description": r.description, "schema": projection_schema(r.projection)}
        for r in definition.resources.values()
    ]


def context_schema(definition: AgentDefinition) -> dict[str, Any] | None:
    """The JSON Schema of the context projection, or ``None`` without a context."""
    return None if definition.context is None else projection_schema(definition.context)


def schema(definition: AgentDefinition) -> dict[str, Any]:
    """The whole contract as data.

    Returns ``{"capabilities": messages(d), "resources": resources(d),
    "context": context_schema(d)}``.
    """
    return {
        "capabilities": messages(definition),
        "resources": resources(definition),
        "context": context_schema(definition),
    }
