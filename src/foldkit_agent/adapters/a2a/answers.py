"""Rewriting the A2A routes' answers on their way out: the one ASGI plumbing both rewrites use.

A JSON answer is held until its last byte and handed over whole (its ``Content-Length`` set
anew); each server-sent chunk is handed over as it passes; the public card route is never
touched. :class:`~.errors.OwnErrorText` (error text in our words) and
:class:`~.numbers.IntegerAnswers` (integers as integers) say what to hold and how to rewrite.
"""

from __future__ import annotations

from typing import Any, Literal

from starlette.datastructures import Headers, MutableHeaders
from starlette.types import ASGIApp, Receive, Scope, Send
from starlette.types import Message as AsgiMessage

from ...edge.guard import route_path
from .card import CARD_PATH

__all__ = ["AnswerRewriter", "Hold"]

Hold = Literal["pass", "json", "plain"]
"""What to do with a (non-streaming) answer: pass it, or hold it whole as JSON or plain text."""


class AnswerRewriter:
    """Base ASGI middleware: override :meth:`begin`, :meth:`hold`, :meth:`body`, :meth:`chunk`."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    def begin(self, scope: Scope) -> Any:
        """Per-request state handed to the other hooks (``None`` by default)."""
        del scope
        return None

    def hold(self, state: Any, status: int, content_type: str) -> Hold:
        """Whether to hold this (non-event-stream) answer; by default, never."""
        del state, status, content_type
        return "pass"

    def body(self, state: Any, body: bytes, status: int, hold: Hold) -> bytes:
        """The held answer's new body."""
        del state, status, hold
        return body

    def chunk(self, state: Any, chunk: bytes) -> bytes:
        """A server-sent chunk, rewritten."""
        del state
        return chunk

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or route_path(scope) == CARD_PATH:
            await self.app(scope, receive, send)
            return
        state = self.begin(scope)
        mode: Hold | Literal["sse"] = "pass"
        start: AsgiMessage | None = None
        held = bytearray()

        async def send_rewritten(message: AsgiMessage) -> None:
            nonlocal mode, start
            if message["type"] == "http.response.start":
                status = int(message["status"])
                ctype = Headers(raw=message.get("headers", [])).get("content-type", "")
                mode = (
                    "sse"
                    if ctype.startswith("text/event-stream")
                    else self.hold(state, status, ctype)
                )
                if mode in ("json", "plain"):
                    start = message
                    return
            elif message["type"] == "http.response.body" and mode != "pass":
                body = bytes(message.get("body", b""))
                if mode == "sse":
                    await send({**message, "body": self.chunk(state, body)})
                    return
                held.extend(body)
                if message.get("more_body", False):
                    return
                assert start is not None
                assert mode != "pass"
                new = self.body(state, bytes(held), int(start["status"]), mode)
                headers = MutableHeaders(raw=list(start.get("headers", [])))
                headers["content-length"] = str(len(new))
                if mode == "plain":
                    headers["content-type"] = "application/json"
                await send({**start, "headers": headers.raw})
                await send({"type": "http.response.body", "body": new, "more_body": False})
                return
            await send(message)

        await self.app(scope, receive, send_rewritten)
