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
from typing import Any, cast

from .contract.completion import Completion, StateCompletion
from .contract.declare import AgentDefinition, Capability
from .contract.schema import projection_schema

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
    "to_markdown",
]

MANIFEST_VERSION = 3
"""Bumped when the manifest's shape changes (2: capabilities carry ``title`` and ``hints``;
3: each capability's ``schema_size`` and the ``schemas`` total, ``source`` on a state
completion, and ``approval``)."""

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
        "description": cap.description,
        "input_schema": schema,
        "hints": cap.hints.declared(),
    }
    if cap.title is not None:
        shown["title"] = cap.title
    return shown


def _hints(cap: Capability) -> dict[str, bool | None]:
    h = cap.hints
    return {
        "read_only": h.read_only,
        "destructive": h.destructive,
        "idempotent": h.idempotent,
        "open_world": h.open_world,
    }


def _capability(cap: Capability) -> dict[str, Any]:
    schema = cap.input_schema
    shown = _shown(cap, schema)
    return {
        "name": cap.name,
        "tag": cap.tag,
        "title": cap.title,
        "description": cap.description,
        "hints": _hints(cap),
        "input_schema": schema,
        "model_dependent": cap.available is not None,
        "has_authorize": cap.authorize is not None,
        "approval": cap.approval,
        "completion": _completion(cap),
        "size": _size(shown),
        "schema_size": _size(schema),
    }


def to_manifest(definition: AgentDefinition) -> dict[str, Any]:
    """The contract as JSON data: the content of ``agent.json``.

    Serialise it with :func:`manifest_json` (``json.dumps(m, sort_keys=True, indent=2)`` plus
    a final newline); the bytes are identical across processes, machines and
    ``PYTHONHASHSEED`` values for a given contract.

    Shape::

        {"manifest_version": 3,
         "capabilities": [{"name", "tag", "title": str | None, "description", "input_schema",
                           "hints": {"read_only": bool, "destructive": bool | None,
                                     "idempotent": bool, "open_world": bool | None},
                           "model_dependent": bool,   # has an available() predicate
                           "has_authorize": bool,     # an authorize() hook checks the caller
                           "approval": "none" | "always" | "conditional",   # confirm=
                           "completion": {"kind": "none"}
                                       | {"kind": "message", "success": tag, "failure": tag|None,
                                          "correlated": bool, "timeout_seconds": float}
                                       | {"kind": "state", "watches": [field],
                                          "source": bool,     # when(source=...)
                                          "timeout_seconds"},
                           "size": {"bytes", "tokens"},          # all a client is shown
                           "schema_size": {"bytes", "tokens"}},  # input_schema alone
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


# -- Markdown ------------------------------------------------------------------------------------


def to_markdown(
    definition: AgentDefinition, *, title: str | None = None, source: str | None = None
) -> str:
    """The contract as Markdown documentation for the agents and people using it (``AGENT.md``).

    It explains how calls behave (availability, strict input, authorization, completion,
    refusals), then lists every capability with its input fields, the resources, the
    context, and the size budget. Deterministic, like :func:`to_manifest`.

    Args:
        definition: from ``agent.make``.
        title: the document title. By default ``Agent contract: <app>``, where ``<app>`` is
            the last part of ``source``'s module (``examples.todo:AppAgent`` gives ``todo``),
            or plain ``Agent contract`` without a ``source``.
        source: the ``MODULE:ATTR`` the contract is declared at; named in the title and in
            the regeneration note (``foldkit-agent docs`` passes it).

    Raises:
        TypeError: ``definition`` is not from ``agent.make``.

    Example:
        >>> text = to_markdown(AppAgent, source="examples.todo:AppAgent")
        >>> text.splitlines()[0]
        '# Agent contract: todo'
    """
    m = to_manifest(definition)
    if title is None:
        app = source.partition(":")[0].rsplit(".", 1)[-1] if source else ""
        title = f"Agent contract: {app}" if app else "Agent contract"
    out: list[str] = [f"# {title}", ""]
    out += [
        "<!-- Generated by foldkit-agent from the declared contract. Do not edit by hand:",
        f"     regenerate with `foldkit-agent docs {source or 'MODULE:ATTR'} -o AGENT.md`. -->",
        "",
        "This document lists what an AI agent can see and do in this application. It is",
        "generated from the same declaration the runtime enforces, so it cannot promise more",
        "than a call will accept.",
        "",
    ]
    out += _how_calls_work()
    out += _capabilities_section(m["capabilities"])
    out += _resources_section(m["resources"])
    out += _context_section(m["context"])
    out += _size_section(m)
    while out and out[-1] == "":
        out.pop()
    return "\n".join(out) + "\n"


def _how_calls_work() -> list[str]:
    return [
        "## How calls work",
        "",
        "- **A capability is one of the application's own Messages.** Calling it hands that",
        "  Message to the application's `update`, exactly as a click in its interface would.",
        "  There is no separate agent code path.",
        "- **Some capabilities exist only in some states** (marked *depends on state* below).",
        "  Ask for the current list before calling. A call to a capability that is not offered",
        "  right now is refused, and nothing is sent.",
        "- **Input is checked strictly** against the schema shown. A field that is not",
        '  listed, a missing required field, or a value of the wrong type (`"5"` for a',
        "  number, `true` for a number, `5.5` for an integer) is refused with a list of",
        "  problems and the accepted fields. A capability without fields takes exactly `{}`.",
        "- **Authorization** (marked *checked*) looks at who the connection authenticated,",
        "  never at the arguments. Adding an identity to the input does not help.",
        "- **Approval** (marked *asks a person*) means a person sees the exact request, and",
        "  what it would change, and approves it before anything is sent. A declined or",
        "  unanswered request is refused with nothing sent; a connection that cannot ask a",
        "  person is refused too.",
        "- **Completion** says when a call returns. *On dispatch*: once the application",
        "  accepted the Message. *On a Message*: when the named result Message arrives;",
        "  the failure Message makes the call fail. *On state*: when the application state",
        "  shows the change. A timeout means the outcome is unknown, not that it failed, and",
        "  nothing is ever rolled back: read the context before trying again.",
        "- **Effect** describes what a call does, as the application declared it:",
        "  *read-only* changes nothing; *destructive* may delete or overwrite what exists;",
        "  *idempotent* can be repeated with the same input to no further effect; *reaches",
        "  outside* touches systems or people beyond this application. Where a hint says",
        "  *may*, it was not declared: assume the cautious side. Hints describe; they permit",
        "  nothing.",
        "- **Refusals are answers, not crashes.** Each names the capability and the reason.",
        "  The same call gives the same answer until the application state changes.",
        "",
    ]


_APPROVAL_TEXT = {
    "none": "none",
    "always": "asks a person before every call is sent",
    "conditional": "asks a person before some calls are sent (the application decides per call)",
}


def _completion_text(done: Mapping[str, Any]) -> str:
    kind = done["kind"]
    if kind == "message":
        text = f"on a Message: `{done['success']}`"
        if done["failure"] is not None:
            text += f", fails on `{done['failure']}`"
        return text + f" (timeout {_num(done['timeout_seconds'])} s)"
    if kind == "state":
        fields = ", ".join(f"`{f}`" for f in done["watches"])
        if done.get("source"):
            fields = "a value outside the application state"
        return f"on state: {fields} (timeout {_num(done['timeout_seconds'])} s)"
    return "on dispatch"


def _effect_text(hints: Mapping[str, Any]) -> str:
    words = (
        ["read-only"]
        if hints["read_only"]
        else [
            {True: "destructive", False: "not destructive", None: "may be destructive"}[
                hints["destructive"]
            ]
        ]
    )
    if hints["idempotent"] and not hints["read_only"]:
        words.append("idempotent")
    words.append(
        {True: "reaches outside", False: "inside the application only", None: "may reach outside"}[
            hints["open_world"]
        ]
    )
    return ", ".join(words)


def _num(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else repr(value)


def _size_text(size: Mapping[str, int]) -> str:
    return f"{size['bytes']} B, ~{size['tokens']} tokens"


def _cell(text: str) -> str:
    return " ".join(str(text).split()).replace("|", "\\|")


def _capabilities_section(caps: list[dict[str, Any]]) -> list[str]:
    out = ["## Capabilities", ""]
    if not caps:
        return [*out, "This contract exposes no capabilities.", ""]
    out += [
        "| Capability | What it does | Effect | Availability | Authorization | Completes | Size |",
        "| --- | --- | --- | --- | --- | --- | --- |",
    ]
    for c in caps:
        out.append(
            "| "
            + " | ".join(
                [
                    f"[`{c['name']}`](#{c['name'].lower()})",
                    _cell(c["description"]),
                    _effect_text(c["hints"]),
                    "depends on state" if c["model_dependent"] else "always",
                    "checked" if c["has_authorize"] else "none",
                    _cell(_completion_text(c["completion"])),
                    _size_text(c["size"]),
                ]
            )
            + " |"
        )
    out.append("")
    for c in caps:
        out += [f"### `{c['name']}`", "", c["description"], ""]
        if c["title"] is not None:
            out.append(f"- Title: {_cell(c['title'])}")
        out += [
            f"- Message: `{c['tag']}`",
            f"- Effect: {_effect_text(c['hints'])}",
            "- Availability: "
            + (
                "only in some states; check the current list first"
                if c["model_dependent"]
                else "always offered"
            ),
            "- Authorization: "
            + ("checked against the authenticated caller" if c["has_authorize"] else "none"),
            f"- Approval: {_APPROVAL_TEXT[c['approval']]}",
            f"- Completes: {_completion_text(c['completion'])}",
            f"- Size: {_size_text(c['size'])} (its input schema: {_size_text(c['schema_size'])})",
            "",
        ]
        out += _fields_block(c["input_schema"], "Input", "Takes no input: send `{}`.")
        out += _schema_block(c["input_schema"])
    return out


def _resources_section(resources: list[dict[str, Any]]) -> list[str]:
    out = ["## Resources", ""]
    if not resources:
        return [*out, "This contract declares no resources.", ""]
    out += ["Read-only views of the application state, read by name.", ""]
    for r in resources:
        out += [f"### `{r['name']}`", "", r["description"], "", f"- Size: {_size_text(r['size'])}"]
        out.append("")
        out += _fields_block(r["schema"], "Fields", "It has no fields.")
        out += _schema_block(r["schema"])
    return out


def _context_section(context: Mapping[str, Any] | None) -> list[str]:
    out = ["## Context", ""]
    if context is None:
        return [*out, "This contract declares no context.", ""]
    out += [
        "The part of the application state an agent is shown. It changes as the",
        "application runs; read it again after a call rather than assuming what it holds.",
        "",
        f"- Size of its schema: {_size_text(context['size'])}",
        "",
    ]
    out += _fields_block(context["schema"], "Fields", "It has no fields.")
    out += _schema_block(context["schema"])
    return out


def _size_section(m: Mapping[str, Any]) -> list[str]:
    size = m["size"]
    return [
        "## Size budget",
        "",
        "What listing this contract costs an agent's context window. Bytes are the UTF-8",
        "length of the canonical JSON (sorted keys, no whitespace) a client is shown; tokens",
        "are estimated as bytes / 4, rounded up. Use them to compare, not as exact counts.",
        "",
        "| Part | Bytes | Tokens (est.) |",
        "| --- | ---: | ---: |",
        f"| Capabilities ({len(m['capabilities'])}) | {size['capabilities']['bytes']} | "
        f"{size['capabilities']['tokens']} |",
        f"| Resources ({len(m['resources'])}) | {size['resources']['bytes']} | "
        f"{size['resources']['tokens']} |",
        f"| Context | {size['context']['bytes']} | {size['context']['tokens']} |",
        f"| **Total** | **{size['total']['bytes']}** | **{size['total']['tokens']}** |",
        "",
        f"Of the capabilities' bytes, {size['schemas']['bytes']} (~{size['schemas']['tokens']} "
        "tokens) are their input schemas.",
        "",
    ]


def _schema_block(schema: Any) -> list[str]:
    return [
        "<details><summary>JSON Schema</summary>",
        "",
        "```json",
        json.dumps(schema, sort_keys=True, indent=2),
        "```",
        "",
        "</details>",
        "",
    ]


def _fields_block(schema: Mapping[str, Any], heading: str, empty: str) -> list[str]:
    rows = list(_rows(schema, ""))
    if not rows:
        return [empty, ""]
    out = [f"{heading}:", "", "| Field | Type | Required | Notes |", "| --- | --- | --- | --- |"]
    for path, sub, required in rows:
        out.append(
            f"| `{path}` | {_cell(_type(sub))} | {'yes' if required else 'no'} | "
            f"{_cell(_notes(sub))} |"
        )
    out.append("")
    return out


def _rows(schema: Mapping[str, Any], prefix: str) -> Iterable[tuple[str, Mapping[str, Any], bool]]:
    """``(dotted path, schema, required in its object)`` per field, depth first, in order."""
    props = cast(Mapping[str, Any], schema.get("properties") or {})
    required = set(cast(list[str], schema.get("required") or []))
    for name, sub in props.items():
        path = f"{prefix}{name}"
        sub_map = cast(Mapping[str, Any], sub)
        yield path, sub_map, name in required
        yield from _nested(sub_map, path)


def _nested(schema: Mapping[str, Any], path: str) -> Iterable[tuple[str, Mapping[str, Any], bool]]:
    if schema.get("type") == "object" and "properties" in schema:
        yield from _rows(schema, f"{path}.")
    elif schema.get("type") == "array" and isinstance(schema.get("items"), Mapping):
        yield from _nested(cast(Mapping[str, Any], schema["items"]), f"{path}[]")
    elif "anyOf" in schema:
        for option in cast(list[Mapping[str, Any]], schema["anyOf"]):
            yield from _nested(option, path)


def _type(schema: Mapping[str, Any]) -> str:
    if "const" in schema:
        return f"`{json.dumps(schema['const'])}`"
    if "enum" in schema:
        return "one of " + ", ".join(f"`{json.dumps(v)}`" for v in cast(list[Any], schema["enum"]))
    if "anyOf" in schema:
        return " or ".join(_type(o) for o in cast(list[Mapping[str, Any]], schema["anyOf"]))
    kind = schema.get("type")
    if kind == "array":
        items = schema.get("items")
        if isinstance(items, Mapping):
            return f"list of {_type(cast(Mapping[str, Any], items))}"
        return "list"
    if kind == "object":
        extra = schema.get("additionalProperties")
        if "properties" not in schema and isinstance(extra, Mapping):
            return f"map of string to {_type(cast(Mapping[str, Any], extra))}"
        return "object"
    if isinstance(kind, str):
        fmt = schema.get("format")
        return f"{kind} ({fmt})" if isinstance(fmt, str) else kind
    return "any"


def _plural(n: Any, word: str) -> str:
    return f"{n} {word}" if n == 1 else f"{n} {word}s"


def _range(schema: Mapping[str, Any], low: str, high: str, word: str) -> str | None:
    lo, hi = schema.get(low), schema.get(high)
    if lo is not None and hi is not None:
        return f"{lo}–{hi} {word}s" if lo != hi else f"exactly {_plural(lo, word)}"
    if lo is not None:
        return f"at least {_plural(lo, word)}"
    if hi is not None:
        return f"at most {_plural(hi, word)}"
    return None


_BOUNDS = (
    ("minimum", "≥ {}"),
    ("exclusiveMinimum", "> {}"),
    ("maximum", "≤ {}"),
    ("exclusiveMaximum", "< {}"),
    ("multipleOf", "a multiple of {}"),
    ("pattern", "matches `{}`"),
)


def _limits(schema: Mapping[str, Any]) -> list[str]:
    found = [
        _range(schema, "minLength", "maxLength", "character"),
        _range(schema, "minItems", "maxItems", "item"),
    ]
    limits = [text for text in found if text is not None]
    limits += [text.format(schema[key]) for key, text in _BOUNDS if key in schema]
    return limits


def _notes(schema: Mapping[str, Any]) -> str:
    parts: list[str] = []
    description = schema.get("description")
    if isinstance(description, str) and description.strip():
        parts.append(description.strip().rstrip(".") + ".")
    limits = _limits(schema)
    if limits:
        text = "; ".join(limits)
        parts.append(text[:1].upper() + text[1:] + ".")
    if "default" in schema:
        parts.append(f"Default `{json.dumps(schema['default'], sort_keys=True)}`.")
    return " ".join(parts)


# -- introspection: the contract as plain data --------------------------------------------


def messages(definition: AgentDefinition) -> list[dict[str, Any]]:
    """One dict per capability, in declaration order.

    Keys: ``name``, ``tag``, ``title`` (or ``None``), ``description``, ``input_schema``,
    ``hints`` (``read_only``, ``destructive``, ``idempotent``, ``open_world``; ``None`` where
    not declared), ``model_dependent`` (has an ``available`` predicate), ``has_authorize`` (an
    ``authorize`` hook checks the caller), ``approval`` (``"none"``, ``"always"`` or
    ``"conditional"``: its ``confirm``), ``completion`` (``"none"``, ``"message"`` or
    ``"state"``).

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
            "hints": _hints(c),
            "model_dependent": c.available is not None,
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
