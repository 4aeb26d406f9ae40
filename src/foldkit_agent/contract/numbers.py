"""Numbers restored along a JSON Schema: integral floats back to ints where it says ``integer``.

Some wires carry every JSON number as a double (A2A 1.x data parts are
``google.protobuf.Value``), so ``{"qty": 2}`` arrives as ``{"qty": 2.0}`` and the strict decoder
(:class:`~foldkit_agent.contract.schema.InputDecoder`, which coerces nothing) would refuse it.
:func:`integers_from_doubles` undoes exactly that loss, guided by the capability's exported
input schema, before decoding; and, guided by :func:`outcome_schema`, on the way out, so an
answer carries ``"qty": 1`` and not ``"qty": 1.0``.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any, cast

from ..app.message import Message
from .completion import Completion
from .declare import Capability
from .schema import JsonSchema, RecursiveSchemaError, UnexpressibleSchemaError, json_schema

__all__ = ["integers_from_doubles", "message_schema", "outcome_schema"]


def integers_from_doubles(value: Any, schema: Mapping[str, Any]) -> Any:
    """Turn integral floats back into ints wherever ``schema`` says ``integer``.

    A2A 1.x carries data parts as ``google.protobuf.Value``, where every number is a double:
    ``{"qty": 2}`` arrives as ``{"qty": 2.0}``. This walks the value along the schema
    (``properties``, ``additionalProperties``, ``items``, ``prefixItems``, ``anyOf``,
    ``allOf``) and converts only finite integral floats at integer positions. Nothing else is
    coerced: ``2.5`` stays ``2.5`` (and is refused by the decoder), a float where the schema
    says ``number`` stays a float, strings and booleans are untouched.

    Args:
        value: decoded JSON data (dicts, lists, str, float, bool, None).
        schema: the capability's input JSON Schema (compatibility profile).

    Returns:
        A new value of the same shape (the input is not modified).

    Protocol: A2A 1.0 ``Part.data`` is a ``google.protobuf.Value`` (JSON numbers are doubles).

    Example:
        >>> integers_from_doubles({"qty": 2.0, "price": 2.0},
        ...     {"type": "object", "properties": {"qty": {"type": "integer"},
        ...                                       "price": {"type": "number"}}})
        {'qty': 2, 'price': 2.0}
    """
    for part in _schemas(schema.get("allOf")):
        value = integers_from_doubles(value, part)
    branches = _schemas(schema.get("anyOf"))
    if branches:
        branch = _pick_branch(value, branches)
        return value if branch is None else integers_from_doubles(value, branch)
    types = _types(schema)
    if isinstance(value, float):
        integral = math.isfinite(value) and value.is_integer()
        return int(value) if integral and "integer" in types and "number" not in types else value
    if isinstance(value, dict):
        props = _schema_map(schema.get("properties"))
        extra = _schema(schema.get("additionalProperties"))
        out: dict[str, Any] = {}
        for key, item in cast(dict[str, Any], value).items():
            sub = props.get(key, extra)
            out[key] = item if sub is None else integers_from_doubles(item, sub)
        return out
    if isinstance(value, list):
        prefix = _schemas(schema.get("prefixItems"))
        rest = _schema(schema.get("items"))
        result: list[Any] = []
        for i, item in enumerate(cast(list[Any], value)):
            sub = prefix[i] if i < len(prefix) else rest
            result.append(item if sub is None else integers_from_doubles(item, sub))
        return result
    return value


def message_schema(message: type[Message]) -> JsonSchema:
    """The schema of ``message.encode()``: its fields plus ``"_tag"`` (a ``const``).

    A Message whose schema cannot be exported (it refers to itself) gets ``{}``, along which
    nothing is converted.

    Example:
        >>> message_schema(SetQuantity)["properties"]["qty"]
        {'type': 'integer'}
    """
    try:
        schema = json_schema(message)
    except (RecursiveSchemaError, UnexpressibleSchemaError):
        return {}
    props = schema.setdefault("properties", {})
    props["_tag"] = {"const": message.tag()}
    return schema


def outcome_schema(cap: Capability) -> JsonSchema:
    """The schema of the numbers in an outcome's data for ``cap`` (see ``Outcome.data``).

    ``"message"`` is the Message sent (``cap.message``); ``"result"``, with a Message
    completion, the success or failure Message that answered it. Only these carry
    application numbers; the rest of an outcome's data is the runtime's own.

    Example:
        >>> data = {"message": {"_tag": "SetQuantity", "qty": 1.0}, "status": "dispatched"}
        >>> integers_from_doubles(data, outcome_schema(cap))["message"]["qty"]
        1
    """
    props: dict[str, Any] = {"message": message_schema(cap.message)}
    completion = cap.completion
    if isinstance(completion, Completion):
        results = [completion.success] + (
            [completion.failure] if completion.failure is not None else []
        )
        branches = [message_schema(m) for m in results]
        props["result"] = branches[0] if len(branches) == 1 else {"anyOf": branches}
    return {"type": "object", "properties": props}


def _schema(value: Any) -> Mapping[str, Any] | None:
    return cast(Mapping[str, Any], value) if isinstance(value, Mapping) else None


def _schemas(value: Any) -> list[Mapping[str, Any]]:
    items = cast(list[Any], value) if isinstance(value, list) else []
    return [s for s in (_schema(i) for i in items) if s is not None]


def _schema_map(value: Any) -> dict[str, Mapping[str, Any]]:
    props = _schema(value) or {}
    return {k: s for k, s in ((k, _schema(v)) for k, v in props.items()) if s is not None}


def _types(schema: Mapping[str, Any]) -> set[str]:
    t: Any = schema.get("type")
    if isinstance(t, str):
        return {t}
    items = cast(list[Any], t) if isinstance(t, list) else []
    return {x for x in items if isinstance(x, str)}


def _pick_branch(value: Any, branches: Sequence[Mapping[str, Any]]) -> Mapping[str, Any] | None:
    """The first ``anyOf`` branch whose JSON type fits ``value`` (consts and keys pick objects)."""
    if isinstance(value, float):
        fits = [b for b in branches if _types(b) & {"integer", "number"}]
        if any("number" in _types(b) for b in fits):
            return None  # a number is acceptable as it is
        return fits[0] if fits else None
    if isinstance(value, dict):
        data = cast(dict[str, Any], value)
        objects = [b for b in branches if "object" in _types(b) or "properties" in b]
        for b in objects:
            props = _schema_map(b.get("properties"))
            consts_ok = all(
                key not in data or data[key] == sub["const"]
                for key, sub in props.items()
                if "const" in sub
            )
            if consts_ok and all(k in props for k in data):
                return b
        return objects[0] if objects else None
    if isinstance(value, list):
        arrays = [b for b in branches if "array" in _types(b) or "items" in b or "prefixItems" in b]
        return arrays[0] if arrays else None
    return None  # strings, booleans and null are never converted
