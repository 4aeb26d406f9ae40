"""``foldkit-agent serve`` caps a request's head and reads it alike with either HTTP parser.

Issue 20's stranger: with httptools (the default) two unauthenticated connections sent 400 MB
of headers each and the server held it all until the header timeout; 20,000 small headers on
an authenticated request froze the server for seconds in a quadratic header lookup; and the
two parsers disagreed on ``Host``, ``Content-Length`` with ``Transfer-Encoding``,
``Transfer-Encoding: gzip, chunked`` and an absolute-form target. Each test runs a real
``serve`` subprocess, once with each parser, over raw sockets, and asserts what the server
signals: its status line, the connection closed, an audit entry committed or not, and its
resident memory. No test measures a time.
"""

from __future__ import annotations

import asyncio
import json
import socket
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path

import anyio
import pytest

from foldkit_agent.edge.connections import HTTP_PARSERS
from tests.support.hostile import mcp_call_body, mcp_headers
from tests.support.serving import serve_process

pytestmark = pytest.mark.parametrize("http", HTTP_PARSERS)

TOKEN = "alice-token"


@dataclass
class Server:
    port: int
    pid: int
    audit: Path

    def rss_kib(self) -> int:
        """The server process's resident memory (``VmRSS``), in KiB."""
        for line in Path(f"/proc/{self.pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
        raise AssertionError("no VmRSS")

    def audited(self) -> list[str]:
        """The capability of each audit entry committed so far."""
        lines = self.audit.read_text().splitlines() if self.audit.exists() else []
        return [json.loads(line)["capability"] for line in lines]


@asynccontextmanager
async def _serve(http: str, tmp_path: Path, *args: str) -> AsyncIterator[Server]:
    audit = tmp_path / "audit.jsonl"
    procs: list[asyncio.subprocess.Process] = []
    flags = ["--mcp", "http", "--token", f"{TOKEN}=alice", "--http", http]
    flags += ["--audit", f"jsonl:{audit}", "--audit-durable", *args]
    async with serve_process("examples.todo:runtime", *flags, process=procs) as origin:
        yield Server(int(origin.rsplit(":", 1)[1]), procs[0].pid, audit)


def _connect(port: int) -> socket.socket:
    return socket.create_connection(("127.0.0.1", port), timeout=30)


def _answer(sock: socket.socket) -> tuple[bytes, bool]:
    """Everything the server writes, and whether it then closed the connection (``recv``
    gave ``b""`` or a reset) rather than keeping it open (a 30 s timeout)."""
    out = b""
    try:
        while chunk := sock.recv(65536):
            out += chunk
    except TimeoutError:
        return out, False
    except ConnectionResetError:
        pass
    return out, True


async def _exchange(port: int, *parts: bytes) -> tuple[bytes, bool]:
    """Send each part with its own ``sendall``, then read the answer and the close."""

    def run() -> tuple[bytes, bool]:
        with _connect(port) as sock:
            for part in parts:
                sock.sendall(part)
            return _answer(sock)

    return await anyio.to_thread.run_sync(run)


def _call(port: int, title: str, extra: int = 0, pad: int = 0) -> bytes:
    """A 2026-era ``tools/call create_todo`` (``Connection: close``) with ``extra`` padding
    header fields and one more of ``pad`` bytes when ``pad``."""
    body = mcp_call_body('"create_todo"', json.dumps({"title": title}))
    fields = [f"Host: 127.0.0.1:{port}", "Connection: close"]
    fields += [f"{k}: {v}" for k, v in mcp_headers("create_todo", TOKEN).items()]
    fields += [f"Content-Length: {len(body)}"]
    fields += [f"X-Pad-{i}: v" for i in range(extra)]
    fields += [f"X-Big: {'a' * pad}"] if pad else []
    return ("POST /mcp HTTP/1.1\r\n" + "\r\n".join(fields) + "\r\n\r\n").encode() + body


def _fields(request: bytes) -> int:
    return request.split(b"\r\n\r\n", 1)[0].count(b"\r\n")


async def test_f20_a_head_growing_past_max_header_bytes_is_answered_431_and_closed(
    http: str, tmp_path: Path
) -> None:
    async with _serve(http, tmp_path, "--max-header-bytes", "4096") as server:
        start = f"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{server.port}\r\nX-Big: ".encode()
        # one field that never ends: httptools keeps it whole inside the parser, h11 in its
        # buffer; the second part takes the unfinished head past the cap
        answer, closed = await _exchange(server.port, start + b"a" * 3000, b"a" * 2000)
    assert answer.startswith(b"HTTP/1.1 431 Request Header Fields Too Large\r\n"), answer[:200]
    assert b"connection: close" in answer.lower()
    assert answer.endswith(b"larger than the 4096-byte limit; send fewer or smaller headers.")
    assert closed


async def test_f20_a_whole_head_over_the_cap_never_reaches_the_app_and_one_under_it_does(
    http: str, tmp_path: Path
) -> None:
    async with _serve(http, tmp_path, "--max-header-bytes", "4096") as server:
        # the head whole in one write, with its body: no unfinished head to count
        refused, closed = await _exchange(server.port, _call(server.port, "Milk", pad=4096))
        answered, _ = await _exchange(server.port, _call(server.port, "Bread", pad=3000))
        assert refused.startswith(b"HTTP/1.1 431 "), refused[:200]
        assert closed
        assert answered.startswith(b"HTTP/1.1 200 "), answered[:300]
        assert server.audited() == ["create_todo"]  # Bread only: Milk ran nothing


async def test_f20_megabytes_of_headers_before_authentication_are_never_buffered(
    http: str, tmp_path: Path
) -> None:
    # the stranger's bighead.py: 400 MB of headers on each of two unauthenticated connections
    # took the server from 80 to 907 MB until the header timeout
    attempt = 64  # MiB per connection

    def flood(port: int) -> int:
        """MiB handed to the kernel before the server closed the connection."""
        with _connect(port) as sock:
            sock.sendall(f"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n".encode())
            for sent in range(attempt):
                try:
                    sock.sendall(f"X-{sent}: ".encode() + b"a" * (1 << 20) + b"\r\n")
                except OSError:  # reset or broken pipe: the server closed it
                    return sent
            return attempt

    async with _serve(http, tmp_path) as server:
        before = server.rss_kib()
        sent = [await anyio.to_thread.run_sync(flood, server.port) for _ in range(2)]
        grown = server.rss_kib() - before
    assert all(n < attempt for n in sent), sent  # closed long before the flood ended
    assert grown < 16 * 1024, f"the server grew by {grown} KiB"


async def test_f20_the_101st_header_field_is_answered_431_before_any_handler_runs(
    http: str, tmp_path: Path
) -> None:
    async with _serve(http, tmp_path) as server:
        fields = _fields(_call(server.port, "Bread"))
        at_cap = _call(server.port, "Bread", extra=100 - fields)
        over = _call(server.port, "Milk", extra=101 - fields)
        assert _fields(at_cap) == 100
        assert _fields(over) == 101
        refused, closed = await _exchange(server.port, over)
        answered, _ = await _exchange(server.port, at_cap)
        assert server.audited() == ["create_todo"]  # Bread's; Milk's call never ran
    assert refused.startswith(b"HTTP/1.1 431 "), refused[:200]
    assert refused.endswith(
        b"The request has more than 100 header fields, the most one request may carry; send fewer."
    )
    assert closed
    assert answered.startswith(b"HTTP/1.1 200 "), answered[:300]


async def test_f20_twenty_thousand_headers_on_an_authenticated_call_are_refused_at_the_cap(
    http: str, tmp_path: Path
) -> None:
    # the stranger's manyheaders.py: 20,000 headers in 224 KiB froze the server 9-15 s in
    # dict(request.headers); the count cap answers before the app is called
    async with _serve(http, tmp_path, "--max-header-bytes", str(1 << 20)) as server:
        answer, closed = await _exchange(server.port, _call(server.port, "Milk", extra=20_000))
        assert server.audited() == []
    assert answer.startswith(b"HTTP/1.1 431 "), answer[:200]
    assert b"more than 100 header fields" in answer
    assert closed


def _chunked(request: bytes, encoding: str, keep_length: bool) -> bytes:
    head, body = request.split(b"\r\n\r\n", 1)
    lines = [line for line in head.split(b"\r\n") if keep_length or b"Content-Length" not in line]
    lines.append(f"Transfer-Encoding: {encoding}".encode())
    return b"\r\n".join(lines) + b"\r\n\r\n" + b"%x\r\n%s\r\n0\r\n\r\n" % (len(body), body)


def _without_host(request: bytes) -> bytes:
    head, body = request.split(b"\r\n\r\n", 1)
    lines = [line for line in head.split(b"\r\n") if not line.startswith(b"Host:")]
    return b"\r\n".join(lines) + b"\r\n\r\n" + body


DISAGREED = {
    # what one parser refused and the other served, before: now refused by both
    "Content-Length and Transfer-Encoding: chunked": lambda r: _chunked(r, "chunked", True),
    "Transfer-Encoding: gzip, chunked": lambda r: _chunked(r, "gzip, chunked", False),
    "an absolute-form target": lambda r: r.replace(b"POST /mcp", b"POST http://evil.example/mcp"),
    "HTTP/1.1 without Host": _without_host,
    "two Host fields": lambda r: r.replace(b"Host: ", b"Host: 127.0.0.1\r\nHost: ", 1),
}


@pytest.mark.parametrize("case", DISAGREED)
async def test_f20_both_parsers_refuse_what_one_of_them_let_through(
    http: str, case: str, tmp_path: Path
) -> None:
    async with _serve(http, tmp_path) as server:
        plain = _call(server.port, "Bread")
        answered, _ = await _exchange(server.port, _chunked(plain, "chunked", False))
        refused, closed = await _exchange(server.port, DISAGREED[case](_call(server.port, "Milk")))
        assert server.audited() == ["create_todo"]  # Bread (chunked is fine); Milk never ran
    assert answered.startswith(b"HTTP/1.1 200 "), answered[:300]
    assert refused.startswith(b"HTTP/1.1 400 Bad Request\r\n"), refused[:300]
    assert refused.endswith(b"\r\n\r\nInvalid HTTP request received.")
    assert closed


async def test_f20_a_refusal_repeats_an_undeclared_field_name_cut_at_200_characters(
    http: str, tmp_path: Path
) -> None:
    # the stranger's echo.py: 21 undeclared names of 50 KB each came back whole, 1.5 MB
    async with _serve(http, tmp_path) as server:
        names = {f"k{n}" + "x" * 50_000: n for n in range(21)}
        body = mcp_call_body('"create_todo"', json.dumps({"title": "Milk", **names}))
        request = _call(server.port, "Milk").split(b"\r\n\r\n", 1)[0]
        request = request.replace(b"Content-Length: ", b"X-Old-Length: ")
        request += f"\r\nContent-Length: {len(body)}\r\n\r\n".encode() + body
        answer, _ = await _exchange(server.port, request)
        assert server.audited() == ["create_todo"]  # the refusal, audited
    head, text = answer.split(b"\r\n\r\n", 1)
    assert head.startswith(b"HTTP/1.1 200 ")
    result = json.loads(text)["result"]
    assert result["isError"] is True
    paths = [issue["path"] for issue in result["structuredContent"]["issues"]]
    assert paths[:20] == [(f"k{n}" + "x" * 50_000)[:200] for n in range(20)]
    assert len(answer) < 20_000  # 1.5 MB before
