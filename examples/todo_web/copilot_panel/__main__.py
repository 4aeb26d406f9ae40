"""Serve the copilot panel: ``python -m examples.todo_web.copilot_panel [--port 8766]``."""

from __future__ import annotations

import asyncio
import socket

import uvicorn

from ..listen import listen
from . import copilot_site


async def serve(sock: socket.socket) -> None:
    async with copilot_site() as (app, _runtime):
        config = uvicorn.Config(app, log_level="warning")
        await uvicorn.Server(config).serve(sockets=[sock])


def main() -> None:
    asyncio.run(serve(listen(__doc__, 8766, "todo copilot panel")))


if __name__ == "__main__":
    main()
