"""Who holds what: the caller key from what the edge verified, and the two caps."""

from __future__ import annotations

import re

import pytest
from mcp.server.auth.middleware.bearer_auth import AuthenticatedUser
from mcp.server.auth.provider import AccessToken
from starlette.authentication import SimpleUser, UnauthenticatedUser

from foldkit_agent.edge.callers import (
    ANONYMOUS,
    CallerLimits,
    CapReached,
    Slot,
    Slots,
    caller_key,
)


def test_an_mcp_token_counts_as_its_subject_not_its_client() -> None:
    token = AccessToken(token="t", client_id="shared-client", scopes=[], subject="alice")
    assert caller_key({"user": AuthenticatedUser(token)}) == "principal:alice"
    other = AccessToken(token="u", client_id="shared-client", scopes=[], subject="bob")
    assert caller_key({"user": AuthenticatedUser(other)}) == "principal:bob"


def test_a_starlette_user_counts_as_its_name_and_nobody_as_the_anonymous_bucket() -> None:
    assert caller_key({"user": SimpleUser("carol")}) == "principal:carol"
    assert caller_key({"user": UnauthenticatedUser()}) == ANONYMOUS
    assert caller_key({}) == ANONYMOUS


def test_anonymous_callers_at_their_share_leave_room_for_authenticated_ones() -> None:
    slots = Slots("open event streams", per_caller=2, total=5)
    held = [slots.take(ANONYMOUS) for _ in range(2)]
    with pytest.raises(CapReached) as refused:
        slots.take(ANONYMOUS)
    assert refused.value.err.status == 429
    assert refused.value.err.text.startswith("Anonymous callers already hold 2 open event")
    alice = [slots.take("principal:alice") for _ in range(2)]
    bob = slots.take("principal:bob")
    with pytest.raises(CapReached) as full:
        slots.take("principal:carol")
    assert full.value.err.status == 503
    assert "cap 5" in full.value.err.text
    bob.release()
    bob.release()  # once only
    assert len(slots) == 4
    assert slots.take("principal:carol").caller == "principal:carol"
    for slot in held + alice:
        slot.release()
    assert len(slots) == 1


def _evictable(slots: Slots, caller: str, ended: list[str], idle_since: float) -> Slot:
    slot = slots.take(caller)
    slot.last_active = idle_since
    slot.evict = lambda: ended.append(caller)
    return slot


def test_at_the_total_the_largest_holders_longest_idle_stream_ends_for_a_newcomer() -> None:
    slots = Slots("open event streams", per_caller=4, total=4, evict_idle=True)
    ended: list[str] = []
    _evictable(slots, "page:quiet", ended, idle_since=1.0)  # idle longest, holds one
    _evictable(slots, "page:greedy", ended, idle_since=3.0)
    _evictable(slots, "page:greedy", ended, idle_since=2.0)
    _evictable(slots, "page:greedy", ended, idle_since=4.0)
    slots.take("page:new")
    assert ended == ["page:greedy"]
    assert slots.held_by("page:greedy") == 2
    assert slots.held_by("page:quiet") == 1
    assert slots.evicted == 1


def test_minted_callers_never_end_a_stream_of_a_caller_holding_no_more_than_they_would() -> None:
    """A page's one stream survives any number of fresh page sessions: once every caller
    holds one, the newcomer is refused (503) instead of ending somebody's only stream."""
    slots = Slots("open event streams", per_caller=16, total=4, evict_idle=True)
    ended: list[str] = []
    _evictable(slots, "page:legit", ended, idle_since=0.0)
    for n in range(3):
        _evictable(slots, f"page:minted-{n}", ended, idle_since=float(n + 1))
    for n in range(3, 40):
        with pytest.raises(CapReached) as full:
            slots.take(f"page:minted-{n}")
        assert full.value.err.status == 503
    assert ended == []
    assert slots.held_by("page:legit") == 1
    assert slots.evicted == 0


@pytest.mark.parametrize(
    ("given", "said"),
    [
        (
            {"calls_per_caller": 2000},
            "calls_per_caller must be at most calls (1024), got 2000: lower it or raise calls",
        ),
        (
            {"waiting_per_caller": 17, "waiting": 4},
            "waiting_per_caller must be at most waiting (4), got 17",
        ),
    ],
)
def test_a_callers_share_above_the_total_is_refused(given: dict[str, int], said: str) -> None:
    with pytest.raises(ValueError, match=re.escape(said)):
        CallerLimits(**given)


@pytest.mark.parametrize(
    ("given", "said"),
    [
        ({"waiting": 1.5}, "waiting must be a whole number of at least 1, got 1.5"),
        ({"calls": True}, "calls must be a whole number of at least 1, got True"),
        ({"task_max_age": "1h"}, "task_max_age must be a positive number of seconds, got '1h'"),
    ],
)
def test_a_cap_that_is_not_a_whole_number_is_refused(given: dict[str, object], said: str) -> None:
    with pytest.raises(TypeError, match=re.escape(said)):
        CallerLimits(**given)  # pyright: ignore[reportArgumentType]
