"""Who holds what: the caller key from what the edge verified, and the two caps."""

from __future__ import annotations

import pytest
from mcp.server.auth.middleware.bearer_auth import AuthenticatedUser
from mcp.server.auth.provider import AccessToken
from starlette.authentication import SimpleUser, UnauthenticatedUser

from foldkit_agent.edge.callers import ANONYMOUS, CapReached, Slots, caller_key


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
