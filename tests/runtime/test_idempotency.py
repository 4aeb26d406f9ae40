"""Idempotency keys in the one pipeline (DESIGN §15; Stripe's semantics): a retry with the
same key and input answers the first call's outcome and runs nothing; other input is
refused; a key in progress says so; a key expires; a call without a key is untouched."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from examples.todo import run_todo
from foldkit_agent import (
    AgentIdempotencyError,
    AgentInvalidInputError,
    IdempotencyKeys,
    Invocation,
    MemoryKeys,
)
from foldkit_agent.audit.keys import KeyRecord, verdict


def keyed(key: str, **more: Any) -> Invocation:
    return Invocation(idempotency_key=key, **more)


async def test_a_retry_with_the_key_makes_one_todo_and_answers_the_first_outcome() -> None:
    async with run_todo() as (running, rt):
        first = await rt.messages.dispatch_unknown("create_todo", {"title": "Milk"}, keyed("k1"))
        again = await rt.messages.dispatch_unknown("create_todo", {"title": "Milk"}, keyed("k1"))
        assert [t.title for t in running.model().todos] == ["Milk"]
        assert again.invocation.id == first.invocation.id
        assert again.completion == first.completion
        assert again.message == first.message


async def test_the_same_input_is_the_decoded_input_not_its_wire_form() -> None:
    async with run_todo() as (running, rt):
        await rt.messages.dispatch_unknown("create_todo", {"title": "Milk"}, keyed("k"))
        await rt.messages.dispatch_unknown("create_todo", {"title": "Milk"}, keyed("k"))
        assert len(running.model().todos) == 1


async def test_the_key_with_other_input_is_refused_and_sends_nothing() -> None:
    async with run_todo() as (running, rt):
        await rt.messages.dispatch_unknown("create_todo", {"title": "Milk"}, keyed("k"))
        with pytest.raises(AgentIdempotencyError) as err:
            await rt.messages.dispatch_unknown("create_todo", {"title": "Eggs"}, keyed("k"))
        assert err.value.reason == "conflict"
        assert "other input" in err.value.message
        assert [t.title for t in running.model().todos] == ["Milk"]
        entry = rt.audit.entries()[-1] if rt.audit is not None else None
        assert entry is not None
        assert (entry.decision, entry.outcome) == ("refused", "AgentIdempotencyError")


async def test_a_key_is_the_callers_own() -> None:
    from examples.todo.contract import User

    async with run_todo() as (running, rt):
        ann, bob = User(id="ann"), User(id="bob")
        first = await rt.messages.dispatch_unknown(
            "create_todo", {"title": "Milk"}, keyed("k", credentials=ann)
        )
        second = await rt.messages.dispatch_unknown(
            "create_todo", {"title": "Milk"}, keyed("k", credentials=bob)
        )
        assert second.invocation.id != first.invocation.id  # bob's call ran
        assert running.model().next_id == 3  # two creates reached the app


async def test_a_key_whose_first_call_still_runs_answers_in_progress() -> None:
    async with run_todo() as (running, rt):
        started = asyncio.ensure_future(
            rt.messages.dispatch_unknown("create_todo", {"title": "Milk"}, keyed("k"))
        )
        await asyncio.sleep(0)  # the first call has claimed the key and waits for its save
        with pytest.raises(AgentIdempotencyError) as err:
            await rt.messages.dispatch_unknown("create_todo", {"title": "Milk"}, keyed("k"))
        assert err.value.reason == "in_progress"
        await started
        assert len(running.model().todos) == 1


async def test_a_refusal_before_sending_keeps_nothing_so_a_retry_runs() -> None:
    async with run_todo() as (running, rt):
        with pytest.raises(AgentInvalidInputError):
            await rt.messages.dispatch_unknown("create_todo", {"title": " "}, keyed("k"))
        await rt.messages.dispatch_unknown("create_todo", {"title": "Milk"}, keyed("k"))
        assert len(running.model().todos) == 1


async def test_an_expired_key_runs_as_a_new_call() -> None:
    async with run_todo() as (running, rt):
        now = [1000.0]
        rt.idempotency = IdempotencyKeys(ttl=60, clock=lambda: now[0])
        await rt.messages.dispatch_unknown("create_todo", {"title": "Milk"}, keyed("k"))
        now[0] += 59.9
        await rt.messages.dispatch_unknown("create_todo", {"title": "Milk"}, keyed("k"))
        assert running.model().next_id == 2  # still the first call's answer
        now[0] += 60.0  # a minute after the first call answered
        await rt.messages.dispatch_unknown("create_todo", {"title": "Milk"}, keyed("k"))
        assert running.model().next_id == 3  # a new call reached the app


async def test_a_key_longer_than_255_characters_is_refused() -> None:
    async with run_todo() as (running, rt):
        with pytest.raises(AgentIdempotencyError) as err:
            await rt.messages.dispatch_unknown("create_todo", {"title": "M"}, keyed("k" * 256))
        assert err.value.reason == "invalid"
        assert running.model().todos == ()


async def test_a_replay_is_audited_as_sending_nothing() -> None:
    async with run_todo() as (_running, rt):
        for _ in range(2):
            await rt.messages.dispatch_unknown("create_todo", {"title": "Milk"}, keyed("k"))
        assert rt.audit is not None
        assert [(e.decision, e.outcome) for e in rt.audit.entries()] == [
            ("dispatched", "completed"),
            ("refused", "replayed"),
        ]


def test_the_memory_store_is_bounded() -> None:
    store = MemoryKeys(capacity=2)
    for n in range(5):
        assert store.claim(str(n), "c", KeyRecord("f", "running", "p", 1e12, 1e12), 0.0) is None
    assert len(store) == 2


fingerprints = st.text(min_size=1, max_size=4)


@settings(max_examples=200)
@given(
    first=fingerprints,
    second=fingerprints,
    state=st.sampled_from(["running", "done"]),
    lease=st.floats(0, 20),
    expires=st.floats(0, 20),
    now=st.floats(0, 20),
)
def test_a_key_answers_only_its_own_input(
    first: str, second: str, state: Any, lease: float, expires: float, now: float
) -> None:
    """The key/input invariant: a live key never answers, nor reports on, other input; a
    first call's outcome answers only the same input; an expired key always runs anew."""
    seen = verdict(KeyRecord(first, state, "p", lease, expires, {}), second, now)
    if expires <= now:
        assert seen == "new"
    elif first != second:
        assert seen == "conflict"
    elif state == "done":
        assert seen == "replay"
    else:
        assert seen == ("running" if lease > now else "lost")


async def test_a_retry_of_a_call_that_made_its_capability_go_away_answers_the_first_call() -> None:
    """clear_selection is available only while a todo is selected, and clears it: the answer
    the caller lost is still its key's, though the capability is no longer offered."""
    async with run_todo() as (running, rt):
        await rt.messages.dispatch_unknown("create_todo", {"title": "Milk"})
        (todo,) = running.model().todos
        await rt.messages.dispatch_unknown("select_todo", {"id": todo.id})
        first = await rt.messages.dispatch_unknown("clear_selection", {}, keyed("k"))
        again = await rt.messages.dispatch_unknown("clear_selection", {}, keyed("k"))
        assert again.invocation.id == first.invocation.id
        assert again.message == first.message
        outcome = await rt.call("clear_selection", {}, keyed("another key"))
        assert outcome.ok is False
        assert outcome.data["_tag"] == "AgentCapabilityUnavailableError"  # a new call
        assert rt.audit is not None
        assert [(e.decision, e.outcome) for e in rt.audit.entries()[-3:]] == [
            ("dispatched", "ok"),
            ("refused", "replayed"),
            ("refused", "AgentCapabilityUnavailableError"),
        ]
