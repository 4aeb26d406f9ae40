"""The one strict JSON parser every route uses, and the JSON-RPC shape checks.

The edge guard (:mod:`.guard`) parses every request body with it before a protocol SDK sees
the body, and MCP's stdio transport parses every line with it, so a hostile body is refused
the same way everywhere and never reaches a capability:

* :func:`loads_strict` parses JSON text the strict way: UTF-8 only, no duplicate object keys
  (parsers disagree on which one wins), no ``NaN``/``Infinity`` literals and no number that
  overflows to infinity (``1e400``), no lone UTF-16 surrogates (``"\\ud800"`` cannot be
  stored or re-encoded as UTF-8), at most :data:`DEFAULT_MAX_DEPTH` levels of nesting and at
  most :data:`DEFAULT_MAX_ITEMS` values in one document.
* :func:`jsonrpc_problem` says why a parsed value is not one JSON-RPC 2.0 message.

Example:
    >>> loads_strict(b'{"title": 1e400}')
    Traceback (most recent call last):
    WireError: The body holds a number too large to represent (it overflows to infinity).
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterable
from typing import Any, Final, cast

__all__ = [
    "DEFAULT_MAX_DEPTH",
    "DEFAULT_MAX_ITEMS",
    "MAX_DIGITS",
    "WireError",
    "is_json_content_type",
    "jsonrpc_code",
    "jsonrpc_problem",
    "loads_strict",
]

DEFAULT_MAX_DEPTH: Final = 100
"""Deepest nesting (objects and arrays) accepted in a request body."""

DEFAULT_MAX_ITEMS: Final = 10_000
"""Most JSON values (objects, arrays, strings, numbers, booleans, nulls; keys not counted)
accepted in one body. ``{"a": [1, 2]}`` holds four."""


class WireError(Exception):
    """A request refused before it was understood (by the edge guard or the strict parser).

    Attributes:
        status: the HTTP status to answer (400, 401, 403, 413, 415, 421, ...).
        code: a short machine-readable reason (``"malformed"``, ``"too-large"``, ``"host"``,
            ``"origin"``, ``"unauthenticated"``, ...).
        text: one sentence for the calling agent, with no parser internals.
        headers: extra response headers (``WWW-Authenticate`` on a 401), or ``None``.
    """

    def __init__(
        self, status: int, code: str, text: str, headers: dict[str, str] | None = None
    ) -> None:
        super().__init__(text)
        self.status = status
        self.code = code
        self.text = text
        self.headers = headers


_NOT_JSON = "The body is not valid JSON."
_NOT_JSONRPC = (
    'Send one JSON-RPC 2.0 request object: {"jsonrpc": "2.0", "id": 1, "method": "...", '
    '"params": {...}}.'
)
MAX_DIGITS: Final = 4000
"""Longest run of digits accepted in one JSON number (Python refuses past 4,300)."""


def _no_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out = dict(pairs)
    if len(out) != len(pairs):
        raise WireError(400, "malformed", "The body repeats a key inside one JSON object.")
    return out


def _bounded_int(digits: str) -> int:
    if len(digits) > MAX_DIGITS:
        raise WireError(
            400, "malformed", f"The body holds a number longer than {MAX_DIGITS:,} digits."
        )
    return int(digits)


def _no_constants(name: str) -> Any:
    raise WireError(400, "malformed", f"The body holds {name}, which is not a JSON number.")


def _finite(digits: str) -> float:
    value = float(digits)
    if math.isinf(value):
        raise WireError(
            400,
            "malformed",
            "The body holds a number too large to represent (it overflows to infinity).",
        )
    return value


_SURROGATE_ESCAPE: Final = re.compile(r"\\u[dD][89a-fA-F]")
"""Where a lone surrogate can come from in JSON decoded from UTF-8: a ``\\uD800``-``\\uDFFF``
escape (a false match, such as an escaped backslash before ``ud800``, only costs the check)."""


_FAST_NESTING: Final = 100
"""Most brackets in a text parsed without the integer hook: far below the recursion limit, so
C json's recursion check answers the same with and without a Python hook on the stack."""


def _check(value: Any, max_depth: int, max_items: int, texts: bool = True) -> None:
    """Depth, count and string checks, iteratively (a deep value cannot exhaust the stack).

    Values are counted as their containers are opened, so an array of a million numbers is
    refused after one ``len`` rather than after visiting each number. With ``texts`` false
    (the document cannot hold a lone surrogate) strings and keys are not encoded one by one.
    """
    stack: list[tuple[Any, int]] = [(value, 1)]
    count = 1
    while stack:
        node, depth = stack.pop()
        if isinstance(node, str):
            if texts:
                _utf8(node)
        elif isinstance(node, dict | list):
            if depth > max_depth:
                raise _too_deep(max_depth)
            count += len(cast(dict[str, Any] | list[Any], node))
            if count > max_items:
                raise WireError(
                    400,
                    "malformed",
                    f"The JSON body holds more than {max_items:,} values; send less at once.",
                )
            if isinstance(node, dict):
                mapping = cast(dict[str, Any], node)
                if texts:
                    for key in mapping:
                        _utf8(key)
                items: Iterable[Any] = mapping.values()
            else:
                items = cast(list[Any], node)
            for item in items:  # only containers and (when checked) strings need a visit
                if isinstance(item, dict | list) or (texts and isinstance(item, str)):
                    stack.append((cast(Any, item), depth + 1))


def _utf8(text: str) -> None:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        raise WireError(
            400,
            "malformed",
            "The JSON body holds a lone UTF-16 surrogate escape, which is not text.",
        ) from None


def _too_deep(max_depth: int) -> WireError:
    return WireError(
        400, "malformed", f"The JSON body is nested more than {max_depth} levels deep."
    )


def loads_strict(
    data: bytes | str,
    *,
    max_depth: int = DEFAULT_MAX_DEPTH,
    max_items: int = DEFAULT_MAX_ITEMS,
) -> Any:
    """Parse one JSON document strictly: the one parser every route uses.

    Args:
        data: the body (UTF-8 bytes) or its text.
        max_depth: deepest nesting of objects and arrays accepted.
        max_items: most values accepted in the document (see :data:`DEFAULT_MAX_ITEMS`).

    Returns:
        The parsed value (dicts, lists, str, int, float, bool, None); every float is finite.

    Raises:
        WireError: status 400 when the body is not UTF-8, not JSON, repeats a key in one
            object, holds ``NaN``/``Infinity`` or a number that overflows to infinity
            (``1e400``), an integer longer than :data:`MAX_DIGITS` digits, a lone surrogate,
            nests too deeply or holds too many values. The text never quotes the parser.

    Example:
        >>> loads_strict(b'{"a": 1, "a": 2}')
        Traceback (most recent call last):
        WireError: The body repeats a key inside one JSON object.
    """
    if isinstance(data, bytes | bytearray):
        try:
            text = bytes(data).decode("utf-8")
        except UnicodeDecodeError:
            raise WireError(400, "malformed", "The body is not UTF-8 encoded JSON.") from None
        decoded = True  # UTF-8 cannot encode a surrogate: only an escape can make one
    else:
        text = data
        decoded = text.isascii()
    size = len(text)
    containers = text.count("[") + text.count("{")  # at least the deepest nesting
    # The common path: a text no longer than MAX_DIGITS cannot hold an integer the hook would
    # refuse, so C json parses its integers itself (no Python call per integer); a text with
    # few brackets cannot nest deep enough to meet the recursion limit with or without a hook
    # on the stack, so both paths answer the same. Floats keep their hook (it runs per float).
    fast = size <= MAX_DIGITS and containers <= _FAST_NESTING
    try:
        value = json.loads(
            text,
            object_pairs_hook=_no_duplicates,
            parse_constant=_no_constants,
            parse_float=_finite,
            parse_int=int if fast else _bounded_int,
        )
    except WireError:
        raise
    except RecursionError:
        raise _too_deep(max_depth) from None
    except ValueError:
        raise WireError(400, "malformed", _NOT_JSON) from None
    texts = not decoded or _SURROGATE_ESCAPE.search(text) is not None
    # Every value takes at least one character and every level of nesting one bracket, so a
    # short, shallow text cannot break either bound and needs no walk unless a string could
    # hold a lone surrogate.
    if texts or size > max_items or containers > max_depth:
        _check(value, max_depth, max_items, texts)
    return value


def jsonrpc_problem(value: Any) -> WireError | None:
    """Why ``value`` is not one JSON-RPC 2.0 message, or ``None`` when it is one.

    One object with ``"jsonrpc": "2.0"`` and either a string ``method`` (a request or a
    notification) or a ``result``/``error`` (a response to the server); an ``id``, when
    present, is a string or an integer; ``params``, when present, an object (MCP and A2A both
    take named params). Batches are not accepted (MCP removed them; A2A never had them). The
    answer is ``-32600`` (invalid request) or ``-32602`` (invalid params), in our words.
    """
    if not isinstance(value, dict):
        return WireError(400, "invalid-request", _NOT_JSONRPC)
    message = cast(dict[str, Any], value)
    if message.get("jsonrpc") != "2.0":
        return WireError(400, "invalid-request", _NOT_JSONRPC)
    has_method = isinstance(message.get("method"), str)
    if not has_method and "result" not in message and "error" not in message:
        return WireError(400, "invalid-request", _NOT_JSONRPC)
    if "id" in message:
        ident = message["id"]
        if isinstance(ident, bool) or not isinstance(ident, str | int):
            return WireError(
                400, "invalid-request", "A JSON-RPC id must be a string or an integer."
            )
    if "params" in message and not isinstance(message["params"], dict):
        return WireError(400, "invalid-params", "The request's params must be a JSON object.")
    return None


def jsonrpc_code(err: WireError) -> int:
    """The JSON-RPC error code for a refusal: parse error, invalid params or invalid request."""
    return {"malformed": -32700, "invalid-params": -32602}.get(err.code, -32600)


def is_json_content_type(content_type: str | None) -> bool:
    """``application/json`` or ``application/*+json`` (parameters such as charset allowed)."""
    if not content_type:
        return False
    mime = content_type.split(";", 1)[0].strip().lower()
    return mime == "application/json" or (
        mime.startswith("application/") and mime.endswith("+json")
    )
