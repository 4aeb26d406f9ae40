"""Per-caller caps on what an MCP client holds over HTTP: handshake-era sessions and streams.

Streams (a handshake-era ``GET`` stream, a modern-era ``subscriptions/listen`` stream) are
held for as long as their request lasts: :func:`stream_hold` names them to the edge guard,
which takes a slot for the caller and refuses one past its share (429) or the total (503).

A handshake-era session outlives its requests: :class:`SessionCaps` takes a slot when an
``initialize`` without ``Mcp-Session-Id`` opens a session, keeps it while the session is open,
and gives it back when the session manager has ended it (the client's ``DELETE``, the idle
timeout, a crash), which it learns the next time it counts that caller's sessions.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, cast

from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS
from starlette.datastructures import Headers, MutableHeaders
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from ...edge.callers import CapReached, Slot, Slots, caller_key
from ...edge.guard import BODY_KEY, Hold, Rules, jsonrpc_or_plain, route_path
from ._sdk import open_session_ids

__all__ = ["SessionCaps", "stream_hold"]

_JSONRPC = Rules(origin="api", jsonrpc=True)
_LISTEN = "subscriptions/listen"


def stream_hold(path: str, streams: Slots) -> Hold:
    """The edge guard's ``hold``: ``GET path`` and ``subscriptions/listen`` hold a stream."""

    def hold(scope: Scope, body: Any) -> Slots | None:
        if route_path(scope) != path:
            return None
        if scope.get("method") == "GET":
            return streams
        if type(body) is dict and cast("dict[str, Any]", body).get("method") == _LISTEN:
            return streams
        return None

    return hold


class SessionCaps:
    """ASGI middleware (inside the edge guard) capping handshake-era sessions per caller.

    Args:
        app: the SDK's app.
        sessions: the caps (per caller, total).
        manager: ``() -> StreamableHTTPSessionManager`` (it exists once the app is built).
        path: the MCP endpoint.
    """

    def __init__(
        self,
        app: ASGIApp,
        *,
        sessions: Slots,
        manager: Callable[[], StreamableHTTPSessionManager],
        path: str,
    ) -> None:
        self.app = app
        self.sessions = sessions
        self.manager = manager
        self.path = path
        self.open: dict[str, dict[str, Slot]] = {}

    def prune(self, caller: str | None = None) -> None:
        """Give back the slots of sessions the manager has ended (``caller``'s, or all)."""
        alive = open_session_ids(self.manager())
        for who in [caller] if caller is not None else list(self.open):
            held = self.open.get(who, {})
            for session_id in [s for s in held if s not in alive]:
                held.pop(session_id).release()
            if not held:
                self.open.pop(who, None)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        # Only an initialize without Mcp-Session-Id opens a session; the modern era has none.
        body = scope.get(BODY_KEY)
        opens = (
            type(body) is dict
            and cast("dict[str, Any]", body).get("method") == "initialize"
            and scope["type"] == "http"
            and scope.get("method") == "POST"
            and route_path(scope) == self.path
        )
        if opens:
            headers = Headers(scope=scope)
            version = headers.get("mcp-protocol-version")
            opens = "mcp-session-id" not in headers and (
                version is None or version in HANDSHAKE_PROTOCOL_VERSIONS
            )
        if not opens:
            await self.app(scope, receive, send)
            return
        caller = caller_key(scope)
        self.prune(caller)
        if len(self.sessions) >= self.sessions.total:
            self.prune()
        try:
            slot = self.sessions.take(caller)
        except CapReached as cap:
            await jsonrpc_or_plain(scope, _JSONRPC, cap.err)(scope, receive, send)
            return
        opened: list[str] = []

        async def watch(message: Message) -> None:
            if message["type"] == "http.response.start" and message["status"] < 400:
                session_id = MutableHeaders(scope=message).get("mcp-session-id")
                if session_id:
                    opened.append(session_id)
            await send(message)

        try:
            await self.app(scope, receive, watch)
        finally:
            if opened:
                self.open.setdefault(caller, {})[opened[0]] = slot
            else:
                slot.release()
