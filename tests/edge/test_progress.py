"""The shared clock behind MCP progress and A2A WORKING updates (DESIGN §10)."""

from __future__ import annotations

import asyncio
import logging
import math

import pytest

from foldkit_agent.edge.progress import beat_until_done, check_interval

INTERVAL = 0.01


async def test_beats_come_in_order_until_the_call_resolves_and_none_after() -> None:
    pending: asyncio.Future[str] = asyncio.get_running_loop().create_future()
    beats: list[int] = []
    seen_done: list[bool] = []
    third = asyncio.Event()

    async def beat(n: int) -> None:
        seen_done.append(pending.done())
        beats.append(n)
        if n == 3:
            third.set()

    async def resolve_after_three() -> None:
        await third.wait()
        pending.set_result("answer")

    resolver = asyncio.ensure_future(resolve_after_three())
    started = await beat_until_done(pending, interval=INTERVAL, beat=beat)
    await resolver
    assert pending.result() == "answer"
    assert started == len(beats) >= 3
    assert beats == list(range(1, len(beats) + 1))
    assert not any(seen_done)  # no beat began after the call had resolved
    count = len(beats)
    await asyncio.sleep(0)
    assert len(beats) == count  # nothing left running that could beat later


async def test_a_call_that_is_already_done_gets_no_beat() -> None:
    pending: asyncio.Future[int] = asyncio.get_running_loop().create_future()
    pending.set_result(1)

    async def beat(n: int) -> None:
        raise AssertionError("no beat expected")

    assert await beat_until_done(pending, interval=INTERVAL, beat=beat) == 0


async def test_a_beat_that_cannot_be_delivered_is_given_up_and_the_next_one_follows() -> None:
    pending: asyncio.Future[None] = asyncio.get_running_loop().create_future()
    never = asyncio.Event()
    beats: list[int] = []

    async def beat(n: int) -> None:
        beats.append(n)
        if n == 2:
            pending.set_result(None)
            return
        await never.wait()  # a client that stopped reading

    assert await beat_until_done(pending, interval=INTERVAL, beat=beat) == 2
    assert beats == [1, 2]


async def test_a_beat_that_raises_is_logged_and_does_not_touch_the_call(
    caplog: pytest.LogCaptureFixture,
) -> None:
    pending: asyncio.Future[str] = asyncio.get_running_loop().create_future()

    async def beat(n: int) -> None:
        if n == 2:
            pending.set_result("still fine")
        raise RuntimeError("the stream is closed")

    with caplog.at_level(logging.WARNING, logger="foldkit_agent.edge.progress"):
        assert await beat_until_done(pending, interval=INTERVAL, beat=beat) == 2
    assert pending.result() == "still fine"
    assert "sending beat 1 of a pending call failed" in caplog.text


async def test_cancelling_the_waiter_leaves_the_call_running() -> None:
    pending: asyncio.Future[str] = asyncio.get_running_loop().create_future()
    first = asyncio.Event()

    async def beat(n: int) -> None:
        first.set()

    waiter = asyncio.ensure_future(beat_until_done(pending, interval=INTERVAL, beat=beat))
    await first.wait()
    waiter.cancel()
    with pytest.raises(asyncio.CancelledError):
        await waiter
    assert not pending.done()  # the caller owns the call and decides what to do with it
    pending.set_result("mine")


@pytest.mark.parametrize("bad", [0, -1, math.inf, math.nan])
def test_an_interval_that_is_not_a_positive_number_is_refused(bad: float) -> None:
    with pytest.raises(ValueError, match="progress_interval must be a positive number"):
        check_interval(bad)


def test_a_positive_interval_is_taken_as_seconds() -> None:
    assert check_interval(5) == 5.0
    assert check_interval(0.25) == 0.25
