"""Serve the notes app's copilot over AG-UI on a free loopback port, for the interop tests.

    python tests/support/ag_ui_server.py

Binds ``127.0.0.1:0`` itself, prints ``PORT <n>`` on stdout, then serves
:func:`~foldkit_agent.adapters.pydantic_ai.ag_ui.ag_ui_app` with uvicorn until terminated.
The model is scripted (pydantic-ai's ``FunctionModel``): "add ..." calls ``add_note`` with the
rest of the sentence, "remove the first" calls ``remove_note`` (a ``confirm`` capability), and
a tool's answer is read back as text. ``GET /audit`` lists the audit entries, for the test.
"""

from __future__ import annotations

import asyncio
import json
import socket
import sys
from collections.abc import AsyncIterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

import uvicorn  # noqa: E402
from pydantic_ai import Agent  # noqa: E402
from pydantic_ai.messages import ModelMessage, ToolReturnPart, UserPromptPart  # noqa: E402
from pydantic_ai.models.function import (  # noqa: E402
    AgentInfo,
    DeltaToolCall,
    DeltaToolCalls,
    FunctionModel,
)
from starlette.requests import Request  # noqa: E402
from starlette.responses import JSONResponse  # noqa: E402
from starlette.routing import Route  # noqa: E402

from foldkit_agent.adapters.pydantic_ai.ag_ui import ag_ui_app  # noqa: E402
from tests.support.inproc import run_notes  # noqa: E402


async def scripted(
    messages: list[ModelMessage], info: AgentInfo
) -> AsyncIterator[str | DeltaToolCalls]:
    parts = list(getattr(messages[-1], "parts", []))
    returns = [p for p in parts if isinstance(p, ToolReturnPart)]
    if returns:
        yield f"{returns[0].tool_name}: {returns[0].content}"
        return
    prompt = next(str(p.content) for p in reversed(parts) if isinstance(p, UserPromptPart))
    if prompt.startswith("add "):
        args = {"text": prompt[len("add ") :]}
        yield {0: DeltaToolCall(name="add_note", json_args=json.dumps(args))}
    elif prompt == "remove the first":
        yield {0: DeltaToolCall(name="remove_note", json_args=json.dumps({"index": 0}))}
    else:
        yield "I can add or remove notes."


async def main() -> None:
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    async with run_notes() as (_running, rt, _sent):
        app = ag_ui_app(rt, Agent(FunctionModel(stream_function=scripted)), credentials="alice")

        async def audit(_request: Request) -> JSONResponse:
            assert rt.audit is not None
            entries = rt.audit.entries()
            return JSONResponse([e.to_json() for e in entries])

        app.router.routes.append(Route("/audit", audit, methods=["GET"]))
        server = uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan="on"))
        print(f"PORT {port}", flush=True)
        await server.serve(sockets=[sock])


if __name__ == "__main__":
    asyncio.run(main())
