"""Every HTTP route of every adapter, described once so edge tests can run on all of them.

Each :class:`RouteCase` knows how to build its adapter's app for the todo runtime (with its
authentication configured), the headers of a well-authenticated call, a body that calls
``create_todo`` with given raw JSON arguments, and whether the request names the capability
outside its body (so that an edge refusal of it is audited).
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any

import httpx
from mcp.server.auth.provider import AccessToken
from starlette.applications import Starlette
from starlette.routing import Mount

from examples.todo import run_todo
from foldkit_agent import AgentRuntime, Running, agent
from foldkit_agent.adapters.a2a import (
    EXTENSION_URI,
    JSONRPC_PATH,
    REST_PREFIX,
    BearerTokenBackend,
    a2a_app,
)
from foldkit_agent.adapters.mcp import StaticTokenVerifier, http_app
from foldkit_agent.adapters.native import native_app
from foldkit_agent.adapters.web.surface import CSRF_HEADER, CsrfTokens, agent_surface
from tests.support.hostile import asgi_client, mcp_call_body, mcp_headers
from tests.support.serving import served

TOKEN = "alice-secret-token-7f3a"
"""The bearer token MCP and A2A accept (subject ``alice``)."""

SERVICE = "s3rvice-token-0123456789"
"""The Agent Native service token."""

SESSION = "s-demo"
SECRET = b"0123456789abcdef-test"
CSRF = CsrfTokens(SECRET)
SKILL = json.dumps({EXTENSION_URI: {"skill": "create_todo"}})
HANDSHAKE_VERSION = "2025-11-25"


def _mcp_app(rt: AgentRuntime[Any, Any]) -> Any:
    verifier = StaticTokenVerifier(
        {TOKEN: AccessToken(token=TOKEN, client_id="t", scopes=["todos:delete"], subject="alice")}
    )
    return http_app(rt, name="todo", version="1", token_verifier=verifier)


def _a2a_app(rt: AgentRuntime[Any, Any]) -> Any:
    backend = BearerTokenBackend({TOKEN: ("alice", ["todos:delete"])}, required=True)
    return a2a_app(
        rt, name="todo", version="1", base_url="http://127.0.0.1:8000", authentication=backend
    )


def _page_app(rt: AgentRuntime[Any, Any]) -> Any:
    surface = agent_surface(
        rt,
        session_of=lambda request: request.cookies.get("todo_session"),
        csrf_secret=SECRET,
    )
    return Starlette(routes=[Mount("/agent", app=surface)])


def _native_app(rt: AgentRuntime[Any, Any]) -> Any:
    return native_app(rt, service_tokens={SERVICE: "mail-app"}, path="/native")


def _modern(args: str) -> bytes:
    return mcp_call_body('"create_todo"', args)


def _handshake(args: str) -> bytes:
    text = (
        '{"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": '
        f'{{"name": "create_todo", "arguments": {args}}}}}'
    )
    return text.encode("utf-8", "surrogatepass")


_INITIALIZE = json.dumps(
    {
        "jsonrpc": "2.0",
        "id": 0,
        "method": "initialize",
        "params": {
            "protocolVersion": HANDSHAKE_VERSION,
            "capabilities": {},
            "clientInfo": {"name": "edge", "version": "1"},
        },
    }
).encode()


def _a2a_rpc(args: str) -> bytes:
    message = '{"role": "ROLE_USER", "messageId": "m-1", "parts": [{"data": ' + args + "}]}"
    text = (
        '{"jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": {"message": '
        f'{message}, "metadata": {SKILL}}}}}'
    )
    return text.encode("utf-8", "surrogatepass")


def _a2a_rest(args: str) -> bytes:
    message = '{"role": "ROLE_USER", "messageId": "m-1", "parts": [{"data": ' + args + "}]}"
    return f'{{"message": {message}, "metadata": {SKILL}}}'.encode("utf-8", "surrogatepass")


def _raw(args: str) -> bytes:
    return args.encode("utf-8", "surrogatepass")


@dataclass(frozen=True)
class RouteCase:
    """One route of one adapter.

    Attributes:
        id: the test id.
        path: the request path.
        build: the adapter's app for a runtime.
        auth: the headers that authenticate a call (bearer token, or session cookie + CSRF).
        protocol: the other headers a call carries.
        call: ``(raw JSON arguments) -> body`` of a call of ``create_todo``.
        ok_body: a body the route answers 200 when authenticated.
        names_capability: the request names ``create_todo`` outside its body.
        jsonrpc: refusals are JSON-RPC error objects.
        transport: ``Invocation.transport`` of its calls (for the audit entries).
        max_body: the route's default body limit, in bytes.
    """

    id: str
    path: str
    build: Callable[[AgentRuntime[Any, Any]], Any]
    auth: dict[str, str]
    protocol: dict[str, str]
    call: Callable[[str], bytes]
    ok_body: bytes
    names_capability: bool
    jsonrpc: bool
    transport: str
    max_body: int

    def headers(self, **extra: str) -> dict[str, str]:
        return {**self.protocol, **self.auth, **extra}

    def anonymous(self, **extra: str) -> dict[str, str]:
        return {**self.protocol, **extra}


_BEARER = {"Authorization": f"Bearer {TOKEN}"}
_PAGE_AUTH = {"Cookie": f"todo_session={SESSION}", CSRF_HEADER: CSRF.token_for(SESSION)}
_JSON = {"Content-Type": "application/json"}
_A2A = {**_JSON, "A2A-Version": "1.0"}
_HANDSHAKE = {
    **_JSON,
    "Accept": "application/json, text/event-stream",
    "MCP-Protocol-Version": HANDSHAKE_VERSION,
}

ROUTES: list[RouteCase] = [
    RouteCase(
        "mcp-modern",
        "/mcp",
        _mcp_app,
        _BEARER,
        {k: v for k, v in mcp_headers().items() if k != "Authorization"},
        _modern,
        _modern('{"title": "Milk"}'),
        True,
        True,
        "mcp",
        4 * 1024 * 1024,
    ),
    RouteCase(
        "mcp-handshake",
        "/mcp",
        _mcp_app,
        _BEARER,
        {k: v for k, v in _HANDSHAKE.items() if k != "MCP-Protocol-Version"},
        _handshake,
        _INITIALIZE,
        False,
        True,
        "mcp",
        4 * 1024 * 1024,
    ),
    RouteCase(
        "a2a-jsonrpc",
        JSONRPC_PATH,
        _a2a_app,
        _BEARER,
        _A2A,
        _a2a_rpc,
        _a2a_rpc('{"title": "Milk"}'),
        False,
        True,
        "a2a",
        1024 * 1024,
    ),
    RouteCase(
        "a2a-rest",
        REST_PREFIX + "/message:send",
        _a2a_app,
        _BEARER,
        _A2A,
        _a2a_rest,
        _a2a_rest('{"title": "Milk"}'),
        False,
        False,
        "a2a",
        1024 * 1024,
    ),
    RouteCase(
        "page",
        "/agent/invoke/create_todo",
        _page_app,
        _PAGE_AUTH,
        _JSON,
        _raw,
        b'{"title": "Milk"}',
        True,
        False,
        "webmcp",
        64 * 1024,
    ),
    RouteCase(
        "native",
        "/native/invoke/create_todo",
        _native_app,
        {"Authorization": f"Bearer {SERVICE}"},
        _JSON,
        _raw,
        b'{"title": "Milk"}',
        True,
        False,
        "agent-native",
        64 * 1024,
    ),
]
"""MCP (both eras), A2A (JSON-RPC and HTTP+JSON), the page surface and Agent Native."""

ROUTE_IDS = [r.id for r in ROUTES]


@dataclass
class Served:
    """A route's app, in process, on a fresh todo runtime."""

    route: RouteCase
    running: Running[Any, Any]
    rt: AgentRuntime[Any, Any]
    app: Any
    http: httpx.AsyncClient
    origin: str = "http://127.0.0.1:8000"

    async def post(self, body: bytes, headers: dict[str, str]) -> httpx.Response:
        return await self.http.post(self.route.path, content=body, headers=headers)

    def audited(self) -> list[Any]:
        assert self.rt.audit is not None
        return self.rt.audit.entries()


@asynccontextmanager
async def serve_route(route: RouteCase, *, over_socket: bool = False) -> AsyncIterator[Served]:
    """The route's app on a fresh todo runtime (with an audit log), with its lifespan running:
    in process, or served by uvicorn on a loopback port (``Served.origin``)."""
    audit = agent.audit_log(capacity=100, record_principal=lambda u: getattr(u, "id", str(u)))
    async with run_todo(audit=audit) as (running, rt):
        app = route.build(rt)
        if not over_socket:
            async with asgi_client(app) as http:
                yield Served(route, running, rt, app, http)
            return
        async with served(app) as origin, httpx.AsyncClient(base_url=origin, timeout=30) as http:
            yield Served(route, running, rt, app, http, origin)
