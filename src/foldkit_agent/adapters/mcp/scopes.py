"""MCP's check of a capability's declared scopes, right behind the edge guard.

The guard has authenticated the bearer token (step 3) and parsed the body (step 5), so the
capability a ``tools/call`` names is known (``params.name``, or for the catalog listing
``call_capability``'s ``arguments.name``) before the SDK or the runtime sees the request. A
token without that capability's scopes is answered HTTP 403 with the challenge of
:func:`foldkit_agent.edge.scopes.insufficient` and a JSON-RPC error carrying the request's
id, and the refusal is audited like the guard's. Installed only when some capability declares
scopes and bearer tokens are required, so other servers run none of it.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, cast

from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Receive, Scope, Send

from ...edge.guard import BODY_KEY
from ...edge.scopes import insufficient
from ...edge.wire import WireError, jsonrpc_code
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


class ScopeCheck:
    """ASGI middleware refusing a ``tools/call`` whose token lacks the capability's scopes.

    Args:
        app: what is behind it (the rest of the MCP app).
        needs: ``{capability name: scopes}`` (:func:`~foldkit_agent.edge.scopes.scope_table`).
        metadata: the protected resource metadata URL the challenge names, or ``None``.
        on_refusal: ``(capability, refusal)``, told of each refusal (to audit it), or ``None``.
    """

    def __init__(
        self,
        app: ASGIApp,
        *,
        needs: Mapping[str, tuple[str, ...]],
        metadata: str | None,
        on_refusal: Callable[[str, WireError], None] | None,
    ) -> None:
        self.app = app
        self.needs = dict(needs)
        self.metadata = metadata
        self.on_refusal = on_refusal

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        body = scope.get(BODY_KEY)
        name = called_capability(body) if body is not None else None
        needed = self.needs.get(name) if name is not None else None
        if name is not None and needed:
            granted: Any = getattr(scope.get("auth"), "scopes", None) or ()
            err = insufficient(name, needed, granted, metadata=self.metadata)
            if err is not None:
                if self.on_refusal is not None:
                    self.on_refusal(name, err)
                error = {"code": jsonrpc_code(err), "message": err.text}
                ident = cast(dict[str, Any], body).get("id")
                answer = {"jsonrpc": "2.0", "id": ident, "error": error}
                response = JSONResponse(answer, status_code=err.status, headers=err.headers)
                await response(scope, receive, send)
                return
        await self.app(scope, receive, send)
