"""``People``: who is signed in to the console and the page, within two caps."""

from __future__ import annotations

import pytest

from foldkit_agent.adapters.web.signin import DEFAULT_SESSIONS_PER_PERSON, People
from foldkit_agent.edge.tokens import Grant, TokenTable

ALICE = "alice-token-0123456789"
CAROL = "carol-token-0123456789"


def people(cap: int = 1024) -> People:
    return People(TokenTable({ALICE: Grant("alice"), CAROL: Grant("carol", ("approver",))}), cap)


def test_one_person_signing_in_again_and_again_signs_out_only_themselves() -> None:
    signed = people(cap=64)
    carol = signed.sign_in(CAROL)
    alice = [signed.sign_in(ALICE) for _ in range(3_000)]
    grant = signed.person(carol)
    assert grant is not None
    assert grant.subject == "carol"  # still signed in
    assert len(signed) == DEFAULT_SESSIONS_PER_PERSON + 1
    kept = [sid for sid in alice if signed.person(sid) is not None]
    assert kept == alice[-DEFAULT_SESSIONS_PER_PERSON:]  # alice's newest sessions


def test_a_person_s_own_oldest_unused_session_goes_first() -> None:
    signed = People(TokenTable({ALICE: Grant("alice")}), per_person=2)
    first, second = signed.sign_in(ALICE), signed.sign_in(ALICE)
    assert signed.person(first) is not None  # used: now the newer of the two
    third = signed.sign_in(ALICE)
    assert [signed.person(s) is not None for s in (first, second, third)] == [True, False, True]


def test_a_signed_out_session_is_gone_and_frees_its_place() -> None:
    signed = People(TokenTable({ALICE: Grant("alice")}), per_person=1)
    sid = signed.sign_in(ALICE)
    signed.sign_out(sid)
    assert signed.person(sid) is None
    assert len(signed) == 0
    again = signed.sign_in(ALICE)
    assert signed.person(again) is not None


def test_the_server_wide_cap_still_holds_across_people() -> None:
    tokens = {f"token-{n:02d}-0123456789": Grant(f"p{n}") for n in range(10)}
    signed = People(TokenTable(tokens), cap=4)
    for token in tokens:
        signed.sign_in(token)
    assert len(signed) == 4


@pytest.mark.parametrize("caps", [(0, 1), (1, 0)])
def test_a_cap_below_one_is_refused(caps: tuple[int, int]) -> None:
    with pytest.raises(ValueError, match="at least 1"):
        People(TokenTable({}), caps[0], per_person=caps[1])
