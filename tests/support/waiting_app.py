"""The shelf (:mod:`tests.support.approval_app`) as ``foldkit-agent serve`` runs it, for the
tests of calls that wait for a person.

``note`` is ``confirm=True`` and always available (every call of it asks a person);
``rename_item`` never asks and is always available (a call that is served at once). The
principal is the verified bearer token's subject (on the page, the signed-in person's; ``None``
without tokens),
and the audit records it.

    foldkit-agent serve tests.support.waiting_app:runtime --mcp http --a2a --webmcp ...
"""

from __future__ import annotations

from collections.abc import AsyncGenerator
from contextlib import asynccontextmanager
from typing import Any

from foldkit_agent import AgentRuntime, Invocation, Program, agent
from tests.support.approval_app import Contract, Model, Shelf, update


def subject(invocation: Invocation) -> str | None:
    """The caller: the subject of the token the edge verified, or nobody."""
    found = getattr(invocation.credentials, "subject", None)
    return found if isinstance(found, str) and found else None


@asynccontextmanager
async def runtime() -> AsyncGenerator[AgentRuntime[Model, Any]]:
    """The bound shelf, holding ``milk``; every audit entry records the caller's subject."""
    program: Program[Model, Any] = Program(init=Model(items=("milk",)), update=update)
    async with program.run() as running:
        rt = Shelf.bind(
            definition=Contract,
            host=running.host,
            audit=agent.audit_log(capacity=10_000, record_principal=lambda who: who),
            principal=subject,
        )
        try:
            yield rt
        finally:
            rt.close()
