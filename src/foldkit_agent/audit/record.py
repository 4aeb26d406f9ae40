"""What of a decision is recorded: the principal's projection, the redacted input cut to a
size, and text that every sink can store.

The log keeps the Model never, the input only with ``include_input=True`` (with ``redact``
fields replaced at any depth, and cut at ``max_input_bytes``), and the principal only through
a ``principal=`` projection (DESIGN §4.11). Text that came off the wire is made storable where
it stands: a lone UTF-16 surrogate (valid in a JSON escape, not encodable as UTF-8) becomes
U+FFFD, so no sink can fail on an entry that carries one.

**How an input is cut.** Its size is counted as its compact JSON would be, in UTF-8 bytes,
without escapes: each string and key its bytes plus 2, an integer its digits and sign, 24 for
a float, ``true``, ``false`` or ``null``, 2 for each object or array and 1 or 2 for each
item's separators. The walk goes in order and stops once the budget is spent, so cutting a
3.9 MB input visits no field or item past its first ``max_input_bytes`` (a string past it is
only measured). What did not fit is replaced where it stands, never silently:

===================================  ====================================================
past the budget                      recorded as
===================================  ====================================================
a string                             its first bytes that fit, then ``…[cut: N bytes]``
                                     (``N`` the string's whole size in UTF-8 bytes)
the rest of an object's fields       one more field, ``"[cut]": "N more fields"``
the rest of an array's items         one more item, ``"[cut: N more items]"``
===================================  ====================================================

Example:
    >>> redact({"title": "Milk", "blob": "x" * 100}, frozenset(), limit=30)
    {'title': 'Milk', 'blob': 'xxx…[cut: 100 bytes]'}
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final, cast

from .encode import no_surrogates

__all__ = [
    "CUT",
    "DEFAULT_MAX_INPUT_BYTES",
    "MAX_TEXT",
    "REDACTED",
    "recorded",
    "redact",
    "short_text",
    "text",
]

REDACTED = "[redacted]"
"""The value that replaces a redacted input field."""

CUT: Final = "[cut]"
"""The key an object's cut-off fields are counted under (see the module docstring)."""

DEFAULT_MAX_INPUT_BYTES: Final = 16 * 1024
"""The most bytes of one recorded input, by default (16 KiB; ``audit_log(max_input_bytes=)``)."""

MAX_TEXT: Final = 1024
"""The most characters of a recorded capability name, invocation id or transport."""

_ATOMS: frozenset[type] = frozenset({int, float, bool, type(None)})
_ATOM_BYTES = 24  # what a float (its longest repr), true, false or null counts
_UNLIMITED = 1 << 62


def text(value: Any) -> str:
    """``value`` as storable text (see the module docstring); a non-``str`` becomes its
    ``str`` (a host passing something else)."""
    if type(value) is str:
        return value if value.isascii() else no_surrogates(value)
    return str(value)


def short_text(value: Any) -> str:
    """:func:`text` of a name or id the log records (capability, invocation id, transport),
    its first :data:`MAX_TEXT` characters then ``…[cut: N characters]`` when it is longer, so
    a caller's 4 MB tool name costs the ring no more than a short one."""
    whole = text(value)
    if len(whole) <= MAX_TEXT:
        return whole
    return f"{whole[:MAX_TEXT]}…[cut: {len(whole)} characters]"


def redact(value: Any, fields: frozenset[str], *, limit: int | None = None) -> Any:
    """A copy of JSON-like ``value`` with every key in ``fields`` replaced, at any depth, cut
    to ``limit`` bytes (uncut when ``None``) as the module docstring says.

    Mappings are copied to dicts and sequences to lists; strings (keys too) holding a lone
    surrogate get U+FFFD in its place; other values are returned as is.

    Raises:
        RecursionError: nested deeper than the interpreter can walk (the log records
            ``"[unrecordable]"`` then).

    Example:
        >>> redact({"a": {"token": "x"}, "b": [{"token": "y"}]}, frozenset({"token"}))
        {'a': {'token': '[redacted]'}, 'b': [{'token': '[redacted]'}]}
    """
    return _Cut(fields, _UNLIMITED if limit is None else limit).copy(value)


def recorded(value: Any, fields: frozenset[str], limit: int | None) -> tuple[Any, int]:
    """:func:`redact` of ``value`` cut to ``limit`` bytes (uncut when ``None``), and the bytes
    the copy counts (what the log's ``max_bytes`` adds up).

    Raises:
        RecursionError: as :func:`redact`.
    """
    start = _UNLIMITED if limit is None else limit
    cut = _Cut(fields, start)
    kept = cut.copy(value)
    return kept, start - cut.left


class _Cut:
    """One walk of a value: what is left of its budget, and the fields to redact."""

    __slots__ = ("fields", "left")

    def __init__(self, fields: frozenset[str], limit: int) -> None:
        self.fields = fields
        self.left = limit

    def copy(self, value: Any) -> Any:
        kind = type(value)  # pyright: ignore[reportUnknownVariableType] - exact types first
        if kind is int:
            self.left -= value.bit_length() // 3 + 2  # at least its digits and sign
            return value
        if kind in _ATOMS:
            self.left -= _ATOM_BYTES
            return value
        if isinstance(value, str):
            return self.string(value)
        if kind is dict or isinstance(value, Mapping):
            return self.mapping(cast(Mapping[Any, Any], value))
        if isinstance(value, list | tuple):
            return self.sequence(cast(list[Any], value))
        self.left -= _ATOM_BYTES
        return value

    def string(self, value: str) -> str:
        whole = text(value)
        plain = whole.isascii()
        size = len(whole) if plain else len(whole.encode("utf-8"))
        if size + 2 <= self.left:
            self.left -= size + 2
            return whole
        room = max(0, self.left - 2)
        head = whole[:room]
        if not plain:
            head = head.encode("utf-8")[:room].decode("utf-8", "ignore")
        self.left = 0
        return f"{head}…[cut: {size} bytes]"

    def mapping(self, items: Mapping[Any, Any]) -> dict[Any, Any]:
        self.left -= 2
        copied: dict[Any, Any] = {}
        for at, (key, value) in enumerate(items.items()):
            if self.left <= 0:
                copied[CUT] = f"{len(items) - at} more fields"
                break
            self.left -= 2  # the colon and the comma
            name = self.string(key) if isinstance(key, str) else key
            copied[name] = REDACTED if key in self.fields else self.copy(value)
        return copied

    def sequence(self, items: list[Any] | tuple[Any, ...]) -> list[Any]:
        self.left -= 2
        copied: list[Any] = []
        for at, value in enumerate(items):
            if self.left <= 0:
                copied.append(f"[cut: {len(items) - at} more items]")
                break
            self.left -= 1  # the comma
            copied.append(self.copy(value))
        return copied
