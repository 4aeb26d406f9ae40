"""The one Host/Origin policy: loopback names plus allowed hosts, malformed values refused."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from foldkit_agent.edge.hosts import Authority, HostPolicy, parse_host, parse_origin

LOOPBACK_SPELLINGS = [
    "127.0.0.1",
    "127.0.0.1:8766",
    "localhost",
    "LOCALHOST:8766",
    "LocalHost",
    "localhost.",
    "[::1]",
    "[::1]:8766",
    "[0:0:0:0:0:0:0:1]:8766",
]

MALFORMED = [
    "127.0.0.1:8766@evil.example",
    "user@127.0.0.1",
    "127.0.0.1:8766/path",
    "127.0.0.1 evil.example",
    "127.0.0.1:",
    "127.0.0.1:0",
    "127.0.0.1:65536",
    "127.0.0.1:99999999",
    "127.0.0.1:80:80",
    "::1",
    "[::1",
    "[::1]x",
    "[not-an-ip]",
    "",
    " ",
    "127.0.0.1\x00",
    "-localhost",
    "local_host..",
    "évil.example",
]


@pytest.mark.parametrize("value", LOOPBACK_SPELLINGS)
def test_every_spelling_of_a_loopback_name_is_accepted_by_default(value: str) -> None:
    assert HostPolicy().allows(value)


@pytest.mark.parametrize("value", MALFORMED)
def test_a_malformed_host_is_refused_even_when_any_host_is_allowed(value: str) -> None:
    assert parse_host(value) is None
    assert not HostPolicy(["*"]).allows(value)


def test_a_missing_host_is_refused() -> None:
    assert not HostPolicy().allows(None)
    assert not HostPolicy("*").allows(None)


@pytest.mark.parametrize(
    "value", ["evil.example", "127.0.0.1.evil.example:8000", "192.168.1.20", "[::2]"]
)
def test_a_foreign_name_is_refused_by_default(value: str) -> None:
    assert not HostPolicy().allows(value)


def test_allowed_hosts_add_to_the_loopback_names_any_port_any_case() -> None:
    policy = HostPolicy(["LAN.example", "192.168.1.20", "[fe80::1]"])
    assert policy.allows("lan.example:9000")
    assert policy.allows("192.168.1.20")
    assert policy.allows("[FE80::1]:80")
    assert policy.allows("127.0.0.1")  # loopback stays
    assert not policy.allows("evil.example")


def test_one_string_is_one_name_and_star_is_any_well_formed_host() -> None:
    assert HostPolicy("lan.example").allows("lan.example")
    assert HostPolicy(["*"]).allows("anything.example:9")


@pytest.mark.parametrize("entry", ["lan.example:8000", "http://lan.example", "a b", ""])
def test_an_allowed_host_with_a_port_or_a_scheme_is_a_mistake(entry: str) -> None:
    with pytest.raises(ValueError, match="allowed_hosts"):
        HostPolicy([entry])


def test_parse_host_normalizes_case_brackets_and_ports() -> None:
    assert parse_host("LOCALHOST:8000") == Authority("localhost", 8000)
    assert parse_host("[0:0::1]") == Authority("::1", None)
    assert parse_host("localhost.") == Authority("localhost", None)


@pytest.mark.parametrize(
    ("value", "parsed"),
    [
        ("http://localhost:5173", ("http", Authority("localhost", 5173))),
        ("https://app.example", ("https", Authority("app.example", 443))),
        ("http://[::1]", ("http", Authority("::1", 80))),
    ],
)
def test_parse_origin_reads_scheme_host_and_port(value: str, parsed: tuple[str, Authority]) -> None:
    assert parse_origin(value) == parsed


@pytest.mark.parametrize(
    "value",
    ["null", "file://x", "http://evil.example/path", "http://u@localhost", "localhost", ""],
)
def test_a_malformed_origin_is_none(value: str) -> None:
    assert parse_origin(value) is None
    assert not HostPolicy("*").allows_origin(value)


@given(st.text(max_size=40))
def test_no_host_with_userinfo_is_ever_accepted(junk: str) -> None:
    assert not HostPolicy("*").allows(f"127.0.0.1@{junk}")
    assert not HostPolicy("*").allows(f"{junk}@127.0.0.1")


@given(st.text(max_size=40))
def test_an_accepted_host_parses_to_an_accepted_name(value: str) -> None:
    policy = HostPolicy(["lan.example"])
    if policy.allows(value):
        parsed = parse_host(value)
        assert parsed is not None
        assert parsed.host in policy.names
