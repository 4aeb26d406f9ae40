"""Serve the todo web page: ``python -m examples.todo_web [--host 127.0.0.1] [--port 8765]``."""

from __future__ import annotations

import uvicorn

from .listen import listen
from .server import create_app


def main() -> None:
    sock = listen(__doc__, 8765, "todo web page")
    config = uvicorn.Config(create_app(), log_level="warning")
    uvicorn.Server(config).run(sockets=[sock])


if __name__ == "__main__":
    main()
