"""MCP's check of a capability's declared scopes, right behind the edge guard.

The guard has authenticated the bearer token (step 3) and parsed the body (step 5), so the
capability a ``tools/call`` names is known (``params.name``, or for the catalog listing
``call_capability``'s ``arguments.name``) before the SDK or the runtime sees the request. A
token without that capability's scopes is answered HTTP 403 with the challenge of
:func:`foldkit_agent.edge.scopes.insufficient` and a JSON-RPC error carrying the request's
id, and the refusal is audited like the guard's. Installed only where bearer tokens are
required and some capability declares scopes (or, for a runtime per tenant, may), so other
servers run none of it.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any, cast

from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Receive, Scope, Send

from ...contract.calls import Invocation
from ...edge.guard import BODY_KEY
from ...edge.resolve import RuntimeUnavailableError, audit_refused_call
from ...edge.scopes import insufficient, scope_table
from ...edge.wire import jsonrpc_code
from ...runtime.bound import AgentRuntime
from .listing import CALL_CAPABILITY

__all__ = ["ScopeCheck", "called_capability"]


def called_capability(body: Any) -> str | None:
    """The capability a parsed ``tools/call`` body calls, else ``None``.

    Example:
        >>> called_capability({"method": "tools/call", "params": {"name": "delete_todo"}})
        'delete_todo'
    """
    if not isinstance(body, dict):
        return None
    request = cast(dict[str, Any], body)
    if request.get("method") != "tools/call":
        return None
    params: Any = request.get("params")
    if not isinstance(params, dict):
        return None
    found = cast(dict[str, Any], params)
    name, arguments = found.get("name"), found.get("arguments")
    if name == CALL_CAPABILITY and isinstance(arguments, dict):
        name = cast(dict[str, Any], arguments).get("name")
    return name if isinstance(name, str) else None


Served = AgentRuntime[Any, Any] | Callable[[Scope], Awaitable[AgentRuntime[Any, Any]]]
"""The runtime an MCP app serves, or how to find the one a request goes to."""


class ScopeCheck:
    """ASGI middleware refusing a ``tools/call`` whose token lacks the capability's scopes.

    Args:
        app: what is behind it (the rest of the MCP app).
        runtime: the runtime the app serves, or ``runtime(scope)``: the one a request goes to
            (a :class:`~foldkit_agent.edge.Tenants`' tenant, opened here as the SDK would
            next), whose capabilities' scopes are checked.
        metadata: ``metadata(scope)``: the protected resource metadata URL the challenge
            names (a tenant's own under its path), or ``None``.
    """

    def __init__(
        self, app: ASGIApp, *, runtime: Served, metadata: Callable[[Scope], str | None]
    ) -> None:
        self.app = app
        self.runtime = runtime
        self.metadata = metadata
        self._tables: dict[int, dict[str, tuple[str, ...]]] = {}  # by contract

    async def _runtime(self, scope: Scope) -> AgentRuntime[Any, Any] | None:
        served = self.runtime
        if isinstance(served, AgentRuntime):
            return cast("AgentRuntime[Any, Any]", served)
        try:
            return await served(scope)
        except RuntimeUnavailableError:  # no tenant: the SDK's path refuses it in its words
            return None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        body = scope.get(BODY_KEY)
        name = called_capability(body) if body is not None else None
        runtime = None if name is None else await self._runtime(scope)
        needed = None
        if name is not None and runtime is not None:
            definition = runtime.definition
            table = self._tables.get(id(definition))
            if table is None:
                table = self._tables[id(definition)] = scope_table(definition.capabilities)
            needed = table.get(name)
        if name is not None and runtime is not None and needed:
            granted: Any = getattr(scope.get("auth"), "scopes", None) or ()
            err = insufficient(name, needed, granted, metadata=self.metadata(scope))
            if err is not None:
                user = scope.get("user")
                invocation = Invocation(
                    transport="mcp", credentials=getattr(user, "access_token", None)
                )
                await audit_refused_call(runtime, invocation, name, err)
                error = {"code": jsonrpc_code(err), "message": err.text}
                ident = cast(dict[str, Any], body).get("id")
                answer = {"jsonrpc": "2.0", "id": ident, "error": error}
                response = JSONResponse(answer, status_code=err.status, headers=err.headers)
                await response(scope, receive, send)
                return
        await self.app(scope, receive, send)
