"""What an input type accepts that its JSON Schema cannot say, read from pydantic's core schema.

Pydantic offers no other walk of a model's validators and string normalisers at every depth
(nested models, list items, union branches, definitions): they are in the core schema a model
carries (``__pydantic_core_schema__``, a documented attribute, shaped by the public
:mod:`pydantic_core.core_schema` types). Only this module reads it, and
``tests/contract/test_pydantic.py`` fails when a pydantic upgrade changes the shapes read here
(node ``type`` names, ``definitions``/``definition-ref``, ``config``, ``fields``/``choices``,
a validator's ``function``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, cast

from pydantic import BaseModel

from .schema import UnexpressibleSchemaError

__all__ = ["check_expressible"]

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
