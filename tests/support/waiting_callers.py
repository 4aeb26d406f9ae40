"""One caller that tries to start many calls waiting for a person, on each transport of a real
``foldkit-agent serve`` of :mod:`tests.support.waiting_app`, over raw HTTP.

Each holder below tries one call of ``note`` (``confirm=True``) per :meth:`attempt` and reports
what the server answered: a :class:`Waiting` handle (a person is being asked: a handshake-era
``elicitation/create`` on the request's stream, a 2026-era ``InputRequiredResult``, an A2A task
in ``INPUT_REQUIRED``, a page call parked with ``202``) or the text of the refusal. Its
:meth:`let_go` ends one waiting call the way its transport lets a caller give up, and returns
the server's last word on it:

==================  ========================================  ================================
holder              lets go by                                the server's last word
==================  ========================================  ================================
``HandshakeMcp``    ``notifications/cancelled``               ``REQUEST_CANCELLED`` on the
                                                              call's own stream
``ModernMcp``       answering the elicitation ``cancel``      the call's declined result
``A2a``             ``CancelTask``                            the task, ``CANCELED``
``Page``            ``POST approvals/<id>`` ``{"approve":     the call's declined result
                    false}``                                  (``GET calls/<id>``)
==================  ========================================  ================================

:func:`attempt_all` makes the attempts concurrently within a bound on client connections.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import uuid
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

import anyio
import h11
from mcp_types.version import LATEST_HANDSHAKE_VERSION

from foldkit_agent.adapters.a2a import EXTENSION_URI
from foldkit_agent.adapters.mcp.approval import INPUT_KEY
from foldkit_agent.adapters.web.csrf import CSRF_HEADER, SESSION_COOKIE

MODERN = "2026-07-28"
CAN_ELICIT: dict[str, Any] = {"elicitation": {"form": {}}}
MODERN_META: dict[str, Any] = {
    "io.modelcontextprotocol/protocolVersion": MODERN,
    "io.modelcontextprotocol/clientInfo": {"name": "holder", "version": "1"},
    "io.modelcontextprotocol/clientCapabilities": CAN_ELICIT,
}
NOTE = {"text": "hold"}
"""The input of every ``note`` attempted: the Message it would send changes only the note."""
DECLINE = {"approve": False}
"""The page person's answer to a question: no."""


@dataclass
class Reply:
    """One HTTP answer: its status, headers (names in lower case) and body."""

    status: int
    headers: dict[str, str]
    body: bytes

    def json(self) -> Any:
        return json.loads(self.body)

    @property
    def text(self) -> str:
        return self.body.decode(errors="replace")


class _Connection:
    """One keep-alive HTTP/1.1 connection (h11 over asyncio streams)."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.reader = reader
        self.writer = writer
        self.h11 = h11.Connection(h11.CLIENT)

    async def send(self, request: h11.Request, body: bytes) -> None:
        data = self.h11.send(request) or b""
        data += (self.h11.send(h11.Data(data=body)) or b"") if body else b""
        self.writer.write(data + (self.h11.send(h11.EndOfMessage()) or b""))
        await self.writer.drain()

    async def event(self) -> Any:
        while (event := self.h11.next_event()) is h11.NEED_DATA:
            self.h11.receive_data(await self.reader.read(65536))
        return event

    async def head(self) -> tuple[int, dict[str, str]]:
        event = await self.event()
        assert isinstance(event, h11.Response), event
        return event.status_code, {k.decode(): v.decode() for k, v in event.headers}

    async def chunks(self) -> AsyncIterator[bytes]:
        """The body, as it comes."""
        while isinstance(event := await self.event(), h11.Data):
            yield bytes(event.data)
        assert isinstance(event, h11.EndOfMessage), event

    def reusable(self) -> bool:
        if self.h11.our_state is h11.DONE and self.h11.their_state is h11.DONE:
            self.h11.start_next_cycle()
            return True
        return False

    def close(self) -> None:
        self.writer.close()


class Http:
    """At most ``size`` keep-alive connections to ``origin`` (far cheaper per request than a
    full client, so a thousand attempts cost the server, not the test)."""

    def __init__(self, origin: str, size: int) -> None:
        self.origin = origin
        host, port = origin.removeprefix("http://").split(":")
        self.address = (host, int(port))
        self.idle: list[_Connection] = []
        self.room = anyio.Semaphore(size)

    async def _connection(self) -> _Connection:
        if self.idle:
            return self.idle.pop()
        return _Connection(*await asyncio.open_connection(*self.address))

    def _request(self, method: str, path: str, headers: dict[str, str], body: bytes) -> Any:
        fields = [("Host", f"{self.address[0]}:{self.address[1]}"), *headers.items()]
        fields.append(("Content-Length", str(len(body))))
        return h11.Request(method=method, target=path, headers=fields)

    async def request(
        self, method: str, path: str, headers: dict[str, str], payload: Any = None
    ) -> Reply:
        """One request (``payload`` as its JSON body), its whole answer."""
        body = b"" if payload is None else json.dumps(payload).encode()
        async with self.room:
            conn = await self._connection()
            try:
                await conn.send(self._request(method, path, headers, body), body)
                status, got = await conn.head()
                reply = Reply(status, got, b"".join([c async for c in conn.chunks()]))
            except BaseException:
                conn.close()
                raise
            (self.idle.append if conn.reusable() else _close)(conn)
            return reply

    async def stream(
        self, method: str, path: str, headers: dict[str, str], payload: Any = None
    ) -> Stream:
        """A request whose answer is read as it comes; it holds its connection until
        :meth:`Stream.close`."""
        body = b"" if payload is None else json.dumps(payload).encode()
        await self.room.acquire()
        conn = await self._connection()
        await conn.send(self._request(method, path, headers, body), body)
        status, got = await conn.head()
        return Stream(self, conn, status, got)

    def close(self) -> None:
        for conn in self.idle:
            conn.close()
        self.idle.clear()


def _close(conn: _Connection) -> None:
    conn.close()


class Stream:
    """A streamed answer: :meth:`messages` reads its server-sent events as they come."""

    def __init__(self, http: Http, conn: _Connection, status: int, headers: dict[str, str]):
        self.http = http
        self.conn = conn
        self.status = status
        self.headers = headers
        self._body = conn.chunks()
        self._buffer = ""
        self._closed = False

    async def message(self) -> dict[str, Any]:
        """The next JSON-RPC message of the stream (priming events skipped)."""
        while True:
            while "\n" in self._buffer:
                line, self._buffer = self._buffer.split("\n", 1)
                if line.startswith("data:") and line[5:].strip().startswith("{"):
                    return json.loads(line[5:])
            chunk = await anext(self._body, None)
            assert chunk is not None, "the stream ended without another message"
            self._buffer += chunk.decode()

    def drop(self) -> None:
        """Close the stream's connection, without reading the rest."""
        if not self._closed:
            self._closed = True
            self.conn.close()
            self.http.room.release()

    async def close(self) -> None:
        """Read the stream to its end and give its connection back."""
        if self._closed:
            return
        self._closed = True
        try:
            async for _chunk in self._body:
                pass
            (self.http.idle.append if self.conn.reusable() else _close)(self.conn)
        except BaseException:
            self.conn.close()
            raise
        finally:
            self.http.room.release()


@dataclass
class Waiting:
    """One call the server put to a person: what :meth:`Holder.let_go` needs to end it."""

    key: Any
    stream: Stream | None = None


class Holder(Protocol):
    """A caller on one transport, trying calls that wait for a person."""

    transport: str
    """``Invocation.transport`` of its calls, as the audit records it."""

    async def attempt(self, n: int) -> Waiting | str: ...

    async def let_go(self, waiting: Waiting) -> Any: ...


@dataclass
class Attempts:
    """What one caller got for its attempts: the calls waiting, and the refusals' texts."""

    waiting: list[Waiting] = field(default_factory=list[Waiting])
    refused: list[str] = field(default_factory=list[str])


async def attempt_all(holder: Holder, attempts: int) -> Attempts:
    """``holder.attempt(n)`` for every ``n < attempts``, all at once (over as many
    connections as the holder's :class:`Http` has)."""
    got = Attempts()

    failed: list[AssertionError] = []

    async def one(n: int) -> None:
        try:
            answer = await holder.attempt(n)
        except AssertionError as failure:  # one failure said once, not once per attempt
            failed.append(failure)
            return
        if isinstance(answer, str):
            got.refused.append(answer)
        else:
            got.waiting.append(answer)

    async with anyio.create_task_group() as tg:
        for n in range(attempts):
            tg.start_soon(one, n)
    if failed:
        raise AssertionError(f"{len(failed)} of {attempts} attempts failed, first: {failed[0]}")
    return got


def bearer(token: str | None) -> dict[str, str]:
    return {} if token is None else {"Authorization": f"Bearer {token}"}


def sse_messages(text: str) -> list[dict[str, Any]]:
    """The JSON-RPC messages of a JSON or server-sent-events body."""
    text = text.strip()
    if text.startswith("{"):
        return [json.loads(text)]
    return [json.loads(line[5:]) for line in text.splitlines() if line[5:].strip().startswith("{")]


def result_text(result: dict[str, Any]) -> str:
    """The text of an MCP ``CallToolResult`` (or of a page call's result, the same shape)."""
    return "".join(c.get("text", "") for c in result.get("content", []))


MCP_ACCEPT = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}


# -- MCP, handshake era: elicitation on the tools/call request's own stream --------------------


class HandshakeMcp:
    """One token on one handshake-era MCP session whose client declared elicitation."""

    transport = "mcp"

    def __init__(self, http: Http, token: str | None) -> None:
        self.http = http
        self.headers = {**bearer(token), **MCP_ACCEPT}
        self.ids = itertools.count(100)

    async def open(self) -> HandshakeMcp:
        """Initialize the session (with the ``elicitation`` capability)."""
        init = {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {
                "protocolVersion": LATEST_HANDSHAKE_VERSION,
                "capabilities": CAN_ELICIT,
                "clientInfo": {"name": "holder", "version": "1"},
            },
        }
        r = await self.http.request("POST", "/mcp", self.headers, init)
        assert r.status == 200, r.text
        self.headers["Mcp-Session-Id"] = r.headers["mcp-session-id"]
        self.headers["MCP-Protocol-Version"] = LATEST_HANDSHAKE_VERSION
        done = {"jsonrpc": "2.0", "method": "notifications/initialized"}
        r = await self.http.request("POST", "/mcp", self.headers, done)
        assert r.status == 202, r.text
        return self

    async def request(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        """One request answered at once (not a call that waits); its result."""
        body = {"jsonrpc": "2.0", "id": next(self.ids), "method": method, "params": params}
        r = await self.http.request("POST", "/mcp", self.headers, body)
        assert r.status == 200, r.text
        (answer,) = [m for m in sse_messages(r.text) if "id" in m]
        return answer["result"]

    async def attempt(self, n: int) -> Waiting | str:
        rid = next(self.ids)
        body = {
            "jsonrpc": "2.0",
            "id": rid,
            "method": "tools/call",
            "params": {"name": "note", "arguments": NOTE},
        }
        stream = await self.http.stream("POST", "/mcp", self.headers, body)
        assert stream.status == 200, stream.status
        message = await stream.message()
        if message.get("method") == "elicitation/create":  # put to the person; stays open
            return Waiting(rid, stream)
        await stream.close()
        assert message.get("id") == rid, message
        return result_text(message["result"])

    async def let_go(self, waiting: Waiting) -> Any:
        """Cancel the call; the server's answer on its stream once it ended."""
        assert waiting.stream is not None
        note = {
            "jsonrpc": "2.0",
            "method": "notifications/cancelled",
            "params": {"requestId": waiting.key, "reason": "the test lets go"},
        }
        r = await self.http.request("POST", "/mcp", self.headers, note)
        assert r.status == 202, r.text
        try:
            while "id" not in (message := await waiting.stream.message()):
                pass
            return message
        finally:
            await waiting.stream.close()


# -- MCP, 2026 era: InputRequiredResult, the call parked on the server ----------------------


class ModernMcp:
    """One token over 2026-era MCP (no session), declaring elicitation on every request."""

    transport = "mcp"

    def __init__(self, http: Http, token: str | None) -> None:
        self.http = http
        self.headers = {**bearer(token), **MCP_ACCEPT, "MCP-Protocol-Version": MODERN}

    async def post(self, method: str, params: dict[str, Any], name: str = "") -> dict[str, Any]:
        headers = {**self.headers, "Mcp-Method": method, **({"Mcp-Name": name} if name else {})}
        body = {
            "jsonrpc": "2.0",
            "id": 1,
            "method": method,
            "params": {**params, "_meta": MODERN_META},
        }
        r = await self.http.request("POST", "/mcp", headers, body)
        assert r.status == 200, r.text
        (answer,) = [m for m in sse_messages(r.text) if "id" in m]
        return answer["result"]

    async def call(self, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
        return await self.post("tools/call", {"name": name, "arguments": arguments}, name)

    async def attempt(self, n: int) -> Waiting | str:
        result = await self.call("note", NOTE)
        if result.get("resultType") == "input_required":
            assert INPUT_KEY in result["inputRequests"], result
            return Waiting(result["requestState"])
        return result_text(result)

    async def let_go(self, waiting: Waiting) -> Any:
        """Answer the person's question ``cancel``; the call's result."""
        params = {
            "name": "note",
            "arguments": NOTE,
            "requestState": waiting.key,
            "inputResponses": {INPUT_KEY: {"action": "cancel"}},
        }
        return await self.post("tools/call", params, "note")


# -- A2A: a task in INPUT_REQUIRED -------------------------------------------------------------


class A2a:
    """One token over A2A's JSON-RPC binding."""

    transport = "a2a"

    def __init__(self, http: Http, token: str | None) -> None:
        self.http = http
        self.headers = {**bearer(token), "A2A-Version": "1.0", "Content-Type": "application/json"}

    async def rpc(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        body = {"jsonrpc": "2.0", "id": 1, "method": method, "params": params}
        r = await self.http.request("POST", "/a2a/jsonrpc", self.headers, body)
        assert r.status == 200, r.text
        answer = r.json()
        assert "result" in answer, answer
        return answer["result"]

    async def send(self, skill: str, arguments: dict[str, Any]) -> dict[str, Any]:
        """``SendMessage`` of ``skill``; the task it answered with."""
        message = {
            "role": "ROLE_USER",
            "messageId": str(uuid.uuid4()),
            "parts": [{"data": arguments}],
            "extensions": [EXTENSION_URI],
        }
        params = {"message": message, "metadata": {EXTENSION_URI: {"skill": skill}}}
        return (await self.rpc("SendMessage", params))["task"]

    async def attempt(self, n: int) -> Waiting | str:
        task = await self.send("note", NOTE)
        if task["status"]["state"] == "TASK_STATE_INPUT_REQUIRED":
            return Waiting(task["id"])
        return task_text(task)

    async def let_go(self, waiting: Waiting) -> Any:
        """``CancelTask``; the task it answered with."""
        return await self.rpc("CancelTask", {"id": waiting.key})


def task_text(task: dict[str, Any]) -> str:
    """The state of an A2A task and the text of its status message."""
    parts = task["status"].get("message", {}).get("parts", [])
    return task["status"]["state"] + ": " + "".join(p.get("text", "") for p in parts)


# -- the page: a visitor with many sessions -----------------------------------------------------


class Page:
    """A page visitor cycling through ``sessions`` sessions: made-up session cookies of an
    anonymous visitor, or, with ``token`` (a server with ``--token``), as many sign-ins of the
    person of that token (``POST /console/sign-in``)."""

    transport = "webmcp"

    def __init__(self, http: Http, sessions: int, token: str | None = None) -> None:
        self.http = http
        self.sessions = [f"made-up-{n}-{uuid.uuid4().hex}" for n in range(sessions)]
        self.token = token
        self.tokens: dict[str, str] = {}
        self.cookies: dict[str, str] = {}
        self.signing_in = anyio.Lock()

    async def cookie(self, sid: str) -> dict[str, str]:
        """The cookie of session ``sid``: made up, or what signing in set."""
        if self.token is None:
            return {"Cookie": f"{SESSION_COOKIE}={sid}"}
        async with self.signing_in:  # once per session, however many attempts share it
            if sid not in self.cookies:
                headers = {"Origin": self.http.origin, "Content-Type": "application/json"}
                payload = {"token": self.token}
                r = await self.http.request("POST", "/console/sign-in", headers, payload)
                assert r.status == 200, r.text
                self.cookies[sid] = r.headers["set-cookie"].split(";")[0]
        return {"Cookie": self.cookies[sid]}

    async def headers(self, sid: str) -> dict[str, str]:
        """The headers of a page request in session ``sid`` (its CSRF token asked once)."""
        cookie = await self.cookie(sid)
        if sid not in self.tokens:
            r = await self.http.request("GET", "/agent/session", cookie)
            assert r.status == 200, r.text
            self.tokens[sid] = r.json()["csrfToken"]
        return {**cookie, CSRF_HEADER: self.tokens[sid], "Origin": self.http.origin}

    async def invoke(self, sid: str, name: str, arguments: dict[str, Any]) -> Reply:
        headers = {**await self.headers(sid), "Content-Type": "application/json"}
        return await self.http.request("POST", f"/agent/invoke/{name}", headers, arguments)

    async def attempt(self, n: int) -> Waiting | str:
        sid = self.sessions[n % len(self.sessions)]
        r: Reply | None = None
        with anyio.move_on_after(30):
            r = await self.invoke(sid, "note", NOTE)
        assert r is not None, "the page call was neither answered nor parked: it holds on"
        if r.status == 202:  # parked: the person in the page is asked
            return Waiting((sid, r.json()["structuredContent"]["call"]))
        assert r.status == 200, r.text
        return result_text(r.json())

    async def let_go(self, waiting: Waiting) -> Any:
        """Decline on the page; once the session's events say the call ended, its answer
        (``GET calls/<id>``)."""
        sid, key = waiting.key
        headers = {**await self.headers(sid), "Content-Type": "application/json"}
        events = await self.http.stream("GET", "/agent/events", headers)
        try:
            assert events.status == 200, events.status
            r = await self.http.request("POST", f"/agent/approvals/{key}", headers, DECLINE)
            assert r.status == 200, r.text
            while (await events.message()).get("id") != key:  # the `ended` event names it
                pass
        finally:
            events.drop()  # an events stream never ends by itself
        r = await self.http.request("GET", f"/agent/calls/{key}", headers)
        assert r.status == 200, r.text
        return r.json()


def audit_entries(path: Any) -> list[dict[str, Any]]:
    """Every entry a ``--audit jsonl:PATH`` sink wrote."""
    with open(path, encoding="utf-8") as lines:
        return [json.loads(line) for line in lines if line.strip()]


def of(entries: Sequence[dict[str, Any]], **fields: Any) -> list[dict[str, Any]]:
    """The entries whose ``fields`` have those values."""
    return [e for e in entries if all(e.get(k) == v for k, v in fields.items())]
