"""The edge guard on every route: MCP (both eras), A2A (JSON-RPC and HTTP+JSON), the page
surface and Agent Native answer each edge rule the same way (DESIGN §9).
"""

from __future__ import annotations

import json
from typing import Any

import anyio
import pytest

from foldkit_agent.edge import guard as guard_module
from foldkit_agent.edge.guard import HOST_REFUSAL
from foldkit_agent.edge.wire import loads_strict
from tests.support.edge_routes import ROUTE_IDS, ROUTES, RouteCase, serve_route
from tests.support.raw_http import post, write_all_then_read

pytestmark = pytest.mark.parametrize("route", ROUTES, ids=ROUTE_IDS)

OVERFLOW = "The body holds a number too large to represent (it overflows to infinity)."


@pytest.fixture
def parses(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The size of every body the edge hands to the strict parser."""
    seen: list[int] = []

    def spy(data: bytes | str, **kw: Any) -> Any:
        seen.append(len(data))
        return loads_strict(data, **kw)

    monkeypatch.setattr(guard_module, "loads_strict", spy)
    return seen


def error_text(route: RouteCase, body: Any) -> str:
    if route.jsonrpc:
        return body["error"]["message"]
    if "structuredContent" in body:
        return body["structuredContent"]["message"]
    return body["error"]["message"]


# -- step 1: Host ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "host", ["127.0.0.1", "LOCALHOST:8766", "[::1]", "[::1]:8766", "localhost", "Localhost:80"]
)
async def test_every_loopback_spelling_of_host_is_served(route: RouteCase, host: str) -> None:
    async with serve_route(route) as s:
        r = await s.post(route.ok_body, route.headers(Host=host))
        assert r.status_code == 200, r.text


@pytest.mark.parametrize(
    "host",
    [
        "127.0.0.1:8766@evil.example",
        "evil.example",
        "127.0.0.1.evil.example:8000",
        "127.0.0.1:8000 junk",
        "127.0.0.1:99999",
        "[::1",
    ],
)
async def test_a_foreign_or_malformed_host_gets_the_one_421_on_every_route(
    route: RouteCase, host: str, parses: list[int]
) -> None:
    async with serve_route(route) as s:
        r = await s.post(route.call('{"title": "a"}'), route.headers(Host=host))
        assert r.status_code == 421
        assert r.json() == HOST_REFUSAL
        assert s.running.applied == 0
    assert parses == []


# -- step 2: Origin ----------------------------------------------------------------------------


async def test_a_cross_site_simple_request_is_refused_before_its_body_is_read(
    route: RouteCase, parses: list[int]
) -> None:
    async with serve_route(route) as s:
        body = route.call('{"title": "' + "x" * (2 * 1024 * 1024) + '"}')
        headers = route.anonymous(Origin="https://evil.example")
        headers["Content-Type"] = "text/plain"
        r = await s.post(body, headers)
        assert r.status_code == 403
        assert s.running.applied == 0
    assert parses == []


# -- step 3: authentication --------------------------------------------------------------------


async def test_an_unauthenticated_4_mib_body_is_refused_without_being_parsed(
    route: RouteCase, parses: list[int]
) -> None:
    async with serve_route(route) as s:
        body = route.call('{"title": "' + "x" * (4 * 1024 * 1024) + '"}')
        r = await s.post(body, route.anonymous())
        assert r.status_code in (401, 403)  # the page: no CSRF token is 403
        assert s.running.applied == 0
    assert parses == []


# -- step 4: content type and length -------------------------------------------------------------


async def test_an_authenticated_non_json_body_is_415(route: RouteCase, parses: list[int]) -> None:
    async with serve_route(route) as s:
        r = await s.post(route.ok_body, route.headers(**{"Content-Type": "text/plain"}))
        assert r.status_code == 415
    assert parses == []


async def test_a_declared_length_over_the_limit_is_413_before_parsing(
    route: RouteCase, parses: list[int]
) -> None:
    async with serve_route(route) as s:
        body = route.call('{"title": "' + "x" * route.max_body + '"}')
        r = await s.post(body, route.headers())
        assert r.status_code == 413
        assert s.running.applied == 0
    assert parses == []


async def test_a_streamed_body_is_stopped_at_the_limit(route: RouteCase, parses: list[int]) -> None:
    async with serve_route(route) as s:
        body = route.call('{"title": "' + "x" * route.max_body + '"}')

        async def chunks() -> Any:
            for i in range(0, len(body), 16 * 1024):
                yield body[i : i + 16 * 1024]

        r = await s.http.post(route.path, content=chunks(), headers=route.headers())
        assert r.status_code == 413
    assert parses == []


# -- step 5: strict JSON -------------------------------------------------------------------------


@pytest.mark.parametrize("number", ["1e400", "-1e400"])
async def test_a_number_overflowing_to_infinity_is_a_clean_400_audited_where_named(
    route: RouteCase, number: str
) -> None:
    async with serve_route(route) as s:
        r = await s.post(route.call('{"title": ' + number + "}"), route.headers())
        assert r.status_code == 400
        body = r.json()
        assert error_text(route, body) == OVERFLOW
        if route.jsonrpc:
            assert body["error"]["code"] == -32700
        assert s.running.applied == 0
        entries = [(e.capability, e.decision, e.outcome, e.transport) for e in s.audited()]
    if route.names_capability:
        assert entries == [("create_todo", "refused", "AgentInvalidInputError", route.transport)]
    else:
        assert entries == []  # the skill or tool is named inside the body, which did not parse


@pytest.mark.parametrize(
    "args",
    [
        '{"title": NaN}',
        '{"title": "a", "title": "b"}',
        '{"title": "\\ud800"}',
        "[" * 101 + "]" * 101,
    ],
)
async def test_every_strict_json_rule_is_a_400_on_every_route(route: RouteCase, args: str) -> None:
    async with serve_route(route) as s:
        r = await s.post(route.call(args), route.headers())
        assert r.status_code == 400
        assert s.running.applied == 0


async def test_more_values_than_max_items_is_a_400(route: RouteCase) -> None:
    async with serve_route(route) as s:
        many = '{"title": [' + ",".join(["0"] * 10_001) + "]}"
        r = await s.post(route.call(many), route.headers())
        assert r.status_code in (400, 413)  # the page's 64 KiB limit may come first
        assert s.running.applied == 0


# -- over a real socket ----------------------------------------------------------------------------


async def test_a_client_that_writes_an_over_limit_body_first_reads_the_413(
    route: RouteCase,
) -> None:
    async with serve_route(route, over_socket=True) as s:
        port = int(s.origin.rsplit(":", 1)[1])
        body = route.call('{"title": "' + "x" * route.max_body + '"}')
        request = post(route.path, port, route.headers(), body)
        answer = await anyio.to_thread.run_sync(write_all_then_read, port, request)
    assert answer.startswith(b"HTTP/1.1 413"), answer[:300]
    assert json.loads(answer.split(b"\r\n\r\n", 1)[1])  # the refusal's body arrived whole
