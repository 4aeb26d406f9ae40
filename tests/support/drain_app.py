"""An application whose calls wait until the test lets them go, for the drain tests.

``foldkit-agent serve tests.support.drain_app:runtime ...`` serves one capability, ``hold``:
its Message is applied at once (the update prints ``holding <invocation id>`` to standard
error, so a test knows the call is in flight), and it completes when the process receives
SIGUSR1 (every held call then gets its ``Released``), or times out after 30 s. A test that
sends SIGTERM and then SIGUSR1 sees calls finish during the drain; one that never sends
SIGUSR1 sees them aborted at the drain deadline. The caller's credentials are its principal;
the audit records their ``subject`` (a ``--token``'s).
"""

from __future__ import annotations

import asyncio
import signal
import sys
from collections.abc import AsyncGenerator
from contextlib import asynccontextmanager
from typing import Any

from pydantic import BaseModel

from foldkit_agent import AgentRuntime, Message, Program, agent, message_union, surface


class Model(BaseModel, frozen=True):
    held: int = 0
    released: int = 0


class RequestedHold(Message):
    request_id: str | None = None


class Released(Message):
    request_id: str | None = None


class NoInput(BaseModel):
    pass


Msg = message_union(RequestedHold, Released)
App = surface.application(model=Model, message=Msg, initial=Model())
Hold = agent.for_application(App)

HOLD_TIMEOUT = 30.0

Definition = Hold.make(
    messages=Hold.expose(
        Msg,
        {
            RequestedHold: Hold.variant(
                name="hold",
                description="Applied at once; completes when the server is told to let go",
                input=NoInput,
                to_message=lambda _i, ctx: RequestedHold(request_id=ctx.invocation.id),
                completion=agent.Completion(
                    success=Released,
                    correlate=agent.by_invocation_id("request_id"),
                    timeout=HOLD_TIMEOUT,
                ),
            ),
        },
    ),
)


def _subject(credentials: Any) -> Any:
    """What the audit records of a caller: its token's subject (``None`` without one)."""
    return getattr(credentials, "subject", None)


@asynccontextmanager
async def runtime() -> AsyncGenerator[AgentRuntime[Any, Any]]:
    """The runtime ``serve`` runs: SIGUSR1 releases every held call."""
    released = asyncio.Event()

    def update(model: Model, message: Message) -> Any:
        match message:
            case RequestedHold(request_id=rid):
                print(f"holding {rid}", file=sys.stderr, flush=True)

                async def release() -> Message:
                    await released.wait()
                    return Released(request_id=rid)

                return model.model_copy(update={"held": model.held + 1}), [release]
            case Released():
                return model.model_copy(update={"released": model.released + 1})
            case _:
                return model

    loop = asyncio.get_running_loop()
    loop.add_signal_handler(signal.SIGUSR1, released.set)
    program: Program[Model, Any] = Program(init=Model(), update=update)
    try:
        async with program.run() as running:
            rt = Hold.bind(
                definition=Definition,
                host=running.host,
                audit=agent.audit_log(record_principal=_subject),
                principal=lambda inv: inv.credentials,
            )
            try:
                yield rt
            finally:
                rt.close()
    finally:
        loop.remove_signal_handler(signal.SIGUSR1)
