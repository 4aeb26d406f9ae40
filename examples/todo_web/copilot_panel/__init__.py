"""The todo list with a copilot panel beside it, over AG-UI.

    python -m examples.todo_web.copilot_panel [--port 8766]

``GET /`` is the panel (``index.html``): the person types a request, and the panel shows the
copilot's tool calls with their arguments and answers, its reply, a delete waiting for the
person's approval (approve / decline), and the todo list the copilot sees. The page's script
(``panel.js``, ``@ag-ui/client`` bundled) runs each request as an AG-UI run against
``POST /copilot/run``: :func:`~foldkit_agent.adapters.pydantic_ai.ag_ui.ag_ui_app` with the
copilot of :mod:`examples.todo_web.copilot` (a scripted model, so it runs offline), acting for
the demo user. The list is the run's shared state (snapshot, then JSON Patch deltas), never
written back: the copilot changes it only through the todo app's own Messages, checked and
audited by its runtime like any other caller's.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import FileResponse, Response
from starlette.routing import Mount, Route

from examples.todo import run_todo
from foldkit_agent import AgentRuntime
from foldkit_agent.adapters.pydantic_ai.ag_ui import ag_ui_app

from ..copilot import agent
from ..server import DEMO_USER

__all__ = ["HERE", "RUN_PATH", "copilot_app", "copilot_site"]

HERE = Path(__file__).parent
RUN_PATH = "/copilot/run"
"""Where the panel's runs go (``panel.src.js`` names it too)."""


def copilot_app(runtime: AgentRuntime[Any, Any], *, credentials: Any = DEMO_USER) -> Starlette:
    """The panel and its AG-UI route over ``runtime``, acting for ``credentials``.

    Example:
        >>> async with run_todo() as (_running, runtime):
        ...     app = copilot_app(runtime)     # uvicorn serves it
    """

    def asset(name: str, media: str) -> Route:
        async def serve(_request: Request) -> Response:
            return FileResponse(HERE / name, media_type=media)

        return Route("/" if name == "index.html" else f"/copilot/{name}", serve, methods=["GET"])

    runs = ag_ui_app(runtime, agent, credentials=credentials, path=RUN_PATH)
    routes = [asset("index.html", "text/html"), asset("panel.js", "text/javascript")]
    return Starlette(routes=[*routes, Mount("", app=runs)])


@asynccontextmanager
async def copilot_site() -> AsyncGenerator[tuple[Starlette, AgentRuntime[Any, Any]]]:
    """Run the todo application and yield the panel's app and the runtime behind it."""
    async with run_todo() as (_running, runtime):
        yield copilot_app(runtime), runtime
