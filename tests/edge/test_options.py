"""``HttpOptions``: the one value every HTTP adapter of a server reads."""

from __future__ import annotations

import re

import pytest

from foldkit_agent import CallerLimits, HttpOptions
from foldkit_agent.edge import DEFAULT_HTTP_OPTIONS


def test_allowed_hosts_become_one_tuple_whatever_shape_they_are_given_in() -> None:
    assert HttpOptions(allowed_hosts="lan.example").allowed_hosts == ("lan.example",)
    assert HttpOptions(allowed_hosts=["a.example", "b.example"]).allowed_hosts == (
        "a.example",
        "b.example",
    )
    assert HttpOptions(allowed_hosts=None).allowed_hosts == ()
    assert DEFAULT_HTTP_OPTIONS.allowed_hosts == ()


def test_without_max_body_each_adapter_keeps_its_own_limit() -> None:
    assert HttpOptions().body_limit(4 * 1024 * 1024) == 4 * 1024 * 1024
    assert HttpOptions(max_body=1000).body_limit(4 * 1024 * 1024) == 1000


@pytest.mark.parametrize(
    ("given", "said"),
    [
        ({"max_body": 1}, "max_body must be at least 2 bytes, got 1"),
        ({"max_items": 0}, "max_items must be at least 1, got 0"),
        ({"progress_interval": 0.0}, "progress_interval must be a positive number"),
        ({"progress_interval": float("inf")}, "progress_interval must be a positive number"),
    ],
)
def test_values_no_adapter_can_serve_with_are_refused(given: dict[str, float], said: str) -> None:
    with pytest.raises(ValueError, match=said):
        HttpOptions(**given)  # pyright: ignore[reportArgumentType]


def test_the_caps_are_the_caller_limits_value_itself() -> None:
    caps = CallerLimits(sessions_per_caller=3)
    assert HttpOptions(caps=caps).caps is caps


@pytest.mark.parametrize(
    ("given", "said"),
    [
        ({"caps": None}, "caps takes a CallerLimits"),
        ({"caps": {"calls_per_caller": 8}}, "caps takes a CallerLimits"),
        ({"tokens": "alice-token=alice"}, "tokens takes a TokenTable"),
        ({"host": ["todo.lan"]}, "host takes one host name or address as a string"),
        ({"allowed_hosts": [3]}, "allowed_hosts takes host names as strings, got 3"),
        ({"max_body": "1MB"}, "max_body must be a whole number of at least 2 bytes, got '1MB'"),
        ({"max_body": True}, "max_body must be a whole number of at least 2 bytes, got True"),
        ({"max_items": 10.5}, "max_items must be a whole number of at least 1, got 10.5"),
        ({"progress_interval": "5"}, "progress_interval must be a positive number"),
    ],
)
def test_a_value_of_the_wrong_kind_is_refused_at_construction_naming_its_field(
    given: dict[str, object], said: str
) -> None:
    with pytest.raises(TypeError, match=re.escape(said)):
        HttpOptions(**given)  # pyright: ignore[reportArgumentType]


def test_a_list_given_as_the_host_is_refused_not_kept() -> None:
    with pytest.raises(TypeError, match="host takes one host name"):
        HttpOptions(["todo.lan"])  # pyright: ignore[reportArgumentType]


@pytest.mark.parametrize("entry", ["http://todo.lan", "todo.lan:8000", "todo.lan/mcp"])
def test_an_allowed_host_that_is_not_a_bare_name_is_refused_before_any_adapter(
    entry: str,
) -> None:
    with pytest.raises(ValueError, match=f"without a port, got {re.escape(repr(entry))}"):
        HttpOptions(allowed_hosts=[entry])


def test_the_calls_in_flight_adapters_share_come_from_the_front_door() -> None:
    import foldkit_agent
    from foldkit_agent.edge.calls import CallsInFlight

    assert foldkit_agent.CallsInFlight is CallsInFlight
    assert "CallsInFlight" in foldkit_agent.__all__
