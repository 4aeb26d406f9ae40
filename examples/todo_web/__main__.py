"""Serve the todo web page: ``python -m examples.todo_web [--host 127.0.0.1] [--port 8765]``."""

from __future__ import annotations

import argparse
import socket
import sys

import uvicorn

from .server import create_app


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8765)
    args = parser.parse_args()
    try:  # listening before the URL is printed: a browser opened at once waits, not fails
        sock = socket.create_server((args.host, args.port))
    except OSError as err:
        sys.exit(f"error: cannot listen on {args.host}:{args.port}: {err.strerror or err}")
    print(f"todo web page: http://{args.host}:{sock.getsockname()[1]}/", flush=True)
    config = uvicorn.Config(create_app(), log_level="warning")
    uvicorn.Server(config).run(sockets=[sock])


if __name__ == "__main__":
    main()
