"""Rate limits per capability (``rate=`` on the variant) and per caller (edge/rates.py): past
one, a call is refused unstarted, saying when to retry, and audited."""

from __future__ import annotations

from typing import Any

import pytest

from foldkit_agent import AgentContractError, agent
from foldkit_agent.edge.calls import CallRequest, CallsInFlight
from foldkit_agent.edge.rates import RATE_LIMITED, RateLimits
from foldkit_agent.manifest import to_manifest
from tests.support.audit_app import B, Increment, Msg, TestHost

pytestmark = pytest.mark.anyio

Limited = B.make(
    messages=B.expose(
        Msg, {Increment: B.variant(description="Add to the counter", rate="3/minute")}
    )
)


def _runtime(audit: Any = None) -> Any:
    return B.bind(definition=Limited, host=TestHost(), audit=audit)


async def test_a_callers_fourth_call_in_a_minute_of_a_3_per_minute_capability_is_refused() -> None:
    audit = agent.audit_log()
    rt = _runtime(audit)
    calls = CallsInFlight()
    alice = CallRequest(transport="mcp", caller="alice")
    outcomes = [await calls.run(rt, "increment", {"by": 1}, alice) for _ in range(4)]
    assert [o.ok for o in outcomes] == [True, True, True, False]  # pyright: ignore[reportAttributeAccessIssue]
    refused: Any = outcomes[3]
    assert refused.kind == "refused"
    assert refused.data["code"] == RATE_LIMITED
    assert 1 <= refused.data["retry_after"] <= 60
    assert refused.text == (
        "Refused: "
        "increment was not started: Too many calls: one caller may start increment 3 times a "
        f"minute. Retry after {refused.data['retry_after']} s. Nothing was sent."
    )
    bob: Any = await calls.run(rt, "increment", {"by": 1}, CallRequest("mcp", caller="bob"))
    assert bob.ok
    [entry] = [e for e in audit.entries() if e.decision == "refused"]
    assert (entry.capability, entry.outcome) == ("increment", "AgentCapabilityUnavailableError")


async def test_a_capability_without_a_rate_is_never_counted() -> None:
    rates = RateLimits()
    from tests.support.audit_app import Definition

    rt = B.bind(definition=Definition, host=TestHost(), principal=lambda inv: inv.credentials)
    calls = CallsInFlight(rates=rates)
    for _ in range(20):
        outcome: Any = await calls.run(rt, "increment", {"by": 1}, CallRequest("mcp"))
        assert outcome.ok
    assert rates._limiter is None  # pyright: ignore[reportPrivateUsage] - no storage was made


def test_a_rate_that_is_not_one_is_refused_where_it_is_declared() -> None:
    with pytest.raises(AgentContractError, match=r"rate=: a rate is N/second.*got 'often'"):
        B.variant(description="x", rate="often")


def test_the_manifest_records_a_declared_rate_and_nothing_where_none_is() -> None:
    from tests.support.audit_app import Definition

    [limited] = to_manifest(Limited)["capabilities"]
    assert limited["rate"] == "3/minute"
    assert all("rate" not in c for c in to_manifest(Definition)["capabilities"])


def test_a_per_caller_rate_refuses_with_429_and_retry_after_and_counts_callers_apart() -> None:
    rates = RateLimits("2/hour")
    assert rates.caller_refusal("alice") is None
    assert rates.caller_refusal("alice") is None
    refused = rates.caller_refusal("alice")
    assert refused is not None
    assert (refused.status, refused.code) == (429, RATE_LIMITED)
    assert refused.headers is not None
    assert 3500 <= int(refused.headers["Retry-After"]) <= 3600
    assert refused.text.startswith("Too many requests: one caller may make 2 requests an hour")
    assert rates.caller_refusal("bob") is None


@pytest.mark.parametrize("bad", ["", "10", "10/fortnight", "0/minute"])
def test_a_per_caller_rate_that_is_not_one_is_refused(bad: str) -> None:
    with pytest.raises(ValueError, match="a rate is N/second, N/minute, N/hour or N/day"):
        RateLimits(bad)


def test_a_storage_that_is_not_a_limits_uri_is_refused_when_first_used() -> None:
    with pytest.raises(ValueError, match="limits storage URI"):
        RateLimits("1/second", storage="nowhere://x").limiter()
