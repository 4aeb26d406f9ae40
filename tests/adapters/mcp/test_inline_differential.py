"""A 2026-era ``tools/call`` or ``tools/list`` over :func:`http_app` gets the answer the SDK's
own session manager gives the same request: same status, content type and body bytes (each
invocation id, a process-wide counter, aside), and the same audit entries, whether our path
(``adapters/mcp/inline.py``) answered it, refused it with the SDK's checks, or left it to the
SDK.

Two runtimes of one app (``tests/support/inline_app.py``) get the same requests in the same
order: one behind :func:`http_app` (its guard, then ``InlineCalls``), one behind a bare
``StreamableHTTPSessionManager(json_response=True)`` of an identical server (for a request
that can emit nothing the SDK's streaming manager answers the same bytes). Requests come from
a corpus (valid calls, an unknown tool, bad arguments, a capability not available, one refused
by ``authorize``, wrong types, header mismatches, ``_meta`` variants, ids of each type) and
from hypothesis. ``InlineStats`` says what our path did: the corpus reaches its answers and
its refusals.
"""

from __future__ import annotations

import json
import re
from collections.abc import AsyncGenerator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any

import anyio
import httpx
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from mcp.server.auth.provider import AccessToken
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
from mcp.server.transport_security import TransportSecuritySettings
from starlette.types import Receive, Scope, Send

from foldkit_agent.adapters.mcp import StaticTokenVerifier, http_app, mcp_server
from tests.support.hostile import MODERN_META, asgi_client
from tests.support.inline_app import runtime

_BASE = "http://127.0.0.1:8000"


@dataclass(frozen=True)
class Req:
    """One POST: its JSON body and headers."""

    body: Any
    headers: dict[str, str]


def call(
    ident: Any,
    name: Any,
    arguments: Any = None,
    *,
    meta: Any = None,
    header_name: str | None = None,
    extra_headers: dict[str, str] | None = None,
    omit_arguments: bool = False,
) -> Req:
    params: dict[str, Any] = {"name": name, "_meta": dict(MODERN_META) if meta is None else meta}
    if not omit_arguments:
        params["arguments"] = arguments
    headers = {
        "Accept": "application/json, text/event-stream",
        "Content-Type": "application/json",
        "MCP-Protocol-Version": "2026-07-28",
        "Mcp-Method": "tools/call",
    }
    named = header_name if header_name is not None else name if isinstance(name, str) else None
    if named is not None:
        headers["Mcp-Name"] = named
    headers.update(extra_headers or {})
    return Req({"jsonrpc": "2.0", "id": ident, "method": "tools/call", "params": params}, headers)


CORPUS: list[Req] = [
    call(1, "add", {"by": 2}),
    call("a", "add", {"by": 3, "note": "é ☃ \U0001f600"}),  # not ASCII: escaped as the SDK does
    call(0, "add", {"by": 1, "note": None}),
    call(-7, "reset", {}),  # available now (the count is above zero)
    call(2**53, "reset", {}),  # not available any more
    call(3, "no_such_tool", {}),
    call(4, "add", {"by": "two"}),  # bad arguments
    call(5, "add", {}),  # missing argument
    call(6, "add", {"by": 1, "extra": True}),
    call(7, "guarded_add", {"by": 1}),  # refused by authorize (nobody signed in)
    call(8, "add", ["not", "an", "object"]),  # wrong type for arguments
    call(9, "add", "text"),
    call(10, "add", omit_arguments=True),
    call(11, 42, {"by": 1}),  # the name is not a string
    call(12, "add", {"by": 1}, header_name="reset"),  # Mcp-Name disagrees with the body
    call(13, "add", {"by": 1}, extra_headers={"Mcp-Param-By": "1"}),
    call(
        14,
        "add",
        {"by": 1},
        meta={**MODERN_META, "io.modelcontextprotocol/protocolVersion": "2099-01-01"},
    ),
    call(15, "add", {"by": 1}, meta={"io.modelcontextprotocol/protocolVersion": "2026-07-28"}),
    call(16, "add", {"by": 1}, meta={**MODERN_META, "com.example/trace": {"x": [1, 2]}}),
    call(17, "add", {"by": 1}, meta="not an object"),
    call("", "add", {"by": 1}),
    Req({**call(19, "add", {"by": 1}).body, "extra": 1}, call(19, "add").headers),
]

EDGE_REFUSED: list[Req] = [  # the edge guard answers these before MCP sees them, as before
    call(True, "add", {"by": 1}),  # a bool is no JSON-RPC id
    call(1.5, "add", {"by": 1}),
    call(None, "add", {"by": 1}),
    Req({**call(18, "add", {"by": 1}).body, "jsonrpc": "1.0"}, call(18, "add").headers),
]


_servers: list[Any] = []  # the two servers both() built last (ours, the SDK's)


@asynccontextmanager
async def both() -> AsyncGenerator[tuple[httpx.AsyncClient, httpx.AsyncClient, Any, Any, Any]]:
    """``(ours, sdk's, our runtime, its runtime, our InlineStats)``, both serving."""
    async with runtime() as ours_rt, runtime() as sdk_rt:
        app = http_app(ours_rt, name="inline", version="1")
        server = mcp_server(sdk_rt, name="inline", version="1")
        _servers[:] = [app.state.mcp_server, server]
        manager = StreamableHTTPSessionManager(
            app=server,
            json_response=True,
            stateless=True,
            security_settings=TransportSecuritySettings(enable_dns_rebinding_protection=False),
        )

        async def sdk_app(scope: Scope, receive: Receive, send: Send) -> None:
            await manager.handle_request(scope, receive, send)

        async with (
            manager.run(),
            asgi_client(app, _BASE) as ours,
            httpx.AsyncClient(
                transport=httpx.ASGITransport(app=sdk_app), base_url=_BASE, timeout=30
            ) as sdk,
        ):
            yield ours, sdk, ours_rt, sdk_rt, app.state.mcp_inline


_INVOCATION = re.compile(rb'(invocation_id\\?":\\?")[0-9a-f]+-[0-9a-f]+')


def unnumbered(body: bytes) -> bytes:
    """``body`` with each invocation id (a process-wide counter) made the same."""
    return _INVOCATION.sub(rb"\1<id>", body)


def audited(rt: Any) -> list[tuple[Any, ...]]:
    return [
        (e.transport, e.capability, e.tag, e.principal, e.decision, e.outcome, e.input, e.approval)
        for e in rt.audit.entries()
    ]


async def same_answers(requests: list[Req]) -> Any:
    async with both() as (ours, sdk, ours_rt, sdk_rt, stats):
        for req in requests:
            content = json.dumps(req.body).encode()
            mine = await ours.post("/mcp", content=content, headers=req.headers)
            theirs = await sdk.post("/mcp", content=content, headers=req.headers)
            assert mine.status_code == theirs.status_code, req
            assert mine.headers["content-type"] == theirs.headers["content-type"], req
            assert unnumbered(mine.content) == unnumbered(theirs.content), req
        assert audited(ours_rt) == audited(sdk_rt)
        assert ours_rt.context() == sdk_rt.context()
        return stats


async def test_every_answer_of_the_corpus_is_the_sdks_own() -> None:
    stats = await same_answers(CORPUS)
    assert stats.answered >= 12  # the happy path and the SDK's own refusals in the result
    assert stats.refused >= 3  # header mismatches: the SDK's checks, on our path


async def test_an_envelope_the_edge_refuses_reaches_neither_path() -> None:
    async with both() as (ours, _sdk, ours_rt, _sdk_rt, stats):
        for req in EDGE_REFUSED:
            answer = await ours.post("/mcp", content=json.dumps(req.body), headers=req.headers)
            assert answer.status_code == 400
            assert answer.json()["error"]["code"] == -32600
        assert (stats.answered, stats.refused) == (0, 0)
        assert ours_rt.context()["count"] == 0


async def test_a_valid_call_is_answered_by_our_path_with_the_sdks_bytes() -> None:
    async with both() as (ours, sdk, ours_rt, _sdk_rt, stats):
        req = call(41, "add", {"by": 5, "note": "milk"})
        content = json.dumps(req.body).encode()
        mine = await ours.post("/mcp", content=content, headers=req.headers)
        theirs = await sdk.post("/mcp", content=content, headers=req.headers)
        assert (stats.answered, stats.refused) == (1, 0)
        assert unnumbered(mine.content) == unnumbered(theirs.content)
        assert b"invocation_id" in mine.content
        assert mine.json()["result"]["structuredContent"]["status"] == "dispatched"
        assert ours_rt.context()["count"] == 5


_ids = st.one_of(st.integers(min_value=-(2**63), max_value=2**63), st.text(max_size=8))
_names = st.sampled_from(["add", "reset", "guarded_add", "no_such_tool", ""])
_scalars = st.one_of(
    st.integers(min_value=-1000, max_value=1000), st.text(max_size=12), st.none(), st.booleans()
)
_arguments = st.one_of(
    st.none(),
    st.fixed_dictionaries({"by": _scalars}, optional={"note": _scalars, "other": _scalars}),
    st.lists(_scalars, max_size=2),
    _scalars,
)
_meta = st.one_of(
    st.just(dict(MODERN_META)),
    st.fixed_dictionaries(
        {"io.modelcontextprotocol/protocolVersion": st.sampled_from(["2026-07-28", "2025-11-25"])},
        optional={
            "io.modelcontextprotocol/clientInfo": st.just({"name": "h", "version": "1"}),
            "io.modelcontextprotocol/clientCapabilities": st.just({}),
            "x/y": _scalars,
        },
    ),
)


@st.composite
def requests(draw: st.DrawFn) -> Req:
    name = draw(_names)
    header = draw(st.one_of(st.none(), _names))
    params_header = draw(st.one_of(st.none(), st.sampled_from(["1", "x", "=?base64?MQ==?="])))
    return call(
        draw(_ids),
        name,
        draw(_arguments),
        meta=draw(_meta),
        header_name=header,
        extra_headers={} if params_header is None else {"Mcp-Param-By": params_header},
    )


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(batch=st.lists(requests(), min_size=1, max_size=6))
def test_any_call_gets_the_sdks_answer_and_audit(batch: list[Req]) -> None:
    anyio.run(same_answers, batch)


async def test_a_call_answered_inline_sees_the_callers_verified_token() -> None:
    """``get_access_token()`` is the verified token on the inline path too: ``authorize``
    lets a signed-in caller through and refuses an anonymous one (the default credentials)."""
    token = AccessToken(token="t-1", client_id="c", scopes=[], subject="alice")
    async with runtime() as rt:
        app = http_app(
            rt, name="inline", version="1", token_verifier=StaticTokenVerifier({"t-1": token})
        )
        async with asgi_client(app, _BASE) as client:
            req = call(1, "guarded_add", {"by": 4})
            signed = {**req.headers, "Authorization": "Bearer t-1"}
            answer = await client.post("/mcp", json=req.body, headers=signed)
            assert answer.json()["result"]["structuredContent"]["status"] == "dispatched"
            assert app.state.mcp_inline.answered == 1
        assert rt.context()["count"] == 4
        (entry,) = rt.audit.entries()
        assert entry.decision == "dispatched"


_DECLARED = {
    "type": "object",
    "properties": {"by": {"type": "integer", "x-mcp-header": "By"}, "note": {"type": "string"}},
}


async def test_a_schema_that_declares_an_mcp_param_header_is_checked_as_the_sdk_checks_it() -> None:
    """With ``x-mcp-header`` on ``by`` (both servers' schema for ``add``), a call whose
    ``Mcp-Param-By`` agrees is answered inline, one that disagrees or lacks it gets the SDK's
    own refusal, on our path."""
    cases = [
        call(1, "add", {"by": 2}, extra_headers={"Mcp-Param-By": "2"}),
        call(2, "add", {"by": 2}, extra_headers={"Mcp-Param-By": "3"}),
        call(3, "add", {"by": 2}),
    ]
    async with both() as (ours, sdk, ours_rt, sdk_rt, stats):
        for server in _servers:
            server._foldkit_adapter.schemas["add"] = _DECLARED  # pyright: ignore[reportPrivateUsage, reportOptionalMemberAccess]
        for req in cases:
            content = json.dumps(req.body).encode()
            mine = await ours.post("/mcp", content=content, headers=req.headers)
            theirs = await sdk.post("/mcp", content=content, headers=req.headers)
            assert mine.status_code == theirs.status_code, req
            assert unnumbered(mine.content) == unnumbered(theirs.content), req
        assert (stats.answered, stats.refused) == (1, 2)
        assert audited(ours_rt) == audited(sdk_rt)


def listing(meta: Any, content_type: str = "application/json") -> Req:
    """A 2026-era ``tools/list`` with ``meta`` as its ``_meta``."""
    headers = {
        "Accept": "application/json, text/event-stream",
        "Content-Type": content_type,
        "MCP-Protocol-Version": "2026-07-28",
        "Mcp-Method": "tools/list",
    }
    body = {"jsonrpc": "2.0", "id": 5, "method": "tools/list", "params": {"_meta": meta}}
    return Req(body, headers)


async def same_listing(req: Req) -> int:
    """``req`` to our server once its list is kept (a plain ``tools/list`` first) and to the
    SDK's with nothing kept: the same status, content type and body. Returns how many times
    ours answered from kept bytes."""
    async with both() as (ours, sdk, _ours_rt, _sdk_rt, stats):
        plain = listing(dict(MODERN_META))
        primed = await ours.post("/mcp", content=json.dumps(plain.body), headers=plain.headers)
        assert primed.status_code == 200
        content = json.dumps(req.body).encode()
        mine = await ours.post("/mcp", content=content, headers=req.headers)
        theirs = await sdk.post("/mcp", content=content, headers=req.headers)
        assert mine.status_code == theirs.status_code, (req, mine.text[:200], theirs.text[:200])
        assert mine.headers.get("content-type") == theirs.headers.get("content-type"), req
        assert mine.content == theirs.content, req
        return stats.listed


_CLIENT_INFO = "io.modelcontextprotocol/clientInfo"
_CAPABILITIES = "io.modelcontextprotocol/clientCapabilities"
_LOG_LEVEL = "io.modelcontextprotocol/logLevel"

ODD_LISTINGS = [  # the issue 20 stranger's variants.py: kept 200 where the SDK says 400
    listing({**MODERN_META, _CLIENT_INFO: 7}),
    listing({**MODERN_META, _CLIENT_INFO: {"version": "1"}}),
    listing({**MODERN_META, _CAPABILITIES: 3}),
    listing({**MODERN_META, _CAPABILITIES: []}),
    listing({**MODERN_META, _CAPABILITIES: {"elicitation": "yes"}}),
    listing({**MODERN_META, _LOG_LEVEL: 42}),
    listing(dict(MODERN_META), "application/vnd.x+json"),
]


async def test_f20_a_kept_tools_list_refuses_the_meta_and_content_type_the_sdk_refuses() -> None:
    for req in ODD_LISTINGS:
        assert await same_listing(req) == 0  # none answered from kept bytes
    assert await same_listing(listing({**MODERN_META, _LOG_LEVEL: "debug"})) == 1


_meta_values = st.one_of(
    st.none(),
    st.integers(min_value=-5, max_value=50),
    st.text(max_size=6),
    st.lists(st.integers(max_value=3), max_size=2),
    st.fixed_dictionaries(
        {}, optional={"name": st.text(max_size=4), "version": st.text(max_size=4)}
    ),
    st.fixed_dictionaries(
        {}, optional={"elicitation": st.one_of(st.just({}), st.text(max_size=3))}
    ),
)
_listing_meta = st.fixed_dictionaries(
    {"io.modelcontextprotocol/protocolVersion": st.just("2026-07-28")},
    optional={
        _CLIENT_INFO: _meta_values,
        _CAPABILITIES: _meta_values,
        _LOG_LEVEL: st.one_of(st.sampled_from(["debug", "info", "error", "loud"]), _meta_values),
        "progressToken": st.one_of(st.text(max_size=3), st.integers(), st.floats(0, 1)),
        "com.example/x": _meta_values,
    },
)
_content_types = st.sampled_from(
    ["application/json", "application/json; charset=utf-8", "application/vnd.x+json"]
)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(meta=_listing_meta, content_type=_content_types)
def test_any_kept_tools_list_gets_the_sdks_answer(meta: dict[str, Any], content_type: str) -> None:
    anyio.run(same_listing, listing(meta, content_type))
