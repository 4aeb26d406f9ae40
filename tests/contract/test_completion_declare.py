"""Completion declarations (DESIGN §4.8; F14): waiting always has a deadline, a correlation
key that cannot exist is refused, and ``when`` takes one projection or one source."""

from __future__ import annotations

import math
from collections.abc import Callable
from datetime import timedelta
from typing import Any

import pytest

from foldkit_agent import (
    DEFAULT_TIMEOUT,
    MAX_TIMEOUT,
    AgentContractError,
    Message,
    agent,
    projection,
)
from tests.support.counter import App


class Saved(Message):
    request_id: str | None = None


class Failed(Message):
    reason: str = ""


class Untagged(Message):
    pass


class Source:
    def get(self) -> int:
        return 0

    def subscribe(self, callback: Callable[..., None]) -> Callable[[], None]:
        return lambda: None


Count = projection.pick(App.model.count)


def test_the_default_timeout_is_thirty_seconds() -> None:
    assert DEFAULT_TIMEOUT == 30.0
    assert agent.Completion(success=Saved).seconds == 30.0
    assert agent.when(projection=Count, predicate=lambda v, r: True).seconds == 30.0


@pytest.mark.parametrize(
    "timeout",
    [math.inf, -math.inf, math.nan, timedelta.max, 1e300, MAX_TIMEOUT + 1, 0, -1.0, timedelta(0)],
)
def test_a_timeout_that_is_not_a_finite_bounded_number_of_seconds_is_refused(timeout: Any) -> None:
    with pytest.raises(AgentContractError, match="at most 3600 seconds"):
        agent.Completion(success=Saved, timeout=timeout)
    with pytest.raises(AgentContractError, match="at most 3600 seconds"):
        agent.when(projection=Count, predicate=lambda v, r: True, timeout=timeout)


@pytest.mark.parametrize("timeout", [True, "5", [5]])
def test_a_timeout_that_is_not_seconds_or_a_timedelta_is_refused(timeout: Any) -> None:
    with pytest.raises(AgentContractError, match="seconds"):
        agent.Completion(success=Saved, timeout=timeout)


def test_the_longest_timeout_allowed_is_one_hour() -> None:
    assert MAX_TIMEOUT == 3600.0
    assert agent.Completion(success=Saved, timeout=timedelta(hours=1)).seconds == 3600.0
    assert agent.Completion(success=Saved, timeout=0.25).seconds == 0.25


def test_f14_by_invocation_id_on_a_success_message_without_that_field_is_a_declaration_error() -> (
    None
):
    with pytest.raises(AgentContractError, match="Untagged has no 'req_id' field"):
        agent.Completion(success=Untagged, correlate=agent.by_invocation_id("req_id"))


def test_by_invocation_id_on_a_failure_message_without_that_field_is_a_declaration_error() -> None:
    with pytest.raises(AgentContractError, match="Failed has no 'request_id' field"):
        agent.Completion(
            success=Saved, failure=Failed, correlate=agent.by_invocation_id("request_id")
        )


def test_by_invocation_id_naming_a_declared_field_is_accepted() -> None:
    done = agent.Completion(success=Saved, correlate=agent.by_invocation_id("request_id"))
    assert isinstance(done.correlate, agent.CorrelationKey)
    assert done.correlate.result_field == "request_id"


def test_when_takes_exactly_one_of_projection_and_source() -> None:
    with pytest.raises(AgentContractError, match="exactly one"):
        agent.when(predicate=lambda v, r: True)
    with pytest.raises(AgentContractError, match="exactly one"):
        agent.when(projection=Count, source=Source(), predicate=lambda v, r: True)


def test_a_source_without_get_and_subscribe_is_a_declaration_error() -> None:
    with pytest.raises(AgentContractError, match="get"):
        agent.when(source=object(), predicate=lambda v, r: True)  # type: ignore[arg-type]


def test_a_source_completion_is_described_in_the_manifest() -> None:
    d = agent.make(
        messages=agent.expose(
            App,
            {
                "Incremented": agent.variant(
                    description="Add",
                    completion=agent.when(source=Source(), predicate=lambda v, r: True),
                )
            },
        )
    )
    (cap,) = agent.to_manifest(d)["capabilities"]
    assert cap["completion"] == {
        "kind": "state",
        "watches": [],
        "source": True,
        "timeout_seconds": 30.0,
    }
    assert "on state: a value outside the application state" in agent.to_markdown(d)
