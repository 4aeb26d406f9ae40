"""What of a decision is recorded: the principal's projection, the redacted input, and text
that every sink can store.

The log keeps the Model never, the input only with ``include_input=True`` (with ``redact``
fields replaced at any depth), and the principal only through a ``principal=``
projection (DESIGN §4.11). Text that came off the wire is made storable where it stands: a
lone UTF-16 surrogate (valid in a JSON escape, not encodable as UTF-8) becomes U+FFFD, so no
sink can fail on an entry that carries one.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, cast

from .encode import no_surrogates

__all__ = ["REDACTED", "redact", "text"]

REDACTED = "[redacted]"
"""The value that replaces a redacted input field."""

_ATOMS: frozenset[type] = frozenset({int, float, bool, type(None)})


def text(value: Any) -> str:
    """``value`` as storable text (see the module docstring); a non-``str`` becomes its
    ``str`` (a host passing something else)."""
    if type(value) is str:
        return value if value.isascii() else no_surrogates(value)
    return str(value)


def _key_text(key: Any) -> Any:
    return text(key) if isinstance(key, str) else key


def redact(value: Any, fields: frozenset[str]) -> Any:
    """A copy of JSON-like ``value`` with every key in ``fields`` replaced, at any depth.

    Mappings are copied to dicts and sequences to lists; strings (keys too) holding a lone
    surrogate get U+FFFD in its place; other values are returned as is.

    Raises:
        RecursionError: nested deeper than the interpreter can walk (the log records
            ``"[unrecordable]"`` then).

    Example:
        >>> redact({"a": {"token": "x"}, "b": [{"token": "y"}]}, frozenset({"token"}))
        {'a': {'token': '[redacted]'}, 'b': [{'token': '[redacted]'}]}
    """
    kind = type(value)  # pyright: ignore[reportUnknownVariableType] - exact types first
    if kind in _ATOMS:
        return value
    if kind is str:
        return value if value.isascii() else no_surrogates(value)
    if isinstance(value, str):
        return text(value)
    if kind is dict or isinstance(value, Mapping):
        items = cast(Mapping[Any, Any], value)
        return {
            (_key_text(k) if type(k) is not str or not k.isascii() else k): (
                REDACTED if k in fields else redact(v, fields)
            )
            for k, v in items.items()
        }
    if isinstance(value, list | tuple):
        seq = cast(Iterable[Any], value)
        return [redact(v, fields) for v in seq]
    return value
