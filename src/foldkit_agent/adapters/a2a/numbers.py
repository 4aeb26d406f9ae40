"""Integers answered as integers: the A2A wire's doubles turned back where the schema says so.

A2A 1.x data parts are ``google.protobuf.Value``, where every number is a double, and the
SDK writes a double as ``1.0``: a result artifact of ``{"qty": 1}`` would reach the caller as
``{"qty": 1.0}``. :class:`IntegerAnswers` rewrites each answer of the A2A routes (JSON bodies
and server-sent events) so that, in every data part holding one of our outcomes (it names
its ``"capability"``), an integral number at a position the capability's schema says is an
integer is written as an integer (:func:`~foldkit_agent.contract.numbers.outcome_schema`,
:func:`~foldkit_agent.contract.numbers.integers_from_doubles`). A ``number`` field keeps its
``2.0``; nothing outside those data parts is touched.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any, cast

from starlette.types import ASGIApp

from ...contract.numbers import integers_from_doubles
from ...edge.wire import is_json_content_type
from .answers import AnswerRewriter, Hold

__all__ = ["IntegerAnswers", "restore_integers"]

SchemaOf = Callable[[str], "dict[str, Any] | None"]
"""``(capability name) -> outcome schema``, ``None`` for a name this server never ran."""

_MARK = b'"capability"'


def restore_integers(doc: Any, schema_of: SchemaOf) -> bool:
    """Rewrite, in place, every outcome data part in ``doc`` along its capability's schema.

    A data part is ``{"data": {...}}`` inside a ``"parts"`` list (a message or an artifact,
    at any depth: a task's status and artifacts, a stream's events). Returns whether
    anything was found to rewrite.
    """
    found = False
    stack: list[Any] = [doc]
    while stack:
        node = stack.pop()
        if isinstance(node, list):
            stack.extend(cast(list[Any], node))
            continue
        if not isinstance(node, dict):
            continue
        entry = cast(dict[str, Any], node)
        data = entry.get("data")
        if isinstance(data, dict):
            name = cast(dict[str, Any], data).get("capability")
            schema = schema_of(name) if isinstance(name, str) else None
            if schema is not None:
                entry["data"] = integers_from_doubles(data, schema)
                found = True
                continue
        stack.extend(entry.values())
    return found


class IntegerAnswers(AnswerRewriter):
    """ASGI middleware: the A2A routes' answers carry integers as integers (module docs).

    Args:
        app: the A2A routes.
        schema_of: the outcome schema of a capability by name (the executor's registry).
    """

    def __init__(self, app: ASGIApp, *, schema_of: SchemaOf) -> None:
        super().__init__(app)
        self.schema_of = schema_of

    def hold(self, state: Any, status: int, content_type: str) -> Hold:
        return "json" if is_json_content_type(content_type) else "pass"

    def body(self, state: Any, body: bytes, status: int, hold: Hold) -> bytes:
        return self._json(body)

    def chunk(self, state: Any, chunk: bytes) -> bytes:
        return self._events(chunk)

    def _json(self, body: bytes) -> bytes:
        if _MARK not in body:
            return body  # no outcome in it (the common case for errors and card reads)
        try:
            doc: Any = json.loads(body)
        except ValueError:
            return body
        if not restore_integers(doc, self.schema_of):
            return body
        return json.dumps(doc, ensure_ascii=False).encode()

    def _events(self, chunk: bytes) -> bytes:
        if _MARK not in chunk:
            return chunk
        try:
            text = chunk.decode("utf-8")
        except UnicodeDecodeError:
            return chunk
        sep = "\r\n" if "\r\n" in text else "\n"
        out: list[str] = []
        for line in text.split(sep):
            if line.startswith("data:"):
                try:
                    doc: Any = json.loads(line[5:])
                except ValueError:
                    doc = None
                if doc is not None and restore_integers(doc, self.schema_of):
                    line = "data: " + json.dumps(doc, ensure_ascii=False)
            out.append(line)
        return sep.join(out).encode()
