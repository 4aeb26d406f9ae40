"""The activity feed: what a page may show of the audit, in a bounded ring shared by readers."""

from __future__ import annotations

import asyncio
import threading

import pytest

from foldkit_agent import agent
from foldkit_agent.edge import ActivityFeed
from tests.support.audit_app import record


def test_an_item_keeps_who_what_and_the_decision_but_never_the_input() -> None:
    audit = agent.audit_log(include_input=True, record_principal=lambda p: p)
    feed = ActivityFeed(audit)
    record(
        audit,
        "i1",
        capability="delete",
        transport="mcp",
        principal="ann",
        input={"password": "hunter2"},
        decision="refused",
        outcome="AgentAuthorizationError",
    )
    assert audit.entries()[-1].input == {"password": "hunter2"}  # the log keeps it, as asked
    (item,), missed = feed.since(0)
    shown = item.to_json()
    assert missed == 0
    assert set(shown) == {
        "seq",
        "at",
        "who",
        "transport",
        "principal",
        "capability",
        "decision",
        "outcome",
        "approval",
        "approvedBy",
    }
    assert (shown["who"], shown["transport"], shown["principal"]) == ("agent", "mcp", "ann")
    assert (shown["capability"], shown["decision"]) == ("delete", "refused")
    assert shown["outcome"] == "AgentAuthorizationError"
    assert "hunter2" not in repr(shown)


@pytest.mark.parametrize(
    ("principal", "shown"),
    [("x" * 300, "x" * 100), (42, "42"), (True, None), ({"id": "ann"}, None), (None, None)],
)
def test_a_principal_shows_as_short_text_or_not_at_all(principal: object, shown: object) -> None:
    audit = agent.audit_log(record_principal=lambda p: p)
    feed = ActivityFeed(audit)
    record(audit, "i", principal=principal)
    assert feed.since(0)[0][0].principal == shown


def test_the_ring_is_bounded_and_a_slow_reader_learns_how_much_it_missed() -> None:
    feed = ActivityFeed(keep=3)
    for n in range(10):
        feed.add_person(transport="page", principal="ann", capability=f"c{n}")
    items, missed = feed.since(0)
    assert [i.capability for i in items] == ["c7", "c8", "c9"]
    assert missed == 7
    items, missed = feed.since(8)
    assert ([i.seq for i in items], missed) == ([9, 10], 0)
    items, missed = feed.since(0, at_most=1)
    assert ([i.capability for i in items], missed) == (["c9"], 9)
    assert feed.since(10) == ([], 0)


def test_the_person_action_reads_as_the_person() -> None:
    feed = ActivityFeed()
    item = feed.add_person(
        transport="page",
        principal="ann",
        capability="delete_todo",
        decision="refused",
        outcome="AgentAuthorizationError",
    )
    assert item.to_json()["who"] == "person"
    assert (item.decision, item.outcome) == ("refused", "AgentAuthorizationError")


def test_closing_stops_following_the_log() -> None:
    audit = agent.audit_log()
    feed = ActivityFeed(audit)
    record(audit, "a")
    feed.close()
    record(audit, "b")
    assert feed.last_seq == 1


async def test_a_reader_wakes_for_an_entry_recorded_on_another_thread() -> None:
    audit = agent.audit_log()
    feed = ActivityFeed(audit)
    thread = threading.Thread(target=lambda: record(audit, "from-a-thread"))
    waiting = asyncio.ensure_future(feed.wait(0))
    # queued after the reader's first step: the thread records while the reader waits
    asyncio.get_running_loop().call_soon(thread.start)
    await asyncio.wait_for(waiting, 5)
    thread.join()
    assert [i.capability for i in feed.since(0)[0]] == ["c"]


def test_a_feed_keeps_at_least_one_item() -> None:
    with pytest.raises(ValueError, match="at least 1"):
        ActivityFeed(keep=0)
