"""Strict decoding of wire input: the enforcing half of *the schema advertised is the schema
enforced* (the advertised half is :mod:`.schema`).

:class:`InputDecoder` reads the JSON side of the schema strictly: the payload is a JSON
object, undeclared fields are refused at every depth, and nothing is coerced (``"5"``,
``true`` and ``5.5`` are not integers). Values with an encoded form (ISO dates, enums by
value) decode from it. Failures become :class:`~foldkit_agent.errors.AgentInvalidInputError`
with issues written here, never pydantic's text (DESIGN §4.4, §4.5).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from math import isfinite
from types import UnionType
from typing import Any, Final, Union, cast, get_args, get_origin

from pydantic import BaseModel, RootModel, StringConstraints, TypeAdapter, ValidationError
from pydantic.fields import FieldInfo
from pydantic.types import Strict
from pydantic_core import SchemaValidator, to_json

from ..errors import AgentInvalidInputError, InputIssue
from .expressible import check_expressible
from .schema import JsonSchema, json_schema

__all__ = ["MAX_ECHOED", "MAX_ISSUES", "InputDecoder"]


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
        # Plain: a flat object of exactly-typed JSON scalars that its JSON encoding carries
        # unchanged (text keys and strings UTF-8 can encode, bool, None, integers within
        # _INT_BOUND, finite floats). For a model of flat scalars (see _flat_scalars) such a
        # payload gets the same answer without the round trip through JSON text: what this
        # accepts, the JSON path accepts as the same value; anything it refuses goes the JSON
        # path, whose issues the refusal reports.
        plain = self._flat
        if plain:
            for key, value in cast("dict[Any, Any]", payload).items():
                if type(key) is not str or not (key.isascii() or _encodable(key)):
                    plain = False
                    break
                kind = type(value)  # pyright: ignore[reportUnknownVariableType]
                if kind is str:
                    plain = value.isascii() or _encodable(value)
                elif kind is int:
                    plain = -_INT_BOUND < value < _INT_BOUND
                elif kind is float:
                    plain = isfinite(value)
                else:
                    plain = kind is bool or value is None
                if not plain:
                    break
        if plain:
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


_SCALARS: Final = frozenset({str, int, float, bool, type(None)})
"""Field types whose strict Python validation of a JSON value equals strict JSON's."""


def _kinds(info: FieldInfo) -> set[type[Any]]:
    return {type(cast(object, m)) for m in info.metadata}


_BOUNDS_METADATA: Final = (
    *_kinds(FieldInfo.from_field(gt=0, ge=0, lt=1, le=1, multiple_of=1)),
    *_kinds(FieldInfo.from_field(min_length=0, max_length=1)),
    StringConstraints,
)
"""Field constraints that check a value the same way whichever way it arrived: the types
pydantic itself records for ``Field(gt=, ge=, lt=, le=, multiple_of=, min_length=,
max_length=)``, and ``StringConstraints``."""
_SAFE_CONFIG: Final = frozenset(
    {"title", "extra", "frozen", "populate_by_name", "loc_by_alias", "validate_by_alias"}
    | {"validate_by_name", "revalidate_instances", "hide_input_in_errors", "str_min_length"}
    | {"str_max_length", "cache_strings", "validate_default", "json_schema_extra"}
)
"""Model config keys that cannot tell Python input from JSON input."""
_INT_BOUND: Final = 2**63
"""Integers inside +-2**63 take the Python path; larger ones go through JSON text."""


def _flat_scalars(model: type[BaseModel]) -> bool:
    """Whether the model's fields are all plain JSON scalars (``str``, ``int``, ``float``,
    ``bool``, ``None``, optionally nullable or defaulted, with any ``Field`` bounds), with no
    validator of any kind and no config that could tell Python input from JSON input.

    For such a model and a plain payload of exactly-typed JSON scalars (as
    :meth:`InputDecoder.decode` checks it), pydantic's strict Python validation accepts what
    its strict JSON validation of ``to_json(payload)`` accepts, with the same values, and
    refuses the rest (the hypothesis test in tests/contract/test_decoding_paths.py compares
    the two). Other models always take the JSON round trip. Read from pydantic's documented
    model attributes (``model_fields``, ``model_config``, ``__pydantic_decorators__`` and the
    custom-init and post-init flags);
    anything not known to be safe answers ``False``.
    """
    if issubclass(model, RootModel) or model.__pydantic_custom_init__:
        return False
    if model.__pydantic_post_init__ is not None or not set(model.model_config) <= _SAFE_CONFIG:
        return False
    found = model.__pydantic_decorators__
    if found.validators or found.field_validators or found.root_validators:
        return False
    if found.model_validators:
        return False
    return all(_scalar_field(info) for info in model.model_fields.values())


def _scalar_field(info: FieldInfo) -> bool:
    if info.default_factory is not None or info.validate_default:
        return False
    kinds: tuple[Any, ...] = (info.annotation,)
    if get_origin(info.annotation) in (Union, UnionType):
        kinds = get_args(info.annotation)
    if not all(kind in _SCALARS for kind in kinds):
        return False
    for bound in info.metadata:
        if isinstance(bound, Strict):
            if not bound.strict:
                return False
        elif not isinstance(bound, _BOUNDS_METADATA) or getattr(bound, "strict", None) is False:
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
