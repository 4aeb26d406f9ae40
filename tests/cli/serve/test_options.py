"""``ServeOptions`` checks itself: options ``serve`` cannot run with never become a value."""

from __future__ import annotations

from typing import Any

import pytest

from foldkit_agent.adapters.mcp.local import LocalUser
from foldkit_agent.cli.serve import ServeOptions, ServeOptionsError
from foldkit_agent.edge.callers import CallerLimits
from foldkit_agent.edge.connections import ConnectionLimits

TARGET = "examples.todo:runtime"
ISSUER, AUDIENCE = "https://auth.example", "https://todo.example/mcp"


@pytest.mark.parametrize(
    ("given", "said"),
    [
        ({}, "choose at least one adapter"),
        ({"mcp": "pigeon"}, "--mcp takes 'stdio' or 'http'"),
        ({"mcp": "http", "local_user": LocalUser("alice")}, "--principal names the local user"),
        ({"mcp": "stdio", "webmcp": True}, "serve the HTTP adapters separately"),
        ({"mcp": "stdio", "ag_ui": "m:agent"}, "serve the HTTP adapters separately"),
        ({"ag_ui": "m:agent", "tenant_from": "path"}, "--tenant-from applies to --mcp http"),
        ({"a2a": True, "listing": "all"}, "--listing applies to MCP"),
        ({"mcp": "stdio", "http_parser": "h11"}, "--mcp stdio serves no HTTP"),
        ({"mcp": "http", "http_parser": "h2"}, "--http takes h11 or httptools, got 'h2'"),
        ({"mcp": "http", "progress_interval": float("nan")}, "--progress-interval must be"),
        ({"mcp": "http", "drain_timeout": -1.0}, "--drain-timeout must be a number of seconds"),
        ({"mcp": "http", "port": 65536}, "--port must be between 0 and 65535, got 65536"),
        ({"native_tokens": ("short",)}, "--native-token must be at least 16 characters"),
        ({"webmcp": True, "host": "0.0.0.0", "allowed_hosts": ("a.example",)}, "loopback only"),
        ({"a2a": True, "host": "0.0.0.0"}, "--host 0.0.0.0 is not loopback"),
        ({"mcp": "http", "audit_durable": True}, "--audit-durable needs --audit SPEC"),
        ({"a2a": True, "tenant_from": "cookie"}, "--tenant-from takes principal, path or claim"),
        ({"a2a": True, "tenant_from": "claim:"}, "--tenant-from takes principal, path or claim"),
        ({"a2a": True, "tenant_from": "claim:org"}, "claim: add --auth-issuer URL"),
        ({"webmcp": True, "tenant_from": "path"}, "--tenant-from applies to --mcp http and --a2a"),
        ({"a2a": True, "tenant_from": "path", "max_tenants": 0}, "--max-tenants must be at least"),
        ({"a2a": True, "tenant_from": "principal"}, "--tenant-from principal needs --token"),
        ({"mcp": "http", "base_url": "http://proxy:8080"}, "--base-url names the A2A card's URLs"),
        ({"a2a": True, "base_url": "ftp://proxy"}, "--base-url takes an origin"),
        ({"mcp": "http", "a2a_task_store": "sqlite:t.db"}, "--a2a-task-store keeps A2A tasks"),
        ({"mcp": "http", "auth_issuer": ISSUER}, "--auth-issuer needs --audience URL"),
        ({"mcp": "http", "audience": AUDIENCE}, "--audience goes with --auth-issuer URL"),
        ({"mcp": "http", "auth_scopes": ("a",)}, "--auth-scope goes with --auth-issuer URL"),
        (
            {"mcp": "http", "auth_issuer": "http://auth.example", "audience": AUDIENCE},
            "--auth-issuer takes an https URL (http only on a loopback address)",
        ),
        (
            {"mcp": "http", "auth_issuer": ISSUER, "audience": AUDIENCE, "introspect": ISSUER},
            "--introspect needs this server's client secret at the authorization server",
        ),
        (
            {"mcp": "http", "auth_issuer": ISSUER, "audience": AUDIENCE, "client_secret": "s"},
            "--client-secret goes with --introspect URL or --client-id ID",
        ),
        (
            {"mcp": "http", "auth_issuer": ISSUER, "audience": AUDIENCE, "client_id": "c"},
            "--client-id goes with --introspect URL, or with --console or --webmcp",
        ),
        (
            {"mcp": "stdio", "auth_issuer": ISSUER, "audience": AUDIENCE},
            "a --mcp stdio server has none",
        ),
    ],
)
def test_options_serve_cannot_run_with_are_refused_in_the_flags_words(
    given: dict[str, Any], said: str
) -> None:
    with pytest.raises(ServeOptionsError, match=None) as refused:
        ServeOptions(target=TARGET, **given)
    assert said in str(refused.value)


def test_stream_caps_that_reach_the_connection_cap_are_refused_naming_both() -> None:
    with pytest.raises(ServeOptionsError) as refused:
        ServeOptions(
            target=TARGET,
            mcp="http",
            webmcp=True,
            caller_limits=CallerLimits(streams=900, page_streams=100),
            connection_limits=ConnectionLimits(max_connections=1000),
        )
    assert "hold up to 1000 connections together" in str(refused.value)
    assert "--max-connections 1000" in str(refused.value)


@pytest.mark.parametrize(
    ("caps", "flag"),
    [
        (CallerLimits(waiting_per_caller=744, waiting=2000), "--max-waiting-per-caller 744"),
        (CallerLimits(waiting_per_caller=800, waiting=800), "--max-waiting-per-caller 800"),
    ],
)
def test_a_share_of_waiting_calls_that_could_take_every_connection_is_refused_naming_both(
    caps: CallerLimits, flag: str
) -> None:
    # one caller's elicitations, each holding its connection, and the 256 MCP streams
    with pytest.raises(ServeOptionsError) as refused:
        ServeOptions(target=TARGET, mcp="http", caller_limits=caps)
    assert str(refused.value).startswith(f"{flag}: one caller's handshake-era MCP")
    assert "(256) they reach --max-connections 1000" in str(refused.value)


def test_waiting_calls_that_hold_no_connection_may_outnumber_the_connections() -> None:
    # parked calls (2026-era MCP, A2A, the page) hold none: only the handshake era's do
    many = CallerLimits(waiting_per_caller=2000, waiting=5000)
    assert ServeOptions(target=TARGET, a2a=True, webmcp=True, caller_limits=many)
    assert ServeOptions(target=TARGET, mcp="stdio", caller_limits=many)
    # the defaults: a total (1,024) above the connections (1,000), a share of 16
    assert ServeOptions(target=TARGET, mcp="http", a2a=True, webmcp=True)


def test_the_stream_pools_count_only_the_adapters_served() -> None:
    caps = CallerLimits(streams=10, page_streams=3)
    assert ServeOptions(target=TARGET, mcp="http", caller_limits=caps).stream_pools() == 10
    assert ServeOptions(target=TARGET, mcp="stdio", caller_limits=caps).stream_pools() == 0
    both = ServeOptions(target=TARGET, mcp="http", webmcp=True, caller_limits=caps)
    assert both.stream_pools() == 13
    # AG-UI's open runs are a pool of their own, within the same caps as MCP's streams
    runs = ServeOptions(target=TARGET, mcp="http", ag_ui="m:agent", caller_limits=caps)
    assert runs.stream_pools() == 20


def test_a_non_loopback_server_names_the_first_allowed_host_in_its_urls() -> None:
    lan = ServeOptions(target=TARGET, a2a=True, host="0.0.0.0", allowed_hosts=("lan.example",))
    assert (lan.loopback, lan.extra_hosts, lan.public_host) == (
        False,
        ["lan.example"],
        "lan.example",
    )
    anywhere = ServeOptions(target=TARGET, a2a=True, host="0.0.0.0", allowed_hosts=("*",))
    assert anywhere.public_host == "0.0.0.0"
    local = ServeOptions(target=TARGET, a2a=True)
    assert (local.loopback, local.extra_hosts, local.public_host) == (True, None, "127.0.0.1")


def test_the_server_name_is_the_targets_module_unless_named() -> None:
    assert ServeOptions(target=TARGET, mcp="http").server_name == "examples.todo"
    assert ServeOptions(target=TARGET, mcp="http", name="todo").server_name == "todo"


def test_an_issuer_becomes_the_one_verifier_every_http_adapter_shares() -> None:
    from foldkit_agent.cli.serve.parts import http_options

    options = ServeOptions(
        target=TARGET,
        mcp="http",
        a2a=True,
        auth_issuer=ISSUER,
        audience=AUDIENCE,
        introspect=ISSUER + "/introspect",
        client_secret="resource-secret",
        auth_scopes=("todos:read",),
    )
    shared = http_options(options)
    assert shared.oauth is not None
    assert shared.bearer_required
    oauth = shared.oauth.options
    assert (oauth.issuer, oauth.audience, oauth.introspect) == (
        ISSUER,
        AUDIENCE,
        ISSUER + "/introspect",
    )
    assert (oauth.client_id, oauth.client_secret, oauth.scopes) == (
        AUDIENCE,
        "resource-secret",
        ("todos:read",),
    )
    assert "resource-secret" not in repr(options)
    assert options.warnings() == []  # callers are authenticated, by the issuer
