"""Serve an ASGI app on a pre-bound loopback port, on the test's own event loop.

The socket is bound (and listening) before the server starts, so the URL is usable at once:
connections wait in the backlog until uvicorn accepts them, and no test sleeps for startup.
It is the same path ``foldkit-agent serve`` takes (``bind_socket`` + ``run_http``), lifespans
included.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import anyio

from foldkit_agent.cli.serve import bind_socket, run_http


@asynccontextmanager
async def served(app: Any) -> AsyncIterator[str]:
    """Yield ``http://127.0.0.1:<port>`` while ``app`` is served; stop it on exit."""
    sock = bind_socket("127.0.0.1", 0)
    async with anyio.create_task_group() as tg:
        tg.start_soon(lambda: run_http(app, sock=sock))
        try:
            yield f"http://127.0.0.1:{sock.getsockname()[1]}"
        finally:
            tg.cancel_scope.cancel()
    sock.close()
