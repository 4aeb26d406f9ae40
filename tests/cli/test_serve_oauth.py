"""``serve --auth-issuer URL --audience URL [--introspect URL]``: a real ``serve`` subprocess
is an OAuth 2.1 resource server of a real authorization server (Canaille on loopback).

The official MCP clients (Python and TypeScript) find the issuer from a bare 401, sign in
(authorization code with PKCE), call a tool, are refused a capability whose scope they lack
with that scope named, step up and call it. A2A takes the same tokens, refuses a skill whose
scope a token lacks naming it, and its card declares the issuer's OAuth 2.0 flow. A tenant may
be a claim of the token. No token, key set or introspection answer reaches the server's output
or its audit.
"""

from __future__ import annotations

import json
from typing import Any
from urllib.parse import urlsplit

import httpx
import pytest

from tests.support.issuer import RESOURCE_SECRET, Issuer
from tests.support.oauth_client import Browser, Wallet, signed_in_client
from tests.support.scoped_todo import WRITE
from tests.support.serving import Served, mcp_client, serving

TARGET = "tests.support.scoped_todo:scoped_todo"
SECRET_ENV = {"FOLDKIT_AGENT_CLIENT_SECRET": RESOURCE_SECRET}


def _port(issuer: Issuer) -> int:
    port = urlsplit(issuer.resource).port
    assert port is not None
    return port


def _flags(issuer: Issuer, *more: str) -> tuple[str, ...]:
    return ("--mcp", "http", "--auth-issuer", issuer.url, "--audience", issuer.resource, *more)


def _introspecting(issuer: Issuer) -> tuple[str, ...]:
    return _flags(issuer, "--introspect", issuer.introspect, "--auth-scope", "todos:read")


def _text(result: Any) -> str:
    return " ".join(getattr(c, "text", "") for c in result.content)


async def _said(server: Served) -> str:
    """Everything the stopped server wrote to its standard error."""
    assert server.proc.stderr is not None
    return "".join(server.said) + (await server.proc.stderr.read()).decode(errors="replace")


async def test_the_mcp_client_discovers_signs_in_is_refused_a_scope_and_steps_up(
    issuer: Issuer, tmp_path: Any
) -> None:
    audit = tmp_path / "audit.jsonl"
    wallet, browser = Wallet(issuer), Browser()
    flags = (*_introspecting(issuer), "--audit", f"jsonl:{audit}")
    async with serving(*flags, target=TARGET, port=_port(issuer), env=SECRET_ENV) as server:
        async with signed_in_client(issuer.resource, wallet, browser) as client:
            cleared = await client.call_tool("clear_selection", {})
            assert not cleared.is_error, _text(cleared)
            assert browser.asked == ["todos:read"]  # the 401's scope, nothing more
            created = await client.call_tool("create_todo", {"title": "Buy milk"})
    assert not created.is_error, _text(created)
    # the 403 named the scope; the client asked again for what it had and that
    assert len(browser.asked) == 2
    assert set(browser.asked[1].split()) >= {"todos:read", WRITE}
    assert WRITE not in wallet.issued[0].split()
    assert WRITE in wallet.issued[-1].split()
    entries = [json.loads(line) for line in audit.read_text().splitlines()]
    assert [(e["capability"], e["decision"]) for e in entries] == [
        ("clear_selection", "dispatched"),
        ("create_todo", "refused"),
        ("create_todo", "dispatched"),
    ]
    assert {e["principal"] for e in entries if e["decision"] == "dispatched"} == {"alice"}
    # no token (nor its claims, nor the issuer's answers) in what the server wrote
    assert wallet.tokens is not None
    written = await _said(server) + audit.read_text()
    assert "serving MCP at" in written
    for secret in (wallet.tokens.access_token, *wallet.access_tokens, '"active"', RESOURCE_SECRET):
        assert secret not in written


async def test_a_request_without_credentials_is_401_naming_the_metadata_and_no_error(
    issuer: Issuer,
) -> None:
    async with serving(*_introspecting(issuer), target=TARGET, port=_port(issuer), env=SECRET_ENV):
        async with httpx.AsyncClient() as http:
            bare = await http.post(issuer.resource, json={"jsonrpc": "2.0", "id": 1})
            bad = await http.post(
                issuer.resource,
                json={"jsonrpc": "2.0", "id": 1},
                headers={"Authorization": "Bearer not-a-token-of-the-issuer"},
            )
            where = bare.headers["www-authenticate"].split('resource_metadata="')[1][:-1]
            metadata = (await http.get(where)).json()
    assert bare.status_code == 401
    # RFC 6750 §3.1: no credentials, so no error code; where to sign in and what to ask for
    assert bare.headers["www-authenticate"] == (
        f'Bearer scope="todos:read", resource_metadata="{where}"'
    )
    assert where == f"http://127.0.0.1:{_port(issuer)}/.well-known/oauth-protected-resource/mcp"
    assert bad.status_code == 401
    assert bad.headers["www-authenticate"].startswith('Bearer error="invalid_token"')
    assert metadata["resource"] == issuer.resource
    assert metadata["authorization_servers"] == [issuer.url]
    assert metadata["scopes_supported"] == sorted({"todos:read", WRITE})


async def test_a_jwt_of_the_issuer_calls_a_tool_and_a_token_without_the_scope_is_403(
    issuer: Issuer,
) -> None:
    token = issuer.token("openid todos:read")
    async with serving(*_flags(issuer), target=TARGET, port=_port(issuer)) as server:
        async with mcp_client(issuer.resource, token) as client:
            cleared = await client.call_tool("clear_selection", {})
            refused = await _call_raw(issuer.resource, token, "create_todo")
    written = await _said(server)
    assert "stopped after serving" in written
    for secret in (token, token.split(".")[1], '"keys"', '"kid"'):
        assert secret not in written  # no token, claims or key set in what the server wrote
    assert not cleared.is_error, _text(cleared)
    assert refused.status_code == 403
    challenge = refused.headers["www-authenticate"]
    assert challenge.startswith('Bearer error="insufficient_scope"')
    assert WRITE in challenge.split('scope="')[1].split('"')[0].split()
    error = refused.json()
    assert error["id"] == 7
    assert WRITE in error["error"]["message"]
    assert "create_todo" in error["error"]["message"]


async def _call_raw(url: str, token: str, name: str) -> httpx.Response:
    body = {
        "jsonrpc": "2.0",
        "id": 7,
        "method": "tools/call",
        "params": {
            "name": name,
            "arguments": {"title": "x"},
            "_meta": {
                "io.modelcontextprotocol/protocolVersion": "2026-07-28",
                "io.modelcontextprotocol/clientCapabilities": {},
            },
        },
    }
    headers = {
        "Authorization": f"Bearer {token}",
        "Accept": "application/json, text/event-stream",
        "MCP-Protocol-Version": "2026-07-28",
        "Mcp-Method": "tools/call",
        "Mcp-Name": name,
    }
    async with httpx.AsyncClient() as http:
        return await http.post(url, json=body, headers=headers)


async def test_a2a_takes_the_issuers_tokens_checks_scopes_and_its_card_names_the_issuer(
    issuer: Issuer,
) -> None:
    from a2a.types import TaskState

    from tests.support.a2a_lab import skill_request
    from tests.support.serving import a2a_client

    token = issuer.token("openid todos:read")
    flags = (*_introspecting(issuer), "--a2a")
    async with serving(*flags, target=TARGET, port=_port(issuer), env=SECRET_ENV) as server:
        async with httpx.AsyncClient() as http:
            card = (await http.get(f"{server.origin}/.well-known/agent-card.json")).json()
            bare = await http.post(f"{server.origin}/a2a/jsonrpc", json={"jsonrpc": "2.0"})
            bad = await http.post(
                f"{server.origin}/a2a/jsonrpc",
                json={"jsonrpc": "2.0"},
                headers={"Authorization": "Bearer not-the-issuers"},
            )
        async with a2a_client(server.origin, token) as client:
            cleared = await _last_task(client, skill_request("clear_selection", {}))
            create = skill_request("create_todo", {"title": "Buy milk"})
            refused = await _last_task(client, create)
        async with a2a_client(server.origin, issuer.token(f"openid todos:read {WRITE}")) as client:
            created = await _last_task(client, skill_request("create_todo", {"title": "Milk"}))
    assert cleared.status.state == TaskState.TASK_STATE_COMPLETED
    assert refused.status.state == TaskState.TASK_STATE_REJECTED
    said = refused.status.message.parts[0].text
    assert "create_todo" in said
    assert repr(WRITE) in said
    assert created.status.state == TaskState.TASK_STATE_COMPLETED
    assert bare.status_code == 401
    assert bare.headers["www-authenticate"] == "Bearer"  # no credentials: no error code
    assert bad.status_code == 401
    assert bad.headers["www-authenticate"].startswith('Bearer error="invalid_token"')
    scheme = card["securitySchemes"]["foldkit"]["oauth2SecurityScheme"]
    assert scheme["oauth2MetadataUrl"].startswith(issuer.url + "/.well-known/")
    flow = scheme["flows"]["authorizationCode"]
    assert flow["authorizationUrl"] == f"{issuer.url}/oauth/authorize"
    assert flow["tokenUrl"] == f"{issuer.url}/oauth/token"
    assert flow["pkceRequired"] is True
    assert sorted(flow["scopes"]) == sorted({"todos:read", WRITE})
    assert card["securityRequirements"] == [{"schemes": {"foldkit": {}}}]
    needs = {s["id"]: s.get("securityRequirements") for s in card["skills"]}
    assert needs["create_todo"] == [{"schemes": {"foldkit": {"list": [WRITE]}}}]


async def _last_task(client: Any, request: Any) -> Any:
    events = [event async for event in client.send_message(request)]
    tasks = [event.task for event in events if event.HasField("task")]
    assert tasks, events
    return tasks[-1]


def _claims_of(token: str) -> dict[str, Any]:
    import base64

    payload = token.split(".")[1]
    return json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)))


async def test_the_tenant_is_the_tokens_claim_and_another_named_tenant_is_refused(
    issuer: Issuer,
) -> None:
    from a2a.types import TaskState

    from tests.support.a2a_lab import skill_request
    from tests.support.serving import a2a_client, todos_of

    token = issuer.token("openid email")  # its email claim names the tenant
    tenant = _claims_of(token)["email"]
    unclaimed = issuer.token("openid todos:read")  # names no email
    flags = (*_flags(issuer), "--a2a", "--tenant-from", "claim:email", "--tenant-idle", "0.5")
    async with serving(*flags, target="examples.todo:runtime", port=_port(issuer)) as server:
        async with mcp_client(issuer.resource, token) as client:
            await client.call_tool("create_todo", {"title": "Milk"})
            assert [t["title"] for t in await todos_of(client)] == ["Milk"]
        async with a2a_client(server.origin, token) as client:
            own = await _last_task(client, skill_request("create_todo", {"title": "Eggs"}))
            other = skill_request("create_todo", {"title": "Jam"})
            other.tenant = "someone-else@example.org"  # A2A's own tenant field, not the claim's
            foreign = await _last_task(client, other)
        async with mcp_client(issuer.resource, token) as client:
            # one tenant on both transports, and nothing of the other tenant's call in it
            assert [t["title"] for t in await todos_of(client)] == ["Milk", "Eggs"]
        async with httpx.AsyncClient() as http:
            refused = await http.post(
                issuer.resource,
                json={"jsonrpc": "2.0", "id": 1, "method": "ping"},
                headers={"Authorization": f"Bearer {unclaimed}"},
            )
        closed = await server.line(r"^tenant .* closed \(idle\)")
    assert tenant in closed
    assert own.status.state == TaskState.TASK_STATE_COMPLETED
    assert foreign.status.state == TaskState.TASK_STATE_REJECTED
    assert refused.status_code == 401  # a token that names no tenant is not this server's


@pytest.mark.interop
async def test_the_mcp_typescript_client_discovers_signs_in_is_refused_a_scope_and_steps_up(
    issuer: Issuer,
) -> None:
    import shutil
    import subprocess
    import uuid

    import anyio

    from tests.support.paths import INTEROP, ROOT

    if shutil.which("node") is None:
        pytest.skip("node is not installed")
    # The TS SDK (1.32) answers a 403 by refreshing when it holds a refresh token, and a
    # refresh keeps the old scope: this client is issued none, so it asks the person again.
    client_id = f"ts-agent-{uuid.uuid4().hex[:8]}"
    issuer.add_agent(client_id, "ts-agent-secret", ["openid", "todos:read", WRITE], refresh=False)
    async with serving(*_introspecting(issuer), target=TARGET, port=_port(issuer), env=SECRET_ENV):
        done = await anyio.run_process(
            ["node", str(INTEROP / "mcp_oauth_client.mjs"), issuer.resource, client_id,
             "ts-agent-secret"],
            cwd=ROOT, check=False, stderr=subprocess.PIPE,
        )  # fmt: skip
    assert done.returncode == 0, done.stderr.decode()
    seen = json.loads(done.stdout.decode().strip().splitlines()[-1])
    assert "error" not in seen, (seen.get("error"), seen["answers"])
    assert seen["asked"][0] == "todos:read"  # the 401's scope, nothing more
    assert not seen["cleared"]["isError"], seen["cleared"]
    assert seen["steppedUp"] is True
    refusal = next(a for a in seen["answers"] if a["status"] == 403)
    assert refusal["challenge"].startswith('Bearer error="insufficient_scope"')
    assert set(seen["asked"][1].split()) >= {"todos:read", WRITE}  # the scope it named
    assert not seen["created"]["isError"], seen["created"]
    made = seen["created"]["structuredContent"]["message"]
    assert (made["_tag"], made["title"]) == ("RequestedCreateTodo", "Buy milk")
    assert seen["answers"][0]["status"] == 401
    assert "error=" not in seen["answers"][0]["challenge"]  # no credentials: no error code


async def test_a_tenants_capability_scopes_are_checked_at_the_edge_too(issuer: Issuer) -> None:
    narrow, wide = issuer.token("openid todos:read"), issuer.token(f"openid todos:read {WRITE}")
    flags = (*_introspecting(issuer), "--tenant-from", "principal")
    async with serving(*flags, target=TARGET, port=_port(issuer), env=SECRET_ENV):
        refused = await _call_raw(issuer.resource, narrow, "create_todo")
        allowed = await _call_raw(issuer.resource, wide, "create_todo")
    assert refused.status_code == 403
    assert WRITE in refused.headers["www-authenticate"].split('scope="')[1].split('"')[0]
    assert WRITE in refused.json()["error"]["message"]
    assert allowed.status_code == 200, allowed.text


async def test_a_tenants_path_is_served_only_to_a_token_of_that_tenant(issuer: Issuer) -> None:
    from tests.support.serving import todos_of

    port = _port(issuer)
    alices = f"http://127.0.0.1:{port}/alice/mcp"
    for_the_server = issuer.token("openid todos:read")  # names /mcp, not alice's endpoint
    issuer.add_resource(alices)
    wallet, browser = Wallet(issuer), Browser()
    flags = (*_flags(issuer), "--tenant-from", "path")
    async with serving(*flags, target="examples.todo:runtime", port=port) as server:
        async with httpx.AsyncClient() as http:
            bare = await http.post(alices, json={"jsonrpc": "2.0", "id": 1})
            where = bare.headers["www-authenticate"].split('resource_metadata="')[1][:-1]
            metadata = (await http.get(where)).json()
        other_audience = await _call_raw(alices, for_the_server, "create_todo")
        # the official client finds alice's endpoint's own metadata from the 401, signs in
        async with signed_in_client(alices, wallet, browser) as client:
            await client.call_tool("create_todo", {"title": "Milk"})
            assert [t["title"] for t in await todos_of(client)] == ["Milk"]
        assert wallet.tokens is not None
        foreign = await _call_raw(f"{server.origin}/bob/mcp", wallet.tokens.access_token, "x")
    # RFC 9728 §3.1: the metadata of /alice/mcp is at the well-known path built from its URL
    assert where == f"http://127.0.0.1:{port}/.well-known/oauth-protected-resource/alice/mcp"
    assert metadata["resource"] == alices
    assert metadata["authorization_servers"] == [issuer.url]
    # RFC 8707: a token for the server's /mcp is not one for alice's endpoint
    assert other_audience.status_code == 401
    assert other_audience.headers["www-authenticate"].startswith('Bearer error="invalid_token"')
    assert f'resource_metadata="{where}"' in other_audience.headers["www-authenticate"]
    # alice's token is not bob's endpoint's either
    assert foreign.status_code == 401
    bobs = f"http://127.0.0.1:{port}/.well-known/oauth-protected-resource/bob/mcp"
    assert f'resource_metadata="{bobs}"' in foreign.headers["www-authenticate"]
    said = await _said(server)
    assert "opens a runtime for the tenant its path names" not in said  # the issuer guards it
