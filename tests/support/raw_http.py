"""A raw HTTP/1.1 client that writes its whole request before reading, as curl does.

For the answer to a request refused while its body is still arriving: such a client sees the
answer only if the server reads (or drains) what it sent before closing; otherwise the
connection is reset under it.
"""

from __future__ import annotations

import socket


def write_all_then_read(port: int, request: bytes) -> bytes:
    """Send ``request`` (head and body) to ``127.0.0.1:port``, then read the JSON answer.

    Returns the raw answer, or it with ``RESET ...`` appended when the connection was reset.
    """
    with socket.create_connection(("127.0.0.1", port), timeout=30) as sock:
        try:
            sock.sendall(request)
        except OSError as exc:  # reset (or broken pipe) while still writing
            return f"RESET while writing: {exc}".encode()
        answer = b""
        while b"\r\n\r\n" not in answer or not answer.rstrip().endswith(b"}"):
            try:
                chunk = sock.recv(65536)
            except OSError as exc:
                return answer + f" RESET: {exc}".encode()
            if not chunk:
                break
            answer += chunk
        return answer


def post(path: str, port: int, headers: dict[str, str], body: bytes) -> bytes:
    """The bytes of ``POST path`` with ``headers`` and a ``Content-Length`` for ``body``."""
    lines = [f"POST {path} HTTP/1.1", f"Host: 127.0.0.1:{port}"]
    lines += [f"{k}: {v}" for k, v in headers.items()]
    lines.append(f"Content-Length: {len(body)}")
    return ("\r\n".join(lines) + "\r\n\r\n").encode() + body
