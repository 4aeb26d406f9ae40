"""What both of the example's commands do first: read ``--host``/``--port``, listen, say where."""

from __future__ import annotations

import argparse
import socket
import sys


def listen(description: str | None, port: int, label: str) -> socket.socket:
    """A socket listening where ``--host``/``--port`` say (default ``127.0.0.1:port``), once
    ``label: URL`` is printed; exits with one line when it cannot listen.

    Listening before the URL is printed: a browser opened at once waits, not fails.

    Example:
        >>> sock = listen(__doc__, 8765, "todo web page")
    """
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=port)
    args = parser.parse_args()
    try:
        sock = socket.create_server((args.host, args.port))
    except OSError as err:
        sys.exit(f"error: cannot listen on {args.host}:{args.port}: {err.strerror or err}")
    print(f"{label}: http://{args.host}:{sock.getsockname()[1]}/", flush=True)
    return sock
