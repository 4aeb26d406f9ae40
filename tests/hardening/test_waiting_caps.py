"""One caller trying to start 1,040 calls that wait for a person locks nobody else out, on a
real ``foldkit-agent serve`` (MCP over HTTP, A2A and the page, several tokens).

The caller is, in turn, a page visitor signed in many times with one token (the server has
``--token``, so the page answers only a signed-in person), one token on a
handshake-era MCP session whose client elicits (and never answers), one token over A2A, and
one token over 2026-era MCP. Everything asserted is what the server said: which attempts were
put to a person and which were refused naming the per-caller cap (with nothing sent), the
answers another caller got on every transport while the attempts ran and while the caller held
its share, each waiting call's last answer when the caller lets go, and the audit entries the
server stored. The cap on calls waiting for a person is counted per caller across every
transport, and every session of one signed-in person is that one caller
(``foldkit_agent.edge.calls``), so the page visitor's share is dave's share.

One server serves every case in turn, with a total cap (``--max-waiting``) only twice one
caller's share: a case that left a single share of calls waiting behind would leave the next
case's other caller nobody to ask, so each case also shows that the caps came back to zero.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
import pytest

from foldkit_agent.adapters.web.signin import DEFAULT_SESSIONS_PER_PERSON
from tests.support.serving import Lines, serve_process
from tests.support.waiting_callers import (
    A2a,
    Attempts,
    HandshakeMcp,
    Holder,
    Http,
    ModernMcp,
    Page,
    Waiting,
    attempt_all,
    audit_entries,
    of,
    result_text,
    task_text,
)

ATTEMPTS = 1040
"""More calls than the server would let all callers together keep waiting by default (1,024)."""
SHARE = 4
"""``--max-waiting-per-caller``: calls one caller may have waiting for a person."""
TOTAL = 2 * SHARE
"""``--max-waiting``: calls all callers together may have waiting (the holder's share and the
other caller's one fit; a share left behind by an earlier case does not)."""
CONNECTIONS = 32
"""Client connections the caller makes its attempts over (a waiting call may hold one, so
more than ``SHARE``)."""
ALICE = "alice-token-0123456789"
CAROL = "carol-token-0123456789"
BOB = "bob-token-0123456789"
DAVE = "dave-token-0123456789"
SERVE = (
    "tests.support.waiting_app:runtime",
    "--mcp", "http", "--a2a", "--webmcp",
    "--token", f"{ALICE}=alice", "--token", f"{CAROL}=carol", "--token", f"{BOB}=bob",
    "--token", f"{DAVE}=dave",
    "--max-waiting-per-caller", str(SHARE), "--max-waiting", str(TOTAL),
    "--keep-alive", "120",  # the client's idle connections stay usable between the phases
    "--audit-durable",  # each answer comes once its entry is stored: the file can be read
)  # fmt: skip
AT_THE_CAP = f"({SHARE}, the most one caller may have waiting)"


@dataclass(frozen=True)
class Server:
    """The one ``serve`` of this module: where it listens, its audit file, its stderr."""

    origin: str
    audit: Path
    said: Lines


@pytest.fixture(scope="module")
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(scope="module")
async def server(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[Server]:
    audit = tmp_path_factory.mktemp("waiting") / "audit.jsonl"
    said = Lines()
    async with serve_process(*SERVE, "--audit", f"jsonl:{audit}", stderr=said) as origin:
        yield Server(origin, audit, said)
    assert not [line for line in said if "Traceback" in line], said  # nothing ended badly


@dataclass(frozen=True)
class Case:
    """One caller that holds: how it is made, whom the audit names it as, and how each of its
    waiting calls ends once it lets go (the audit entry's outcome and approval)."""

    make: Callable[[Http], Awaitable[Holder]]
    principal: str | None
    ended_as: tuple[str, str | None]


async def _page_visitor(http: Http) -> Holder:
    # as many sessions as one person keeps signed in at once (more sign-ins drop their own)
    return Page(http, sessions=DEFAULT_SESSIONS_PER_PERSON, token=DAVE)


async def _handshake_mcp(http: Http) -> Holder:
    return await HandshakeMcp(http, ALICE).open()


async def _a2a(http: Http) -> Holder:
    return A2a(http, ALICE)


async def _modern_mcp(http: Http) -> Holder:
    return ModernMcp(http, CAROL)


CANCELLED = ("AgentCancelledError", None)  # nobody's answer recorded: the call was cancelled
DECLINED = ("AgentApprovalError", "declined")
CASES = {
    "page visitor, many sessions": Case(_page_visitor, "dave", DECLINED),
    "token, handshake-era MCP, eliciting": Case(_handshake_mcp, "alice", CANCELLED),
    "token, A2A": Case(_a2a, "alice", CANCELLED),
    "token, 2026-era MCP": Case(_modern_mcp, "carol", DECLINED),
}


@pytest.mark.parametrize("who", list(CASES))
async def test_one_caller_holding_its_share_of_waiting_calls_locks_nobody_out(
    who: str, server: Server
) -> None:
    case = CASES[who]
    http, others = Http(server.origin, CONNECTIONS), Http(server.origin, 4)
    holder = await case.make(http)
    tried: list[Attempts] = []
    async with anyio.create_task_group() as tg:  # the other caller is served meanwhile

        async def attempts() -> None:
            tried.append(await attempt_all(holder, ATTEMPTS))

        tg.start_soon(attempts)
        tg.start_soon(_another_caller_is_served_everywhere, others)
    (got,) = tried

    assert len(got.waiting) == SHARE, got.refused[:3]  # its share, put to a person
    refusals = Counter(got.refused)
    assert len(got.refused) == ATTEMPTS - SHARE
    assert all(AT_THE_CAP in text and "nothing was sent" in text for text in refusals), refusals

    await _another_caller_is_served_everywhere(others)  # while the share is held
    await _bob_is_asked_about_his_own_call(others)

    _each_ended_cleanly(holder, [await holder.let_go(waiting) for waiting in got.waiting])
    again = await attempt_all(holder, SHARE)  # its whole share is free again
    assert len(again.waiting) == SHARE, again.refused
    _each_ended_cleanly(holder, [await holder.let_go(waiting) for waiting in again.waiting])
    http.close()
    others.close()

    entries = audit_entries(server.audit)
    mine = of(entries, capability="note", transport=holder.transport, principal=case.principal)
    assert len({e["invocation_id"] for e in mine}) == len(mine) == ATTEMPTS + SHARE  # each once
    assert Counter((e["decision"], e["outcome"], e["approval"]) for e in mine) == {
        ("refused", "AgentApprovalError", "unavailable"): ATTEMPTS - SHARE,
        ("refused", *case.ended_as): 2 * SHARE,
    }
    assert not of(entries, capability="note", decision="dispatched")  # nothing was sent


async def _another_caller_is_served_everywhere(http: Http) -> None:
    """Bob (another token) over MCP in both eras and A2A, and a new page visitor: each lists
    or calls and is answered."""
    modern = ModernMcp(http, BOB)
    listed = await modern.post("tools/list", {})
    assert {"add_item", "note", "rename_item"} <= {t["name"] for t in listed["tools"]}
    called = await modern.call("add_item", {"title": "bread"})
    assert called["isError"] is False, called

    handshake = await HandshakeMcp(http, BOB).open()
    listed = await handshake.request("tools/list", {})
    assert {"add_item", "note", "rename_item"} <= {t["name"] for t in listed["tools"]}
    called = await handshake.request(
        "tools/call", {"name": "add_item", "arguments": {"title": "eggs"}}
    )
    assert called["isError"] is False, called

    task = await A2a(http, BOB).send("add_item", {"title": "jam"})
    assert task["status"]["state"] == "TASK_STATE_COMPLETED", task_text(task)

    page = Page(http, sessions=1, token=BOB)
    answered = await page.invoke(page.sessions[0], "add_item", {"title": "tea"})
    assert answered.status == 200, answered.text
    assert answered.json()["isError"] is False, answered.text

    signed_in = await page.cookie(page.sessions[0])  # the page's reads need a person too
    context = (await http.request("GET", "/agent/context", signed_in)).json()["context"]
    assert {"bread", "eggs", "jam", "tea"} <= set(context["items"])


async def _bob_is_asked_about_his_own_call(http: Http) -> None:
    """Bob's own call that needs a person is put to his person (2026-era MCP, A2A), not
    refused."""
    modern = ModernMcp(http, BOB)
    asked = await modern.attempt(0)
    assert isinstance(asked, Waiting), asked
    declined = await modern.let_go(asked)
    assert declined["structuredContent"]["reason"] == "declined", declined

    a2a = A2a(http, BOB)
    asked = await a2a.attempt(0)
    assert isinstance(asked, Waiting), asked
    cancelled = await a2a.let_go(asked)
    assert cancelled["status"]["state"] == "TASK_STATE_CANCELED", task_text(cancelled)


def _each_ended_cleanly(holder: Holder, ends: list[Any]) -> None:
    """Each waiting call's last answer, once the caller let go: cancelled, or declined."""
    for end in ends:
        if isinstance(holder, HandshakeMcp):
            assert end["error"]["message"] == "Request cancelled", end
        elif isinstance(holder, A2a):
            assert end["status"]["state"] == "TASK_STATE_CANCELED", task_text(end)
        else:
            assert end["isError"] is True, end
            assert end["structuredContent"]["reason"] == "declined", result_text(end)
