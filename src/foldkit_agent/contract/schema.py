"""JSON Schema export in the compatibility profile, the advertised half of one promise: *the
schema advertised is the schema enforced* (the enforcing half is :mod:`.decode`).

:func:`json_schema` derives a JSON Schema (2020-12) from a pydantic model and shapes it so
every MCP, WebMCP, A2A and Agent Native client accepts it:

* ``type: object`` at the root and ``additionalProperties: false`` on every object with
  declared properties;
* no ``$ref``/``$defs``: definitions are inlined (a self-referencing type is refused);
* ``T | None`` as ``anyOf`` with ``{"type": "null"}``, never a type array;
* unions as ``anyOf`` (``oneOf`` is rewritten, the OpenAPI ``discriminator`` dropped; the
  tag stays as a ``const`` on each branch);
* descriptions from ``Field(description=...)``; pydantic's generated ``title`` keys dropped.
"""

from __future__ import annotations

import copy
import weakref
from collections.abc import Mapping
from typing import Any, cast

from pydantic import BaseModel, TypeAdapter

from ..app.projection import Projection

__all__ = [
    "JsonSchema",
    "RecursiveSchemaError",
    "UnexpressibleSchemaError",
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
