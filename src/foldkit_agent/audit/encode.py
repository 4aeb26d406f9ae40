"""How an audit entry is written down: strict JSON and text every sink can store.

Every sink (JSON Lines, SQLite, PostgreSQL) writes through :func:`json_text` and
:func:`storable_text`, so an entry is stored the same way everywhere and a batch never fails
on what an entry holds. The output is strict JSON (RFC 8259, as our own edge parses it): no
``NaN``/``Infinity`` tokens, no lone surrogates. What cannot be written as such is replaced,
where it stands, never by dropping the whole value:

=====================================  ==========================================
in the recorded value                  stored as
=====================================  ==========================================
``float('nan')``, ``inf``, ``-inf``    the strings ``"NaN"``, ``"Infinity"``, ``"-Infinity"``
                                       (pydantic's ``ser_json_inf_nan="strings"``)
an integer over 4,300 digits           ``"[unrecordable]"`` (Python's int-to-text limit)
a lone UTF-16 surrogate, or NUL        U+FFFD (PostgreSQL refuses NUL in text and JSON)
a tuple or other sequence              a JSON array
a non-string key                       its JSON text (``1`` -> ``"1"``), else ``str(key)``
any other object                       ``str(obj)``
nesting too deep to walk               ``"[unrecordable]"`` for the whole value
=====================================  ==========================================

The in-memory log keeps what was recorded; only what is written down is replaced.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from typing import Any, cast

__all__ = ["UNRECORDABLE", "json_text", "no_surrogates", "storable", "storable_text"]

UNRECORDABLE = "[unrecordable]"
"""Recorded in place of a value that could not be copied or written down."""

_NON_FINITE = {"nan": "NaN", "inf": "Infinity", "-inf": "-Infinity"}
_REPLACEMENT = "\ufffd"


def storable_text(value: str) -> str:
    """``value`` with each lone surrogate and NUL replaced by U+FFFD (any other text as is).

    Example:
        >>> storable_text("a\\x00b\\ud800")
        'a\\ufffdb\\ufffd'
    """
    if "\x00" in value:
        value = value.replace("\x00", _REPLACEMENT)
    return value if value.isascii() else no_surrogates(value)


def no_surrogates(value: str) -> str:
    """``value`` with each lone UTF-16 surrogate (valid in a JSON escape, not encodable as
    UTF-8) replaced by U+FFFD."""
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        return value.encode("utf-16", "surrogatepass").decode("utf-16", "replace")
    return value


def storable(value: Any) -> Any:
    """A copy of ``value`` that :func:`json.dumps` writes as strict JSON (see the table above).

    Raises:
        RecursionError: nested deeper than the interpreter can walk (:func:`json_text`
            records that as ``"[unrecordable]"``).

    Example:
        >>> storable({"x": float("inf"), (1, 2): [float("nan")]})
        {'x': 'Infinity', '(1, 2)': ['NaN']}
    """
    if value is None or value is True or value is False:
        return value
    if isinstance(value, str):
        return storable_text(value)
    if isinstance(value, int):
        try:
            str(value)  # the only way to know it fits the int-to-text limit
        except ValueError:
            return UNRECORDABLE
        return int(value)
    if isinstance(value, float):
        return value if math.isfinite(value) else _NON_FINITE[repr(value)]
    if isinstance(value, Mapping):
        items = cast(Mapping[Any, Any], value)
        return {_key(k): storable(v) for k, v in items.items()}
    if isinstance(value, list | tuple | set | frozenset):
        seq = cast(list[Any], value)
        return [storable(v) for v in seq]
    return storable_text(str(value))


def _key(key: Any) -> str:
    if isinstance(key, str):
        return storable_text(key)
    if key is None or isinstance(key, bool | int | float):
        stored = storable(key)
        return stored if isinstance(stored, str) else json.dumps(stored)
    return storable_text(str(key))


def json_text(value: Any) -> str | None:
    """``value`` as strict JSON text (keys sorted), or ``None`` for ``None``.

    Plain JSON data takes one ``json.dumps``; anything else (see the module table) is made
    :func:`storable` first. Never raises.

    Example:
        >>> json_text({"n": float("-inf")})
        '{"n": "-Infinity"}'
    """
    if value is None:
        return None
    try:
        text = json.dumps(value, sort_keys=True, ensure_ascii=False, allow_nan=False)
        if "\\u0000" not in text:
            text.encode("utf-8")  # raises on a lone surrogate
            return text
    except (TypeError, ValueError, RecursionError):  # UnicodeEncodeError is a ValueError
        pass
    try:
        return json.dumps(storable(value), sort_keys=True, ensure_ascii=False, allow_nan=False)
    except (TypeError, ValueError, RecursionError):
        return json.dumps(UNRECORDABLE)
