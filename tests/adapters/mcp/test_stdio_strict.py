"""Over stdio, every line is read as strictly as an HTTP body (found by a newcomer's attack:
a duplicate key was applied with the last value, and garbage lines went unanswered)."""

from __future__ import annotations

import json
import subprocess
import sys
from typing import Any

from tests.support.paths import ROOT


class Stdio:
    def __init__(self) -> None:
        self.proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "foldkit_agent",
                "serve",
                "examples.todo:runtime",
                "--mcp",
                "stdio",
            ],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
            cwd=ROOT,
        )

    def send(self, message: Any) -> None:
        assert self.proc.stdin is not None
        line = message if isinstance(message, str) else json.dumps(message)
        self.proc.stdin.write(line + "\n")
        self.proc.stdin.flush()

    def send_bytes(self, line: bytes) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.buffer.write(line + b"\n")
        self.proc.stdin.flush()

    def answer(self, ident: Any) -> dict[str, Any]:
        """The next response with ``id == ident`` (notifications in between are skipped)."""
        assert self.proc.stdout is not None
        while True:
            line = self.proc.stdout.readline()
            assert line, "the server closed stdout"
            message = json.loads(line)
            if "id" in message and message["id"] == ident:
                return message

    def close(self) -> int:
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        return self.proc.wait(20)


def call(ident: int, arguments_json: str) -> str:
    return (
        f'{{"jsonrpc": "2.0", "id": {ident}, "method": "tools/call", '
        f'"params": {{"name": "create_todo", "arguments": {arguments_json}}}}}'
    )


def test_stdio_refuses_duplicate_keys_and_garbage_in_our_words_and_keeps_serving() -> None:
    s = Stdio()
    try:
        s.send(
            {
                "jsonrpc": "2.0",
                "id": 1,
                "method": "initialize",
                "params": {
                    "protocolVersion": "2025-06-18",
                    "capabilities": {},
                    "clientInfo": {"name": "t", "version": "1"},
                },
            }
        )
        assert s.answer(1)["result"]["serverInfo"]["name"] == "examples.todo"
        s.send({"jsonrpc": "2.0", "method": "notifications/initialized"})

        s.send(call(2, '{"title": "a", "title": "b"}'))
        assert s.answer(2)["error"] == {
            "code": -32700,
            "message": "The body repeats a key inside one JSON object.",
        }
        s.send("garbage")
        assert s.answer(None)["error"]["code"] == -32700
        s.send('[{"jsonrpc": "2.0", "id": 3, "method": "tools/list"}]')
        assert s.answer(None)["error"]["code"] == -32600
        s.send(call(4, '{"title": NaN}'))
        assert s.answer(4)["error"]["code"] == -32700
        s.send('{"jsonrpc": "2.0", "id": 7, "method": "tools/list", "params": [1]}')
        assert s.answer(7)["error"] == {
            "code": -32602,
            "message": "The request's params must be a JSON object.",
        }
        s.send_bytes(call(8, '{"title": "X"}').encode().replace(b'"X"', b'"\xff"'))
        assert s.answer(8)["error"]["message"] == "The body is not UTF-8 encoded JSON."

        s.send(call(5, '{"title": "kept"}'))
        result = s.answer(5)["result"]
        assert result["isError"] is False
        assert result["structuredContent"]["message"]["title"] == "kept"
        s.send(
            {
                "jsonrpc": "2.0",
                "id": 6,
                "method": "resources/read",
                "params": {"uri": "agent://context"},
            }
        )
        context = json.loads(s.answer(6)["result"]["contents"][0]["text"])
        assert [t["title"] for t in context["todos"]] == ["kept"]  # nothing else got through
    finally:
        assert s.close() == 0
