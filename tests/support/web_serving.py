"""Serve an ASGI app with uvicorn on the test's own event loop, on a pre-bound loopback port.

Binding the socket first means the URL is usable at once: connections wait in the listen
backlog until uvicorn accepts them, so no test ever sleeps waiting for startup.
"""

from __future__ import annotations

import asyncio
import contextlib
import socket
from collections.abc import AsyncIterator
from typing import Any

import uvicorn


@contextlib.asynccontextmanager
async def serve(app: Any) -> AsyncIterator[str]:
    """Yield ``http://127.0.0.1:<port>`` while ``app`` is served on this event loop."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    sock.listen(64)
    sock.setblocking(False)
    port = sock.getsockname()[1]
    config = uvicorn.Config(
        app, log_level="warning", lifespan="off", timeout_graceful_shutdown=2, ws="none"
    )
    server = uvicorn.Server(config)
    task = asyncio.ensure_future(server.serve(sockets=[sock]))
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        await task
        sock.close()
