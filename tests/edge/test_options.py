"""``HttpOptions``: the one value every HTTP adapter of a server reads."""

from __future__ import annotations

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
