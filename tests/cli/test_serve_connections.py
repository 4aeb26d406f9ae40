"""``foldkit-agent serve`` closes slow and idle connections and keeps serving at its caps.

Each test runs a real ``serve`` subprocess with the timeout set small through its flag and
talks to it over raw sockets, once with each of uvicorn's HTTP parsers (``--http h11`` and
``--http httptools``, the default where installed): every limit holds on both. A connection
counts as closed by the server when ``recv`` returns ``b""`` (every socket has a 30 s timeout,
so a server that never closes fails the test instead of hanging it); no test measures how long
that took.
"""

from __future__ import annotations

import socket
from contextlib import AbstractAsyncContextManager
from typing import Any

import anyio
import httpx
import pytest

from foldkit_agent.edge.connections import HTTP_PARSERS
from tests.support.raw_http import post
from tests.support.serving import Lines, serve_process

pytestmark = pytest.mark.parametrize("http", HTTP_PARSERS)


def _served(http: str, *args: str, **kw: Any) -> AbstractAsyncContextManager[str]:
    return serve_process("examples.todo:runtime", "--http", http, *args, **kw)


FAST = ["--header-timeout", "0.5", "--body-timeout", "0.5", "--keep-alive", "1"]


def _port(origin: str) -> int:
    return int(origin.rsplit(":", 1)[1])


def _connect(port: int) -> socket.socket:
    return socket.create_connection(("127.0.0.1", port), timeout=30)


def _closed_by_server(sock: socket.socket) -> bool:
    """Read until the server closes; ``True`` when it did (``recv`` gave ``b""``)."""
    try:
        while True:
            chunk = sock.recv(65536)
            if not chunk:
                return True
    except TimeoutError:
        return False
    except ConnectionResetError:
        return True


async def _closed(sock: socket.socket) -> bool:
    try:
        return await anyio.to_thread.run_sync(_closed_by_server, sock)
    finally:
        sock.close()


async def test_a_connection_that_never_sends_a_byte_is_closed_after_the_header_timeout(
    http: str,
) -> None:
    async with _served(http, "--mcp", "http", *FAST) as origin:
        sock = _connect(_port(origin))
        assert await _closed(sock)


async def test_a_client_that_never_finishes_its_headers_is_closed(http: str) -> None:
    async with _served(http, "--mcp", "http", *FAST) as origin:
        sock = _connect(_port(origin))
        sock.sendall(b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n")
        assert await _closed(sock)


async def test_a_body_that_stalls_half_way_is_closed_after_the_body_timeout(http: str) -> None:
    async with _served(http, "--mcp", "http", *FAST) as origin:
        port = _port(origin)
        body = b'{"jsonrpc": "2.0", "id": 1, "method": "ping"}'
        request = post("/mcp", port, {"Content-Type": "application/json"}, body)
        sock = _connect(port)
        sock.sendall(request[: len(request) - len(body) // 2])  # headers and half the body
        assert await _closed(sock)


async def test_an_idle_keep_alive_connection_is_closed_after_its_answer(http: str) -> None:
    async with _served(http, "--a2a", *FAST) as origin:
        port = _port(origin)
        sock = _connect(port)
        sock.sendall(
            f"GET /.well-known/agent-card.json HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n\r\n".encode()
        )
        first = sock.recv(65536)
        assert first.startswith(b"HTTP/1.1 200"), first[:100]
        assert b"connection: close" not in first.lower()  # kept alive, then closed when idle
        assert await _closed(sock)


async def test_at_the_connection_cap_a_new_client_is_served_and_the_idlest_is_closed(
    http: str,
) -> None:
    args = ["--a2a", "--max-connections", "4", "--header-timeout", "60"]
    async with _served(http, *args) as origin:
        port = _port(origin)
        idle = [_connect(port) for _ in range(4)]
        async with httpx.AsyncClient(base_url=origin, timeout=30) as client:
            for _ in range(3):
                answer = await client.get("/.well-known/agent-card.json")
                assert answer.status_code == 200
        assert await _closed(idle[0])  # the connection idle longest made room
        for sock in idle[1:]:
            sock.close()


async def test_running_out_of_file_descriptors_is_one_log_line_not_a_traceback_per_accept(
    http: str,
) -> None:
    said = Lines()
    args = ["--a2a", "--max-connections", "10000", "--header-timeout", "60"]
    async with _served(http, *args, open_files=64, stderr=said) as origin:
        port = _port(origin)
        held = [_connect(port) for _ in range(120)]  # more than the server can accept
        with anyio.fail_after(30):
            await said.wait_for("cannot accept new connections")
        for sock in held:
            sock.close()
        async with httpx.AsyncClient(base_url=origin, timeout=30) as client:
            with anyio.fail_after(30):
                while True:
                    try:
                        answer = await client.get("/.well-known/agent-card.json")
                        break
                    except httpx.TransportError:
                        await anyio.sleep(0.2)
            assert answer.status_code == 200
    assert not any("Traceback" in line for line in said), "\n".join(said[:60])
    reports = [line for line in said if "cannot accept new connections" in line]
    assert 1 <= len(reports) <= 3, said[:20]
    assert "Too many open files" in reports[0]


SERVICE = "s3rvice-token-0123456789"


def _drip(sock: socket.socket, request: bytes, start: int, interval: float) -> bool:
    """Send ``request[:start]``, then one byte every ``interval`` seconds; ``True`` when the
    server closed the connection before the body was whole (``False``: it answered)."""
    sock.sendall(request[:start])
    for at in range(start, len(request)):
        sock.settimeout(interval)
        try:
            return not sock.recv(65536)  # b"": closed; else an answer (it was dispatched)
        except TimeoutError:
            pass
        except ConnectionResetError:
            return True
        try:
            sock.sendall(request[at : at + 1])
        except (BrokenPipeError, ConnectionResetError):
            return True
    sock.settimeout(30)
    return _closed_by_server(sock)


async def test_f15_a_body_dripped_a_byte_at_a_time_is_closed_at_the_body_deadline(
    http: str,
) -> None:
    # stranger's attack on issue 15, F2: a byte every (timeout - 1) s kept a body alive for ever
    timeout = 1.5
    args = ["--native-token", SERVICE, "--body-timeout", str(timeout), "--header-timeout", "60"]
    async with _served(http, *args) as origin:
        port = _port(origin)
        bearer = {"Authorization": f"Bearer {SERVICE}", "Content-Type": "application/json"}
        body = b'{"title": "Milk from a slow client"}'
        request = post("/native/invoke/create_todo", port, bearer, body)
        sock = _connect(port)
        try:
            closed = await anyio.to_thread.run_sync(
                _drip, sock, request, len(request) - len(body) + 1, timeout / 3
            )
        finally:
            sock.close()
        assert closed
        async with httpx.AsyncClient(base_url=f"{origin}/native", headers=bearer) as hc:
            made = await hc.post("/invoke/create_todo", json={"title": "Bread"})
            assert made.status_code == 200
            context = (await hc.get("/context")).text
        assert "Bread" in context  # the context shows calls ...
        assert "Milk" not in context  # ... and the dripped one was never dispatched
