"""The one bearer-token table: exact lookup by digest, no plain tokens kept."""

from __future__ import annotations

import hashlib

import pytest

from foldkit_agent.edge.tokens import MAX_TOKEN_LENGTH, Grant, TokenTable, bearer_token

ALICE = "alice-secret-token-7f3a"


def test_a_known_token_finds_its_grant_and_nothing_else_does() -> None:
    table = TokenTable({ALICE: Grant("alice", ("todos:delete",))})
    assert table.lookup(ALICE) == Grant("alice", ("todos:delete",))
    for guess in (ALICE[:-1], ALICE + "x", ALICE.upper(), "", None, " " + ALICE):
        assert table.lookup(guess) is None


def test_the_table_keeps_digests_not_tokens() -> None:
    table = TokenTable({ALICE: "a"})
    assert ALICE not in repr(table)
    kept = table.__getattribute__("_by_digest")
    assert list(kept) == [hashlib.sha256(ALICE.encode()).digest()]


def test_a_lookup_hashes_the_presented_token_once_whatever_the_table_size(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    table = TokenTable({f"token-{i:04d}-padding": i for i in range(500)})
    calls: list[bytes] = []
    real = hashlib.sha256

    def counting(data: bytes = b"") -> hashlib._Hash:  # pyright: ignore[reportPrivateUsage]
        calls.append(data)
        return real(data)

    monkeypatch.setattr("foldkit_agent.edge.tokens.hashlib.sha256", counting)
    assert table.lookup("token-0499-padding") == 499
    assert table.lookup("token-0499-paddinX") is None
    assert len(calls) == 2


def test_an_overlong_token_is_unknown_without_being_hashed(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    table = TokenTable({ALICE: "a"})
    monkeypatch.setattr("foldkit_agent.edge.tokens._digest", lambda _t: pytest.fail("hashed"))
    assert table.lookup("x" * (MAX_TOKEN_LENGTH + 1)) is None


@pytest.mark.parametrize(
    ("header", "token"),
    [
        ("Bearer abc", "abc"),
        ("bearer  abc ", "abc"),
        ("BEARER abc", "abc"),
        ("Basic YWxpY2U6eA==", None),
        ("Bearer ", None),
        ("Bearer", None),
        ("", None),
        (None, None),
    ],
)
def test_bearer_token_reads_only_the_bearer_scheme(header: str | None, token: str | None) -> None:
    assert bearer_token(header) == token


def test_bearer_looks_up_the_header_token() -> None:
    table = TokenTable({ALICE: "a"})
    assert table.bearer(f"Bearer {ALICE}") == "a"
    assert table.bearer(f"Basic {ALICE}") is None


@pytest.mark.parametrize("tokens", [{"short": "a"}, {ALICE: None}, {5: "a"}])
def test_a_bad_table_is_refused_when_built(tokens: dict[object, object]) -> None:
    with pytest.raises(ValueError, match="token"):
        TokenTable(tokens, min_length=16)  # type: ignore[arg-type]  # pyright: ignore[reportArgumentType]


def test_a_table_is_built_from_a_mapping() -> None:
    with pytest.raises(TypeError, match="mapping"):
        TokenTable([ALICE])  # type: ignore[arg-type]  # pyright: ignore[reportArgumentType]
