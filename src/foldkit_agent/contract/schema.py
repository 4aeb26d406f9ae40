"""Strict decoding of wire input, and JSON Schema export in the compatibility profile.

Two halves of one promise: *the schema advertised is the schema enforced*.

Export (:func:`json_schema`) derives a JSON Schema (2020-12) from a pydantic model and shapes
it so every MCP, WebMCP, A2A and Agent Native client accepts it:

* ``type: object`` at the root and ``additionalProperties: false`` on every object with
  declared properties;
* no ``$ref``/``$defs``: definitions are inlined (a self-referencing type is refused);
* ``T | None`` as ``anyOf`` with ``{"type": "null"}``, never a type array;
* unions as ``anyOf`` (``oneOf`` is rewritten, the OpenAPI ``discriminator`` dropped; the
  tag stays as a ``const`` on each branch);
* descriptions from ``Field(description=...)``; pydantic's generated ``title`` keys dropped.

Decoding (:class:`InputDecoder`) reads the JSON side of the schema strictly: the payload is a
JSON object, undeclared fields are refused at every depth, and nothing is coerced (``"5"``,
``true`` and ``5.5`` are not integers). Values with an encoded form (ISO dates, enums by value)
decode from it. Failures become :class:`~foldkit_agent.errors.AgentInvalidInputError` with
issues written here, never pydantic's text.
"""

from __future__ import annotations

import copy
import json
import weakref
from collections.abc import Mapping, Sequence
from math import isfinite
from typing import Any, Final, cast

from pydantic import BaseModel, TypeAdapter, ValidationError
from pydantic_core import SchemaValidator, to_json

from ..app.projection import Projection
from ..errors import AgentInvalidInputError, InputIssue

__all__ = [
    "InputDecoder",
    "RecursiveSchemaError",
    "UnexpressibleSchemaError",
    "check_expressible",
    "json_schema",
    "projection_schema",
    "schema_of_type",
]

JsonSchema = dict[str, Any]


class RecursiveSchemaError(ValueError):
    """The type refers to itself, so it has no finite inlined schema."""


class UnexpressibleSchemaError(ValueError):
    """The type accepts what its JSON Schema cannot say (DESIGN §4.13).

    Attributes:
        path: the dotted field path (``""`` for the input as a whole).
        reason: what the constraint is and how to express it instead.
    """

    def __init__(self, path: str, reason: str) -> None:
        super().__init__(f"{path or 'the input'}: {reason}")
        self.path = path
        self.reason = reason


# ---------------------------------------------------------------------------------------------
# EXPORT
# ---------------------------------------------------------------------------------------------


def json_schema(model: type[BaseModel]) -> JsonSchema:
    """The compatibility-profile JSON Schema of a pydantic model's wire (validation) form.

    Returns:
        A fresh dict: ``{"type": "object", "properties": {...}, "required": [...],
        "additionalProperties": False, ...}``.

    Raises:
        RecursiveSchemaError: the model refers to itself, directly or through other types.
    """
    schema = schema_of_type(model)
    schema.setdefault("type", "object")
    schema.setdefault("properties", {})
    schema["additionalProperties"] = False
    return schema


def schema_of_type(annotation: Any) -> JsonSchema:
    """The compatibility-profile schema of any type pydantic can describe (see module doc)."""
    raw = TypeAdapter(annotation).json_schema(mode="validation", by_alias=True)
    defs = cast(dict[str, JsonSchema], raw.pop("$defs", {}))
    return _profile(raw, defs, ())


def _profile(node: Any, defs: Mapping[str, JsonSchema], seen: tuple[str, ...]) -> Any:
    if isinstance(node, list):
        return [_profile(item, defs, seen) for item in cast(list[Any], node)]
    if not isinstance(node, dict):
        return node
    src = cast(dict[str, Any], node)
    ref = src.get("$ref")
    if isinstance(ref, str):
        name = ref.rsplit("/", 1)[-1]
        if name in seen:
            raise RecursiveSchemaError(name)
        target = dict(defs[name])
        # Sibling keywords of a $ref (description, default) refine the inlined target.
        target.update({k: v for k, v in src.items() if k != "$ref"})
        return _profile(target, defs, (*seen, name))
    out: dict[str, Any] = {}
    for key, value in src.items():
        if key in ("title", "discriminator"):
            continue
        if key == "properties":
            props = cast(dict[str, Any], value)
            out[key] = {name: _profile(sub, defs, seen) for name, sub in props.items()}
        elif key in ("$defs", "definitions"):
            continue
        elif key == "oneOf":
            out["anyOf"] = _profile(value, defs, seen)
        else:
            out[key] = _profile(value, defs, seen)
    kind = out.get("type")
    if isinstance(kind, list):
        kinds = cast(list[Any], kind)
        del out["type"]
        out["anyOf"] = [{"type": k} for k in kinds]
    if "properties" in out:
        out["type"] = "object"
        out["additionalProperties"] = False
    return out


# ---------------------------------------------------------------------------------------------
# WHAT JSON SCHEMA CANNOT SAY
# ---------------------------------------------------------------------------------------------

_STR_CONSTRAINTS = ("min_length", "max_length", "pattern")
_STR_NORMALISERS = ("strip_whitespace", "to_lower", "to_upper")
_CONFIG_NORMALISERS = {
    "str_strip_whitespace": "strip_whitespace",
    "str_to_lower": "to_lower",
    "str_to_upper": "to_upper",
}
_COERCING = {
    "function-before": "a before validator",
    "function-wrap": "a wrap validator",
    "function-plain": "a plain validator",
}


def check_expressible(model: type[BaseModel]) -> None:
    """Refuse an input type whose accepted values differ from its exported JSON Schema.

    Decoding runs pydantic in strict JSON mode; the exported schema describes the type and its
    ``Field``/``StringConstraints`` bounds. Two kinds of constraint change what is accepted in
    a way JSON Schema cannot say, and are refused here (DESIGN §4.13):

    * a string normaliser (``strip_whitespace``, ``to_lower``, ``to_upper``, in
      ``StringConstraints`` or the model config) on a string that also has a length bound or a
      pattern: the bound is checked against the normalised text, not the text sent;
    * a user ``before``, ``wrap`` or ``plain`` validator (field or model): it sees the raw
      input, so it can accept values the schema excludes.

    An ``after`` validator stays allowed: it runs on a value that already matched the schema,
    so it can only refuse it (reported as invalid input naming the field) or normalise it.
    Pydantic's own validators (URLs, IP addresses, secrets) are trusted.

    Raises:
        UnexpressibleSchemaError: naming the field path and what to write instead.
    """
    _check_node(model.__pydantic_core_schema__, (), {}, {}, set())


def _check_node(
    node: Any,
    path: tuple[str, ...],
    config: Mapping[str, Any],
    defs: dict[str, Any],
    seen: set[str],
) -> None:
    if not isinstance(node, dict):
        return
    schema = cast(dict[str, Any], node)
    kind = schema.get("type")
    where = ".".join(path)
    if kind == "definitions":
        for definition in cast(list[dict[str, Any]], schema.get("definitions", [])):
            ref = definition.get("ref")
            if isinstance(ref, str):
                defs[ref] = definition
        _check_node(schema.get("schema"), path, config, defs, seen)
        return
    ref = schema.get("schema_ref") if kind == "definition-ref" else None
    if isinstance(ref, str):
        if ref not in seen and ref in defs:
            _check_node(defs[ref], path, config, defs, seen | {ref})
        return
    own_ref = schema.get("ref")
    if isinstance(own_ref, str):
        defs.setdefault(own_ref, schema)
        seen = seen | {own_ref}
    if kind in _COERCING and not _ours(schema.get("function")):
        raise UnexpressibleSchemaError(
            where,
            f"{_COERCING[kind]} sees the raw input, so it can accept values the advertised "
            "schema excludes; check the value in an after validator (mode='after'), or express "
            "the constraint with Field(...)/StringConstraints",
        )
    if kind == "model":
        config = {**config, **cast(dict[str, Any], schema.get("config") or {})}
    elif kind == "lax-or-strict":
        _check_node(schema.get("strict_schema"), path, config, defs, seen)
        return
    elif kind == "json-or-python":
        _check_node(schema.get("json_schema"), path, config, defs, seen)
        return
    elif kind == "str":
        _check_str(schema, where, config)
        return
    for key, value in schema.items():
        if key in ("serialization", "metadata", "ref", "config", "function"):
            continue
        if key == "fields" and isinstance(value, dict):
            for name, field_schema in cast(dict[str, Any], value).items():
                alias = cast(dict[str, Any], field_schema).get("validation_alias")
                label = alias if isinstance(alias, str) else name
                _check_node(field_schema, (*path, label), config, defs, seen)
        elif key == "choices" and isinstance(value, dict):
            for choice in cast(dict[Any, Any], value).values():
                _check_node(choice, path, config, defs, seen)
        elif isinstance(value, dict):
            _check_node(value, path, config, defs, seen)
        elif isinstance(value, list):
            for item in cast(list[Any], value):
                _check_node(item[0] if isinstance(item, tuple) else item, path, config, defs, seen)


def _check_str(schema: Mapping[str, Any], where: str, config: Mapping[str, Any]) -> None:
    normalisers = [n for n in _STR_NORMALISERS if schema.get(n)]
    normalisers += [
        n for c, n in _CONFIG_NORMALISERS.items() if config.get(c) and n not in normalisers
    ]
    bounded = any(schema.get(c) is not None for c in _STR_CONSTRAINTS) or any(
        config.get(c) is not None for c in ("str_min_length", "str_max_length")
    )
    if normalisers and bounded:
        raise UnexpressibleSchemaError(
            where,
            f"{' and '.join(normalisers)} runs before the length/pattern check, so the bound "
            "applies to text other than what is sent and the advertised schema is wrong; drop "
            "the normaliser and state the rule in the schema (for example a pattern that "
            "refuses leading and trailing spaces)",
        )


def _ours(function: Any) -> bool:
    """Whether a validator function is pydantic's own (trusted to match its JSON Schema)."""
    inner: Any = (
        cast(dict[str, Any], function).get("function") if isinstance(function, dict) else function
    )
    module = getattr(inner, "__module__", None) or ""
    return module == "pydantic" or module.startswith("pydantic.")


# ---------------------------------------------------------------------------------------------
# DECODING
# ---------------------------------------------------------------------------------------------


# Only consulted when the fast encoder wrote NaN/Infinity somewhere.
_ENCODER = json.JSONEncoder(allow_nan=False, separators=(",", ":"))


class InputDecoder:
    """Strict decoder for one capability's input type, built once at declaration.

    Attributes:
        schema: the compatibility-profile JSON Schema this decoder enforces.
        accepted: the top-level field names (wire aliases) the input accepts.
    """

    __slots__ = ("_flat", "_validator", "accepted", "model", "schema")

    def __init__(self, model: type[BaseModel]) -> None:
        self.model = model
        self._validator: SchemaValidator = TypeAdapter(model).validator  # pyright: ignore[reportAttributeAccessIssue]
        self.schema: JsonSchema = json_schema(model)
        check_expressible(model)
        self.accepted: tuple[str, ...] = tuple(self.schema["properties"])
        self._flat = _flat_scalars(model)

    def decode(self, capability: str, payload: object) -> BaseModel:
        """Decode the wire ``payload`` (already-parsed JSON) into an instance of the input type.

        Raises:
            AgentInvalidInputError: the payload is not a JSON object, holds undeclared fields
                at any depth, or a value does not match its declared type.
        """
        if type(payload) is not dict:
            raise self._invalid(
                capability, [{"path": "", "problem": "the input must be a JSON object"}]
            )
        if self._flat and _plain(payload):  # pyright: ignore[reportUnknownArgumentType]
            # The same answer without the round trip through JSON text (see _flat_scalars):
            # what this accepts, the JSON path accepts as the same value; anything it refuses
            # goes the JSON path, whose issues the refusal reports.
            try:
                return self._validator.validate_python(payload, strict=True, extra="forbid")
            except (ValidationError, ValueError, RecursionError):
                pass
        try:
            text = to_json(payload, inf_nan_mode="constants")
        except (TypeError, ValueError, RecursionError) as exc:
            issue = _unencodable_text(payload) or {
                "path": "",
                "problem": "the input must be plain JSON data",
            }
            raise self._invalid(capability, [issue]) from exc
        if b"NaN" in text or b"Infinity" in text:
            # Either a string holding those letters, or a real non-finite float, which is
            # not JSON: the strict encoder tells the two apart (and raises on the latter).
            try:
                _ENCODER.encode(payload)
            except TypeError as exc:  # a value the fast encoder accepts but JSON has no form for
                problem = "the input must be plain JSON data"
                raise self._invalid(capability, [{"path": "", "problem": problem}]) from exc
            except ValueError as exc:
                problem = "holds a number that is not finite (NaN, Infinity, or out of range)"
                raise self._invalid(capability, [{"path": "", "problem": problem}]) from exc
        try:
            return self._validator.validate_json(text, strict=True, extra="forbid")
        except ValidationError as exc:
            raise self._invalid(capability, self.issues(exc)) from exc
        except (ValueError, RecursionError) as exc:  # validators that escape pydantic's wrapping
            raise self._invalid(capability, [{"path": "", "problem": "invalid value"}]) from exc

    def _invalid(self, capability: str, issues: Sequence[InputIssue]) -> AgentInvalidInputError:
        return AgentInvalidInputError(capability=capability, issues=issues, accepted=self.accepted)

    def issues(self, exc: ValidationError) -> list[InputIssue]:
        """Translate a pydantic error into this library's own issue list (deduplicated).

        At most :data:`MAX_ISSUES` are listed; past them one last issue says how many more
        problems there were, so a body of 10,000 undeclared fields costs no more to answer
        than one of twenty.
        """
        out: list[InputIssue] = []
        seen: set[tuple[str, str]] = set()
        errors = exc.errors(include_url=False, include_input=False, include_context=False)
        for n, err in enumerate(errors):
            if len(out) >= MAX_ISSUES:
                more = len(errors) - n
                out.append({"path": "", "problem": f"and {more} more problems like these"})
                break
            path, node, in_union = _walk(self.schema, err["loc"])
            problem = (
                "does not match any accepted form" if in_union else _problem(err["type"], node)
            )
            key = (path, problem)
            if key not in seen:
                seen.add(key)
                out.append({"path": path, "problem": problem})
        return out


MAX_ISSUES: Final = 20
"""Most issues one refusal lists (then one more saying how many were left out)."""

_NOT_TEXT = "holds text that is not valid Unicode (a lone UTF-16 surrogate)"
_NOT_A_NAME = "has a field name that is not valid Unicode (a lone UTF-16 surrogate)"


_SCALARS: Final = frozenset({"str", "int", "float", "bool", "none"})
"""Core-schema leaves whose strict Python validation of a JSON value equals strict JSON's."""
_FIELD_KEYS: Final = frozenset(
    {"type", "schema", "metadata", "validation_alias", "serialization_alias"}
    | {"serialization_exclude", "frozen"}
)
_SAFE_CONFIG: Final = frozenset(
    {"title", "extra_fields_behavior", "frozen", "populate_by_name", "loc_by_alias"}
    | {"validate_by_alias", "validate_by_name", "revalidate_instances", "hide_input_in_errors"}
    | {"str_min_length", "str_max_length", "cache_strings", "validate_default"}
)
_INT_BOUND: Final = 2**63
"""Integers inside +-2**63 take the Python path; larger ones go through JSON text."""


def _flat_scalars(model: type[BaseModel]) -> bool:
    """Whether the model's fields are all plain JSON scalars (``str``, ``int``, ``float``,
    ``bool``, ``None``, optionally nullable or defaulted, with any ``Field`` bounds), with no
    validator of any kind and no config that could tell Python input from JSON input.

    For such a model and a payload of exactly-typed JSON scalars (:func:`_plain`), pydantic's
    strict Python validation accepts what its strict JSON validation of ``to_json(payload)``
    accepts, with the same values, and refuses the rest (the hypothesis test in
    tests/contract/test_decoding_paths.py compares the two). Other models always take the
    JSON round trip.
    """
    core: Any = model.__pydantic_core_schema__
    if not isinstance(core, dict):
        return False
    root = cast(dict[str, Any], core)
    if root.get("type") != "model" or root.get("custom_init") or root.get("root_model"):
        return False
    if root.get("post_init") or not set(root.get("config") or {}) <= _SAFE_CONFIG:
        return False
    inner = root.get("schema")
    if not isinstance(inner, dict):
        return False
    fields_schema = cast(dict[str, Any], inner)
    if fields_schema.get("type") != "model-fields" or set(fields_schema) - {
        "type",
        "fields",
        "computed_fields",
        "model_name",
    }:
        return False
    fields = cast(dict[str, Any], fields_schema.get("fields") or {})
    for field in fields.values():
        spec = cast(dict[str, Any], field)
        if spec.get("type") != "model-field" or not set(spec) <= _FIELD_KEYS:
            return False
        node = cast(dict[str, Any], spec.get("schema") or {})
        while node.get("type") in ("default", "nullable"):
            if node.get("type") == "default" and set(node) - {"type", "schema", "default"}:
                return False
            node = cast(dict[str, Any], node.get("schema") or {})
        if node.get("type") not in _SCALARS or node.get("strict") is False:
            return False
    return True


def _plain(payload: dict[Any, Any]) -> bool:
    """Whether ``payload`` is a flat object of exactly-typed JSON scalars that its JSON
    encoding carries unchanged: text keys and strings that UTF-8 can encode, ``bool``,
    ``None``, integers within :data:`_INT_BOUND` and finite floats."""
    for key, value in payload.items():
        if type(key) is not str or not (key.isascii() or _encodable(key)):
            return False
        kind = type(value)  # pyright: ignore[reportUnknownVariableType]
        if kind is str:
            if not (value.isascii() or _encodable(value)):
                return False
        elif kind is int:
            if not -_INT_BOUND < value < _INT_BOUND:
                return False
        elif kind is float:
            if not isfinite(value):
                return False
        elif kind is not bool and value is not None:
            return False
    return True


def _unencodable_text(payload: Any) -> InputIssue | None:
    """The first string (value or field name) in ``payload`` that UTF-8 cannot encode (a lone
    surrogate), as an issue naming where it is; ``None`` when there is none."""
    stack: list[tuple[Any, tuple[str, ...]]] = [(payload, ())]
    while stack:
        value, path = stack.pop()
        if isinstance(value, str):
            if not _encodable(value):
                return {"path": _dotted(path), "problem": _NOT_TEXT}
        elif isinstance(value, dict):
            items = cast(dict[Any, Any], value)
            for key, item in reversed(list(items.items())):
                if isinstance(key, str) and not _encodable(key):
                    return {"path": _dotted(path), "problem": _NOT_A_NAME}
                stack.append((item, (*path, str(key))))
        elif isinstance(value, list | tuple):
            seq = cast(Sequence[Any], value)
            stack.extend((item, (*path, str(i))) for i, item in reversed(list(enumerate(seq))))
    return None


def _encodable(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _walk(schema: JsonSchema, loc: tuple[int | str, ...]) -> tuple[str, JsonSchema | None, bool]:
    """Follow an error location through the schema: (dotted path, schema node, inside union)."""
    parts: list[str] = []
    node: JsonSchema | None = schema
    for seg in loc:
        node = _through_nullable(node)
        if node is not None and "anyOf" in node:
            return _dotted(parts), node, True
        parts.append(str(seg))
        node = _child(node, seg)
    node = _through_nullable(node)
    return _dotted(parts), node, False


MAX_ECHOED: Final = 200
"""Characters of one field name a refusal repeats (as of a capability name); a whole path is
cut at five times that. Names off the wire are the caller's: 21 undeclared names of 50 KB
each made a 1.5 MB answer."""


def _dotted(parts: Sequence[str]) -> str:
    """``parts`` joined by dots, each cut at :data:`MAX_ECHOED` characters, the whole at five
    times that."""
    return ".".join(part[:MAX_ECHOED] for part in parts)[: 5 * MAX_ECHOED]


def _through_nullable(node: JsonSchema | None) -> JsonSchema | None:
    while node is not None and "anyOf" in node:
        branches = [b for b in cast(list[JsonSchema], node["anyOf"]) if b.get("type") != "null"]
        if len(branches) != 1:
            return node
        node = branches[0]
    return node


def _child(node: JsonSchema | None, seg: int | str) -> JsonSchema | None:
    if node is None:
        return None
    if isinstance(seg, int):
        prefix = node.get("prefixItems")
        if isinstance(prefix, list) and seg < len(cast(list[Any], prefix)):
            return cast(list[JsonSchema], prefix)[seg]
        items = node.get("items")
        return cast(JsonSchema, items) if isinstance(items, dict) else None
    props = node.get("properties")
    if isinstance(props, dict) and seg in props:
        return cast(JsonSchema, props[seg])
    extra = node.get("additionalProperties")
    return cast(JsonSchema, extra) if isinstance(extra, dict) else None


_TYPE_WORDS = {
    "string": "a string",
    "integer": "an integer",
    "number": "a number",
    "boolean": "true or false",
    "array": "an array",
    "object": "an object",
    "null": "null",
}


def _expected(node: JsonSchema | None) -> str | None:
    if node is None:
        return None
    if "const" in node:
        return f"exactly {json.dumps(node['const'])}"
    if "enum" in node:
        values = ", ".join(json.dumps(v) for v in cast(list[Any], node["enum"]))
        return f"one of {values}"
    fmt = node.get("format")
    if fmt == "date":
        return "a date (YYYY-MM-DD)"
    if fmt == "date-time":
        return "a date-time (ISO 8601)"
    if fmt == "time":
        return "a time (HH:MM[:SS])"
    if fmt == "uuid":
        return "a UUID string"
    kind = node.get("type")
    if isinstance(kind, str):
        return _TYPE_WORDS.get(kind)
    return None


_FIXED = {
    "missing": "missing required field",
    "extra_forbidden": "unexpected field",
    "json_invalid": "the input is not valid JSON",
    "recursion_loop": "the input is nested too deeply",
    "string_too_short": "is too short",
    "string_too_long": "is too long",
    "too_short": "has too few items",
    "too_long": "has too many items",
    "string_pattern_mismatch": "does not match the required pattern",
    "greater_than": "is too small",
    "greater_than_equal": "is too small",
    "less_than": "is too large",
    "less_than_equal": "is too large",
    "multiple_of": "is not an allowed multiple",
    "finite_number": "must be a finite number",
    "int_from_float": "expected an integer, not a fraction",
    "set_item_not_hashable": "holds an item that cannot be compared",
    "too_many_items": "has too many items",
}


_BOUNDS: dict[str, tuple[str, str]] = {
    "string_too_short": ("minLength", "must be at least {} character{} long"),
    "string_too_long": ("maxLength", "must be at most {} character{} long"),
    "too_short": ("minItems", "must hold at least {} item{}"),
    "too_long": ("maxItems", "must hold at most {} item{}"),
    "greater_than": ("exclusiveMinimum", "must be greater than {}"),
    "greater_than_equal": ("minimum", "must be at least {}"),
    "less_than": ("exclusiveMaximum", "must be less than {}"),
    "less_than_equal": ("maximum", "must be at most {}"),
    "multiple_of": ("multipleOf", "must be a multiple of {}"),
}


def _problem(kind: str, node: JsonSchema | None) -> str:
    bound = _BOUNDS.get(kind)
    if bound is not None and node is not None and bound[0] in node:
        limit = node[bound[0]]
        if kind == "string_too_short" and limit == 1:
            return "must not be empty"
        return bound[1].format(json.dumps(limit), "" if limit == 1 else "s")
    fixed = _FIXED.get(kind)
    if fixed is not None:
        return fixed
    expected = _expected(node)
    if kind in ("value_error", "assertion_error", "custom_error"):
        return "invalid value"
    if expected is not None:
        return f"expected {expected}"
    return "invalid value"


_projection_schemas: weakref.WeakKeyDictionary[Projection, JsonSchema] = weakref.WeakKeyDictionary()


def projection_schema(projection: Projection) -> JsonSchema:
    """The compatibility-profile JSON Schema of a projection's encoded value.

    An object with one property per picked field and ``additionalProperties: false``;
    computed once per projection and returned as a fresh copy.

    Example:
        >>> projection_schema(projection.pick(App.model.todos))["required"]
        ['todos']
    """
    schema = _projection_schemas.get(projection)
    if schema is None:
        schema = schema_of_type(projection.shape)
        schema["additionalProperties"] = False
        _projection_schemas[projection] = schema
    return copy.deepcopy(schema)
