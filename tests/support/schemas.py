"""A reference JSON Schema validator that reads a schema the way our wire does.

Two deliberate readings, both documented in DESIGN §4.4 and §4.13:

* an ``integer`` is a JSON number written without a fraction (``5``), never ``5.0``: the
  decoder refuses floats for integer fields (no lax coercion), so the reference does too;
* ``pattern`` follows ECMA-262, as JSON Schema specifies: ``$`` matches only at the very end
  (Python's ``re`` also matches before a final newline).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any

import jsonschema
from hypothesis import strategies as st
from hypothesis_jsonschema import from_schema
from jsonschema import Draft202012Validator


def ecma_pattern(pattern: str) -> str:
    """``pattern`` with every end anchor ``$`` (outside a class, unescaped) as ``\\Z``."""
    out: list[str] = []
    escaped = in_class = False
    for ch in pattern:
        if escaped:
            out.append(ch)
            escaped = False
        elif ch == "\\":
            out.append(ch)
            escaped = True
        elif in_class:
            out.append(ch)
            in_class = ch != "]"
        elif ch == "[":
            out.append(ch)
            in_class = True
        elif ch == "$":
            out.append(r"\Z")
        else:
            out.append(ch)
    return "".join(out)


def _pattern(
    validator: Any, pattern: str, instance: Any, schema: dict[str, Any]
) -> Iterator[jsonschema.ValidationError]:
    if isinstance(instance, str) and not re.search(ecma_pattern(pattern), instance):
        yield jsonschema.ValidationError(f"{instance!r} does not match {pattern!r}")


WireValidator = jsonschema.validators.extend(
    Draft202012Validator,
    validators={"pattern": _pattern},
    type_checker=Draft202012Validator.TYPE_CHECKER.redefine(
        "integer", lambda _checker, value: isinstance(value, int) and not isinstance(value, bool)
    ),
)


def wire_validator(schema: dict[str, Any]) -> Any:
    """A validator for ``schema`` as the wire reads it, checking formats (dates, UUIDs...)."""
    return WireValidator(schema, format_checker=Draft202012Validator.FORMAT_CHECKER)


def inputs_of(schema: dict[str, Any]) -> st.SearchStrategy[Any]:
    """Values valid against one of our exported (compatibility-profile) schemas.

    Leaves come from hypothesis-jsonschema's ``from_schema``. Objects and arrays are drawn
    here: hypothesis-jsonschema 0.23.1 draws objects through a Hypothesis internal
    (``many.more()``) that Hypothesis 6.170 no longer has, and our profile's objects are simple
    (declared ``properties``, ``required``, ``additionalProperties: false`` or a value schema).
    """
    if "anyOf" in schema:
        return st.one_of([inputs_of(branch) for branch in schema["anyOf"]])
    kind = schema.get("type")
    if kind == "object":
        props: dict[str, Any] = schema.get("properties", {})
        required = set(schema.get("required", []))
        extra = schema.get("additionalProperties", False)
        if props or extra is False:
            return st.fixed_dictionaries(
                {k: inputs_of(v) for k, v in props.items() if k in required},
                optional={k: inputs_of(v) for k, v in props.items() if k not in required},
            )
        return st.dictionaries(st.text(max_size=8), inputs_of(extra), max_size=4)
    if kind == "array" and "prefixItems" not in schema:
        items = schema.get("items", {})
        return st.lists(
            inputs_of(items) if items else from_schema({}),
            min_size=schema.get("minItems", 0),
            max_size=schema.get("maxItems", 5),
            unique_by=(lambda v: json.dumps(v, sort_keys=True))
            if schema.get("uniqueItems")
            else None,
        )
    return from_schema(schema, custom_formats=_FORMATS)


# Formats pydantic exports that hypothesis-jsonschema does not draw by itself.
_FORMATS: dict[str, st.SearchStrategy[str]] = {"uuid": st.uuids().map(str)}
