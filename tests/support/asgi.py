"""Drive an ASGI app by hand: chosen body chunks, and a count of what the app read."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from starlette.types import ASGIApp, Message


@dataclass
class Exchange:
    """One request's answer and how much of its body the app asked for."""

    status: int = 0
    headers: dict[str, str] = field(default_factory=dict[str, str])
    body: bytes = b""
    receives: int = 0
    bytes_read: int = 0

    def json(self) -> Any:
        return json.loads(self.body)


async def exchange(
    app: ASGIApp,
    method: str = "POST",
    path: str = "/",
    headers: dict[str, str] | None = None,
    chunks: list[bytes] | None = None,
    *,
    scheme: str = "http",
) -> Exchange:
    """Send one request to ``app`` (``chunks`` as separate ``http.request`` messages)."""
    pending = list(chunks if chunks is not None else [b""])
    out = Exchange()
    raw = [(k.lower().encode("latin-1"), v.encode("latin-1")) for k, v in (headers or {}).items()]
    scope: dict[str, Any] = {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": method,
        "scheme": scheme,
        "path": path,
        "raw_path": path.encode(),
        "root_path": "",
        "query_string": b"",
        "headers": raw,
        "client": ("127.0.0.1", 50000),
        "server": ("127.0.0.1", 8000),
    }

    async def receive() -> Message:
        out.receives += 1
        if not pending:
            return {"type": "http.disconnect"}
        chunk = pending.pop(0)
        out.bytes_read += len(chunk)
        return {"type": "http.request", "body": chunk, "more_body": bool(pending)}

    async def send(message: Message) -> None:
        if message["type"] == "http.response.start":
            out.status = message["status"]
            out.headers = {k.decode(): v.decode() for k, v in message.get("headers", [])}
        elif message["type"] == "http.response.body":
            out.body += message.get("body", b"")

    await app(scope, receive, send)
    return out
