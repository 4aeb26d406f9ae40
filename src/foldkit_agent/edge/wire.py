"""Guards for what arrives off the wire: strict JSON, bounded bodies, allowed hosts.

Every HTTP adapter reads request bodies through these before a protocol SDK sees them, so a
hostile body is refused the same way everywhere and never reaches a capability:

* :func:`loads_strict` parses JSON text the strict way: UTF-8 only, no duplicate object keys
  (parsers disagree on which one wins), no ``NaN``/``Infinity`` literals and no number that
  overflows to infinity (``1e400``), no lone UTF-16 surrogates (``"\\ud800"`` cannot be
  stored or re-encoded as UTF-8), at most :data:`DEFAULT_MAX_DEPTH` levels of nesting and at
  most :data:`DEFAULT_MAX_ITEMS` values in one document.
* :class:`JsonBodyGuard` is ASGI middleware applying it to ``POST`` bodies, with a byte limit
  answered ``413`` and, optionally, a JSON ``Content-Type`` (``415``) and ``Host``/``Origin``
  allow-lists (``421``/``403``, against DNS rebinding and cross-site pages).

Example::

    app = Starlette(routes=..., middleware=[
        Middleware(JsonBodyGuard, max_body=1 << 20, jsonrpc_paths={"/rpc"}),
    ])
"""

from __future__ import annotations

import json
import math
from collections import deque
from collections.abc import Callable, Iterable
from typing import Any, Final, cast

from starlette.datastructures import Headers
from starlette.responses import JSONResponse, Response
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from .hosts import LOOPBACK_HOSTS

__all__ = [
    "DEFAULT_MAX_DEPTH",
    "DEFAULT_MAX_ITEMS",
    "LOOPBACK_HOSTS",
    "JsonBodyGuard",
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


def _check(value: Any, max_depth: int, max_items: int) -> None:
    """Depth, count and string checks, iteratively (a deep value cannot exhaust the stack).

    Values are counted as their containers are opened, so an array of a million numbers is
    refused after one ``len`` rather than after visiting each number.
    """
    stack: list[tuple[Any, int]] = [(value, 1)]
    count = 1
    while stack:
        node, depth = stack.pop()
        if isinstance(node, str):
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
                for key, item in cast(dict[str, Any], node).items():
                    _utf8(key)
                    stack.append((item, depth + 1))
            else:
                stack.extend((item, depth + 1) for item in cast(list[Any], node))


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
    else:
        text = data
    try:
        value = json.loads(
            text,
            object_pairs_hook=_no_duplicates,
            parse_constant=_no_constants,
            parse_float=_finite,
            parse_int=_bounded_int,
        )
    except WireError:
        raise
    except RecursionError:
        raise _too_deep(max_depth) from None
    except ValueError:
        raise WireError(400, "malformed", _NOT_JSON) from None
    _check(value, max_depth, max_items)
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


def _host_name(value: str) -> str:
    value = value.strip().lower()
    if value.startswith("["):
        end = value.find("]")
        return value[1:end] if end > 0 else value
    return value.rsplit(":", 1)[0] if value.count(":") == 1 else value


def _origin_host(origin: str) -> str | None:
    scheme, sep, rest = origin.strip().lower().partition("://")
    if not sep or scheme not in ("http", "https"):
        return None
    return _host_name(rest.split("/", 1)[0])


Render = Callable[[Scope, WireError], Response]


def _jsonrpc_error(_scope: Scope, err: WireError) -> Response:
    code = jsonrpc_code(err)
    body = {"jsonrpc": "2.0", "id": None, "error": {"code": code, "message": err.text}}
    return JSONResponse(body, status_code=err.status)


def _plain_error(_scope: Scope, err: WireError) -> Response:
    body = {"error": {"code": err.status, "status": err.code, "message": err.text}}
    return JSONResponse(body, status_code=err.status)


class JsonBodyGuard:
    """ASGI middleware: refuse hostile requests before the application reads them.

    For every HTTP request: when ``allowed_hosts`` is given, the ``Host`` must name one of them
    (any port; else 421) and an ``Origin``, when sent, must too (else 403). For ``POST``: the
    body is read up to ``max_body`` bytes (a larger declared or streamed body is 413), must
    carry a JSON ``Content-Type`` when ``require_json`` (else 415), and must pass
    :func:`loads_strict` (else 400). The body is then replayed to the application unchanged.

    Refusals are JSON: a JSON-RPC error object (``id: null``; ``-32700`` for a body that does
    not parse, ``-32600`` otherwise) for paths in ``jsonrpc_paths`` (or every path when it is
    ``None``), else ``{"error": {"code", "status", "message"}}``.

    Args:
        app: the ASGI application to protect.
        max_body: the largest accepted body, in bytes.
        jsonrpc_paths: paths answered with JSON-RPC errors; ``None`` means all.
        require_json: refuse ``POST`` bodies without a JSON content type.
        allowed_hosts: accepted host names (``"*"`` accepts any); ``None`` skips the check.
        max_depth: deepest nesting accepted.
    """

    def __init__(
        self,
        app: ASGIApp,
        *,
        max_body: int,
        jsonrpc_paths: Iterable[str] | None = None,
        require_json: bool = False,
        allowed_hosts: Iterable[str] | None = None,
        max_depth: int = DEFAULT_MAX_DEPTH,
    ) -> None:
        if max_body < 2:
            raise ValueError("max_body must be at least 2 bytes")
        self.app = app
        self.max_body = max_body
        self.jsonrpc_paths = None if jsonrpc_paths is None else frozenset(jsonrpc_paths)
        self.require_json = require_json
        hosts = None if allowed_hosts is None else {h.lower().strip("[]") for h in allowed_hosts}
        self.allowed_hosts = None if hosts is None or "*" in hosts else frozenset(hosts)
        self.max_depth = max_depth

    def _render(self, scope: Scope, err: WireError) -> Response:
        path = scope.get("path", "")
        if self.jsonrpc_paths is None or path in self.jsonrpc_paths:
            return _jsonrpc_error(scope, err)
        return _plain_error(scope, err)

    def _refusal(self, scope: Scope, headers: Headers) -> WireError | None:
        if self.allowed_hosts is not None:
            host = headers.get("host")
            if host is not None and _host_name(host) not in self.allowed_hosts:
                return WireError(421, "host", "This server does not answer for that host name.")
            origin = headers.get("origin")
            if origin is not None and _origin_host(origin) not in self.allowed_hosts:
                return WireError(403, "origin", "Calls from that origin are not accepted.")
        if scope.get("method") != "POST":
            return None
        if self.require_json and not is_json_content_type(headers.get("content-type")):
            return WireError(
                415, "content-type", "Send a JSON body (Content-Type: application/json)."
            )
        declared = headers.get("content-length")
        if declared is not None:
            try:
                size = int(declared)
            except ValueError:
                return WireError(400, "malformed", "The Content-Length is not a number.")
            if size > self.max_body:
                return self._too_large()
        return None

    def _too_large(self) -> WireError:
        return WireError(
            413, "too-large", f"The body is larger than the {self.max_body}-byte limit."
        )

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = Headers(scope=scope)
        refused = self._refusal(scope, headers)
        if refused is not None:
            await self._render(scope, refused)(scope, receive, send)
            return
        if scope.get("method") != "POST":
            await self.app(scope, receive, send)
            return
        body = bytearray()
        trailing: Message | None = None
        while True:
            message = await receive()
            if message["type"] != "http.request":
                trailing = message  # the client went away before the body ended
                break
            body += message.get("body", b"")
            if len(body) > self.max_body:
                await self._render(scope, self._too_large())(scope, receive, send)
                return
            if not message.get("more_body", False):
                break
        if trailing is None:
            jsonrpc = self.jsonrpc_paths is None or scope.get("path", "") in self.jsonrpc_paths
            try:
                if not body.strip():
                    raise WireError(
                        400, "malformed", _NOT_JSONRPC if jsonrpc else "The body is empty."
                    )
                value = loads_strict(bytes(body), max_depth=self.max_depth)
                problem = jsonrpc_problem(value) if jsonrpc else None
                if problem is not None:
                    raise problem
            except WireError as err:
                await self._render(scope, err)(scope, receive, send)
                return
        replay: deque[Message] = deque(
            [{"type": "http.request", "body": bytes(body), "more_body": False}]
        )
        if trailing is not None:
            replay.append(trailing)

        async def replayed() -> Message:
            if replay:
                return replay.popleft()
            return await receive()

        await self.app(scope, replayed, send)
