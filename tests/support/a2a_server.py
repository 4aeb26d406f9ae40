"""Serve the todo example over A2A on a free loopback port, for the interop tests.

    python tests/support/a2a_server.py

Binds ``127.0.0.1:0`` itself (so the port is known before the card is built and nothing can
take it in between), prints ``PORT <n>`` on stdout, then serves with uvicorn until terminated.
Bearer tokens come from ``tests.support.a2a_lab.TOKENS``.
"""

from __future__ import annotations

import asyncio
import socket
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

import uvicorn  # noqa: E402

from examples.todo import runtime  # noqa: E402
from foldkit_agent.adapters.a2a import a2a_app  # noqa: E402
from tests.support.a2a_lab import BearerBackend  # noqa: E402


async def main() -> None:
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    async with runtime() as rt:
        app = a2a_app(
            rt,
            name="todo",
            version="1.0.0",
            base_url=f"http://127.0.0.1:{port}",
            authentication=BearerBackend(),
        )
        server = uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan="on"))
        print(f"PORT {port}", flush=True)
        await server.serve(sockets=[sock])


if __name__ == "__main__":
    asyncio.run(main())
