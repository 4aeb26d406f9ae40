"""A capability's declared scopes, checked against a verified bearer token's (RFC 6750 §3.1).

A capability declares the OAuth scopes a token must grant to call it
(``agent.variant(scopes=["todos:delete"])``). Where a transport authenticates with bearer
tokens, the edge checks them once it knows which capability a request calls and before the
call starts: a token without them is answered HTTP 403 with ``WWW-Authenticate: Bearer
error="insufficient_scope", scope="..."``. The ``scope`` named is what the token already
has together with what the capability needs, so a client that asks its authorization server
for exactly that (MCP's step-up) gets a token good for this call and everything it could
call before.

Example:
    >>> needs = scope_table(runtime.definition.capabilities)
    >>> insufficient(needs.get("delete_todo", ()), ["todos:read"], metadata=None) is None
    False
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from .wire import WireError

__all__ = ["challenge", "insufficient", "scope_table", "scopes_supported"]


def scope_table(capabilities: Iterable[Any]) -> dict[str, tuple[str, ...]]:
    """``{capability name: scopes}`` for the capabilities that declare scopes (``{}``: none,
    so nothing needs checking)."""
    return {c.name: tuple(c.scopes) for c in capabilities if getattr(c, "scopes", ())}


def scopes_supported(table: Mapping[str, tuple[str, ...]], also: Iterable[str] = ()) -> list[str]:
    """Every scope the capabilities declare, and ``also``, each once, sorted (the protected
    resource metadata's ``scopes_supported``)."""
    return sorted({*also, *(s for scopes in table.values() for s in scopes)})


def challenge(
    error: str | None, description: str | None, metadata: str | None, scope: str | None = None
) -> str:
    """A ``WWW-Authenticate`` value of the Bearer scheme (RFC 6750 §3, RFC 9728 §5.1).

    ``error=None`` is the answer to a request that carried no credentials at all: RFC 6750
    §3.1 gives it no error code, only where to sign in (the metadata) and what to ask for.

    Example:
        >>> challenge(None, None, "https://todo.example/.well-known/oauth-protected-resource")
        'Bearer resource_metadata="https://todo.example/.well-known/oauth-protected-resource"'
    """
    parts = [] if error is None else [f'error="{error}"']
    if error is not None and description is not None:
        parts.append(f'error_description="{description}"')
    if scope is not None:
        parts.append(f'scope="{scope}"')
    if metadata is not None:
        parts.append(f'resource_metadata="{metadata}"')
    return "Bearer " + ", ".join(parts) if parts else "Bearer"


def insufficient(
    capability: str, needed: tuple[str, ...], granted: Iterable[str], *, metadata: str | None
) -> WireError | None:
    """``None`` when ``granted`` holds every scope ``needed``; else the 403 naming the
    missing ones (text) and the ones to ask for (the challenge's ``scope``)."""
    have = list(dict.fromkeys(granted))
    missing = [s for s in needed if s not in have]
    if not missing:
        return None
    ask = " ".join(dict.fromkeys([*have, *needed]))
    named = ", ".join(repr(s) for s in missing)
    text = (
        f"The capability {capability!r} needs the scope {named}, which this bearer token "
        "lacks: ask the authorization server for a token with it."
    )
    header = challenge("insufficient_scope", f"Required scope: {' '.join(missing)}", metadata, ask)
    return WireError(403, "insufficient-scope", text, {"WWW-Authenticate": header})
