"""The guard's five steps, in order, on a toy app: what each refuses and what it costs."""

from __future__ import annotations

import json
from typing import Any

import anyio
import pytest
from starlette.applications import Starlette
from starlette.responses import JSONResponse
from starlette.routing import Mount
from starlette.types import Receive, Scope, Send

from foldkit_agent.edge import guard as guard_module
from foldkit_agent.edge.guard import (
    BODY_KEY,
    HOST_REFUSAL,
    EdgeGuard,
    Rules,
    plain_error,
)
from foldkit_agent.edge.hosts import HostPolicy
from foldkit_agent.edge.limits import PREAUTH_DRAIN
from foldkit_agent.edge.wire import WireError, loads_strict
from tests.support.asgi import exchange
from tests.support.raw_http import post, write_all_then_read
from tests.support.serving import served

LIMIT = 1024
TOKEN = "Bearer good-token"
JSON = {"host": "127.0.0.1:8000", "content-type": "application/json", "authorization": TOKEN}


class Inner:
    """The app behind the guard: records what reached it and echoes the parsed body."""

    def __init__(self) -> None:
        self.calls = 0

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        self.calls += 1
        raw = b""
        while True:
            message = await receive()
            raw += message.get("body", b"")
            if not message.get("more_body", False):
                break
        await JSONResponse({"parsed": scope.get(BODY_KEY), "raw": raw.decode()})(
            scope, receive, send
        )


async def authenticate(scope: Scope, _rules: Rules) -> WireError | None:
    headers = dict(scope["headers"])
    if headers.get(b"authorization") == TOKEN.encode():
        return None
    return WireError(401, "unauthenticated", "Send the token.", {"WWW-Authenticate": "Bearer"})


ANY_ROUTE = Rules()


def guarded(
    rules: Rules = ANY_ROUTE, *, refusals: list[tuple[Rules, WireError, bool]] | None = None
) -> tuple[EdgeGuard, Inner]:
    inner = Inner()

    async def on_refusal(_scope: Scope, r: Rules, err: WireError, authenticated: bool) -> None:
        if refusals is not None:
            refusals.append((r, err, authenticated))

    guard = EdgeGuard(
        inner,
        hosts=HostPolicy(),
        classify=rules,
        max_body=LIMIT,
        authenticate=authenticate,
        on_refusal=on_refusal,
        allowed_origins=["https://app.example"],
    )
    return guard, inner


@pytest.fixture
def parses(monkeypatch: pytest.MonkeyPatch) -> list[bytes]:
    """Every body the guard hands to the strict parser."""
    seen: list[bytes] = []

    def spy(data: bytes | str, **kw: Any) -> Any:
        seen.append(data if isinstance(data, bytes) else data.encode())
        return loads_strict(data, **kw)

    monkeypatch.setattr(guard_module, "loads_strict", spy)
    return seen


async def test_a_request_that_passes_every_step_reaches_the_app_with_its_parsed_body(
    parses: list[bytes],
) -> None:
    guard, inner = guarded()
    r = await exchange(guard, headers=JSON, chunks=[b'{"title": ', b'"Milk"}'])
    assert r.status == 200
    assert r.json() == {"parsed": {"title": "Milk"}, "raw": '{"title": "Milk"}'}
    assert inner.calls == 1
    assert parses == [b'{"title": "Milk"}']


# -- the order of the steps -------------------------------------------------------------------

# Each request fails every step from the one named on: the first must answer it.
BAD_HOST = {"host": "evil.example"}
BAD_ORIGIN = {"origin": "http://evil.example"}
NO_TOKEN = {"authorization": "Bearer wrong"}
NOT_JSON = {"content-type": "text/plain"}
TOO_LONG = {"content-length": str(LIMIT + 1)}
ORDER = [
    ("host", {**BAD_HOST, **BAD_ORIGIN, **NO_TOKEN, **NOT_JSON, **TOO_LONG}, 421),
    ("origin", {**BAD_ORIGIN, **NO_TOKEN, **NOT_JSON, **TOO_LONG}, 403),
    ("authentication", {**NO_TOKEN, **NOT_JSON, **TOO_LONG}, 401),
    ("content type", {**NOT_JSON, **TOO_LONG}, 415),
    ("length", TOO_LONG, 413),
]


@pytest.mark.parametrize(("step", "bad", "status"), ORDER, ids=[s for s, _, _ in ORDER])
async def test_the_first_failing_step_answers_and_nothing_is_parsed(
    step: str, bad: dict[str, str], status: int, parses: list[bytes]
) -> None:
    guard, inner = guarded()
    body = b'{"title": 1e400}'
    r = await exchange(guard, headers={**JSON, **bad}, chunks=[body])
    assert r.status == status, step
    assert inner.calls == 0
    assert parses == []


async def test_strict_json_is_the_last_step() -> None:
    guard, inner = guarded()
    r = await exchange(guard, headers=JSON, chunks=[b'{"title": 1e400}'])
    assert r.status == 400
    assert r.json()["error"]["message"] == (
        "The body holds a number too large to represent (it overflows to infinity)."
    )
    assert inner.calls == 0


async def test_an_unauthenticated_4_mib_body_is_never_read_nor_parsed(
    parses: list[bytes],
) -> None:
    guard, inner = guarded()
    big = b'{"title": "' + b"x" * (4 * 1024 * 1024) + b'"}'
    r = await exchange(
        guard,
        headers={**JSON, "authorization": "Bearer wrong", "content-length": str(len(big))},
        chunks=[big],
    )
    assert r.status == 401
    assert r.headers["www-authenticate"] == "Bearer"
    assert r.headers["connection"] == "close"  # larger than the drain budget: not read at all
    assert (r.receives, r.bytes_read) == (0, 0)
    assert parses == []
    assert inner.calls == 0


async def test_a_cross_site_simple_request_is_refused_before_its_body_is_read(
    parses: list[bytes],
) -> None:
    guard, _inner = guarded()
    body = b"x" * (4 * 1024 * 1024)
    headers = {
        "host": "127.0.0.1:8000",
        "origin": "https://evil.example",
        "content-type": "text/plain",
        "content-length": str(len(body)),
    }
    r = await exchange(guard, headers=headers, chunks=[body])
    assert r.status == 403
    assert r.bytes_read == 0
    assert parses == []


# -- step 1: one Host answer --------------------------------------------------------------------


@pytest.mark.parametrize(
    "host", ["evil.example", "127.0.0.1:8766@evil.example", "127.0.0.1:80x", "[::1", None]
)
async def test_a_refused_host_gets_421_and_the_one_body_whatever_the_route_renders(
    host: str | None,
) -> None:
    def render(_scope: Scope, _rules: Rules, err: WireError) -> JSONResponse:
        return JSONResponse({"jsonrpc": "2.0", "error": err.text}, err.status)

    guard = EdgeGuard(Inner(), hosts=HostPolicy(), classify=Rules(), max_body=LIMIT, render=render)
    headers = {k: v for k, v in JSON.items() if k != "host"}
    if host is not None:
        headers["host"] = host
    r = await exchange(guard, headers=headers, chunks=[b"{}"])
    assert r.status == 421
    assert r.json() == HOST_REFUSAL


@pytest.mark.parametrize("host", ["127.0.0.1", "LOCALHOST:8766", "[::1]:8766", "localhost"])
async def test_every_loopback_spelling_passes_step_1(host: str) -> None:
    guard, _inner = guarded()
    r = await exchange(guard, headers={**JSON, "host": host}, chunks=[b"{}"])
    assert r.status == 200


# -- step 2: Origin -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("origin", "site", "status"),
    [
        ("http://localhost:5173", None, 200),  # another loopback origin: an API accepts it
        ("http://evil.example", None, 403),
        ("null", None, 403),
        (None, "cross-site", 403),
        (None, "same-site", 200),
        (None, None, 200),
    ],
)
async def test_an_api_route_accepts_origins_that_name_an_accepted_host(
    origin: str | None, site: str | None, status: int
) -> None:
    guard, _inner = guarded(Rules(origin="api"))
    headers = dict(JSON)
    if origin is not None:
        headers["origin"] = origin
    if site is not None:
        headers["sec-fetch-site"] = site
    assert (await exchange(guard, headers=headers, chunks=[b"{}"])).status == status


@pytest.mark.parametrize(
    ("origin", "site", "status"),
    [
        ("http://127.0.0.1:8000", None, 200),  # the page's own origin
        ("http://127.0.0.1", None, 403),  # another port is another origin
        ("http://localhost:8000", None, 403),
        ("https://app.example", None, 200),  # allowed_origins
        ("http://evil.example", None, 403),
        (None, "same-origin", 200),
        (None, "none", 200),
        (None, "same-site", 403),
        (None, "cross-site", 403),
    ],
)
async def test_a_page_route_accepts_only_its_own_origin_and_allowed_ones(
    origin: str | None, site: str | None, status: int
) -> None:
    guard, _inner = guarded(Rules(origin="page"))
    headers = dict(JSON)
    if origin is not None:
        headers["origin"] = origin
    if site is not None:
        headers["sec-fetch-site"] = site
    assert (await exchange(guard, headers=headers, chunks=[b"{}"])).status == status


# -- step 4: length, as declared and as streamed --------------------------------------------------


async def test_a_declared_length_over_the_limit_is_413_before_reading(
    parses: list[bytes],
) -> None:
    guard, _inner = guarded()
    body = b"[" + b"0," * (3 * LIMIT) + b"0]"
    r = await exchange(guard, headers={**JSON, "content-length": str(len(body))}, chunks=[body])
    assert r.status == 413
    assert r.json()["error"]["message"] == "The body is larger than the 1024-byte limit."
    assert r.bytes_read == 0  # over twice the limit: not drained either
    assert parses == []


async def test_a_chunked_body_is_counted_as_it_streams_and_stopped_at_the_limit(
    parses: list[bytes],
) -> None:
    guard, inner = guarded()
    chunks = [b"[" + b"0," * 100] * 100  # about 20 KiB, with no Content-Length
    r = await exchange(guard, headers=JSON, chunks=chunks)
    assert r.status == 413
    assert r.bytes_read <= 2 * LIMIT + 201  # twice the limit (the drain budget), one chunk more
    assert r.headers["connection"] == "close"
    assert parses == []
    assert inner.calls == 0


async def test_a_body_just_over_the_limit_is_drained_so_its_413_can_be_read() -> None:
    guard, _inner = guarded()
    body = b'"' + b"x" * (LIMIT + 100) + b'"'
    r = await exchange(guard, headers={**JSON, "content-length": str(len(body))}, chunks=[body])
    assert r.status == 413
    assert r.bytes_read == len(body)
    assert "connection" not in r.headers  # all of it was received: the connection can stay


async def test_a_client_expecting_100_continue_is_answered_without_reading() -> None:
    guard, _inner = guarded()
    headers = {**JSON, "authorization": "Bearer wrong", "expect": "100-continue"}
    r = await exchange(guard, headers={**headers, "content-length": "10"}, chunks=[b"0" * 10])
    assert r.status == 401
    assert r.receives == 0
    assert r.headers["connection"] == "close"


async def test_a_small_refused_body_is_drained_within_the_preauth_budget() -> None:
    guard, _inner = guarded()
    body = b"x" * (PREAUTH_DRAIN // 2)
    headers = {**JSON, "authorization": "Bearer wrong", "content-length": str(len(body))}
    r = await exchange(guard, headers=headers, chunks=[body[:100], body[100:]])
    assert r.status == 401
    assert r.bytes_read == len(body)


@pytest.mark.parametrize("length", ["ten", "-1", "1e3", "0x10"])
async def test_a_content_length_that_is_not_a_number_is_400(length: str) -> None:
    guard, _inner = guarded()
    r = await exchange(guard, headers={**JSON, "content-length": length}, chunks=[b"{}"])
    assert r.status == 400


# -- step 5 and the rules ------------------------------------------------------------------------


async def test_an_empty_body_is_refused_unless_the_route_accepts_it() -> None:
    guard, _inner = guarded()
    assert (await exchange(guard, headers=JSON, chunks=[b"  "])).status == 400
    guard, _inner = guarded(Rules(empty_ok=True))
    r = await exchange(guard, headers=JSON, chunks=[b""])
    assert r.status == 200
    assert r.json()["parsed"] is None


async def test_a_jsonrpc_route_takes_one_jsonrpc_message() -> None:
    guard, _inner = guarded(Rules(jsonrpc=True))
    assert (await exchange(guard, headers=JSON, chunks=[b"[]"])).status == 400
    ping = b'{"jsonrpc": "2.0", "id": 1, "method": "ping"}'
    assert (await exchange(guard, headers=JSON, chunks=[ping])).status == 200


async def test_a_route_without_body_rules_and_a_get_skip_steps_4_and_5(
    parses: list[bytes],
) -> None:
    guard, inner = guarded(Rules(body=False))
    r = await exchange(guard, headers={**JSON, "content-type": "text/plain"}, chunks=[b"raw"])
    assert r.json() == {"parsed": None, "raw": "raw"}
    guard, inner = guarded()
    assert (await exchange(guard, "GET", headers=JSON)).status == 200
    assert inner.calls == 1
    assert parses == []


async def test_every_refusal_is_reported_once_with_the_routes_rules() -> None:
    refusals: list[tuple[Rules, WireError, bool]] = []
    rules = Rules(capability="create_todo")
    guard, _inner = guarded(rules, refusals=refusals)
    await exchange(guard, headers={**JSON, "host": "evil.example"}, chunks=[b"{}"])
    await exchange(guard, headers={**JSON, "authorization": "x"}, chunks=[b"{}"])
    await exchange(guard, headers=JSON, chunks=[b'{"title": 1e400}'])
    await exchange(guard, headers=JSON, chunks=[b'{"title": "ok"}'])
    assert [(r.capability, e.status, e.code, known) for r, e, known in refusals] == [
        ("create_todo", 421, "host", False),
        ("create_todo", 401, "unauthenticated", False),
        ("create_todo", 400, "malformed", True),
    ]


async def test_a_failing_refusal_hook_does_not_stop_the_answer() -> None:
    async def broken(_scope: Scope, _rules: Rules, _err: WireError, _known: bool) -> None:
        raise RuntimeError("audit down")

    guard = EdgeGuard(
        Inner(), hosts=HostPolicy(), classify=Rules(), max_body=LIMIT, on_refusal=broken
    )
    r = await exchange(guard, headers=JSON, chunks=[b"{"])
    assert r.status == 400


def test_plain_error_carries_status_code_and_headers() -> None:
    err = WireError(401, "unauthenticated", "Send the token.", {"WWW-Authenticate": "Bearer"})
    response = plain_error({}, Rules(), err)
    assert response.status_code == 401
    assert response.headers["www-authenticate"] == "Bearer"
    assert json.loads(bytes(response.body)) == {
        "error": {"code": 401, "status": "unauthenticated", "message": "Send the token."}
    }


def test_a_limit_under_two_bytes_is_a_mistake() -> None:
    with pytest.raises(ValueError, match="max_body"):
        EdgeGuard(Inner(), hosts=HostPolicy(), classify=Rules(), max_body=1)


# -- over real sockets ----------------------------------------------------------------------------


BIG = 4 * 1024 * 1024  # the MCP limit: more than the kernel buffers while nobody reads


@pytest.mark.parametrize(
    ("token", "size", "status"),
    [
        (TOKEN, BIG + 1, b"413"),
        (TOKEN, 2 * BIG, b"413"),
        ("Bearer wrong", PREAUTH_DRAIN // 2, b"401"),
    ],
)
async def test_a_client_that_writes_its_whole_body_first_reads_the_refusal(
    token: str, size: int, status: bytes
) -> None:
    guard = EdgeGuard(
        Inner(), hosts=HostPolicy(), classify=Rules(), max_body=BIG, authenticate=authenticate
    )
    async with served(Starlette(routes=[Mount("/", app=guard)])) as url:
        port = int(url.rsplit(":", 1)[1])
        body = b'"' + b"x" * (size - 2) + b'"'
        headers = {"Content-Type": "application/json", "Authorization": token}
        answer = await anyio.to_thread.run_sync(
            write_all_then_read, port, post("/", port, headers, body)
        )
    assert answer.startswith(b"HTTP/1.1 " + status), answer[:200]
