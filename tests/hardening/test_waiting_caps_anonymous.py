"""An anonymous page visitor with made-up session cookies, trying 1,040 calls that wait for a
person, locks nobody out, on a real ``foldkit-agent serve`` with no ``--token`` (MCP over HTTP,
A2A, the page, and the Agent Native endpoint for one service).

Without tokens nobody authenticates on MCP, A2A or the page, and every anonymous caller
together is one caller (``foldkit_agent.edge.calls``): however many sessions the visitor makes
up, its calls waiting for a person count against that one share, so the server's total is
never reached and nothing waits on a connection. Meanwhile, and while the visitor holds the
share, anonymous callers are still served on every transport (MCP in both eras, A2A, the page)
and the service with its own token is a caller of its own. A call of theirs that needs a person
is answered at once, refused naming the cap (the share they have in common is held), never left
hanging; once the visitor lets go, an anonymous caller's call is put to a person again.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import AsyncIterator
from pathlib import Path

import anyio
import pytest

from tests.support.serving import Lines, serve_process
from tests.support.waiting_callers import (
    A2a,
    Attempts,
    HandshakeMcp,
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
"""``--max-waiting-per-caller``: calls one caller (here: every anonymous one) may have waiting."""
TOTAL = 2 * SHARE
"""``--max-waiting``: calls all callers together may have waiting."""
SESSIONS = ATTEMPTS // 4
"""Made-up session cookies the visitor cycles through (each a page session of its own)."""
SERVICE = "service-token-0123456789"
SERVE = (
    "tests.support.waiting_app:runtime",
    "--mcp", "http", "--a2a", "--webmcp", "--native-token", SERVICE,
    "--max-waiting-per-caller", str(SHARE), "--max-waiting", str(TOTAL),
    "--keep-alive", "120",  # the client's idle connections stay usable between the phases
    "--audit-durable",  # each answer comes once its entry is stored: the file can be read
)  # fmt: skip
AT_THE_CAP = f"({SHARE}, the most one caller may have waiting)"


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
async def server(tmp_path: Path) -> AsyncIterator[tuple[str, Path]]:
    audit = tmp_path / "audit.jsonl"
    said = Lines()
    async with serve_process(*SERVE, "--audit", f"jsonl:{audit}", stderr=said) as origin:
        yield origin, audit
    assert not [line for line in said if "Traceback" in line], said  # nothing ended badly


async def test_an_anonymous_visitor_with_many_sessions_holds_one_share_and_locks_nobody_out(
    server: tuple[str, Path],
) -> None:
    origin, audit = server
    http, others = Http(origin, 32), Http(origin, 4)
    visitor = Page(http, sessions=SESSIONS)
    tried: list[Attempts] = []
    async with anyio.create_task_group() as tg:  # the others are served meanwhile

        async def attempts() -> None:
            tried.append(await attempt_all(visitor, ATTEMPTS))

        tg.start_soon(attempts)
        tg.start_soon(_others_are_served_everywhere, others)
    (got,) = tried

    assert len(got.waiting) == SHARE, got.refused[:3]  # one share, however many sessions
    assert len(got.refused) == ATTEMPTS - SHARE
    refusals = Counter(got.refused)
    assert all(AT_THE_CAP in text and "nothing was sent" in text for text in refusals), refusals

    await _others_are_served_everywhere(others)  # while the share is held
    refused = await ModernMcp(others, None).attempt(0)  # the share is every anonymous caller's
    assert isinstance(refused, str), refused
    assert AT_THE_CAP in refused
    task = await A2a(others, None).send("note", {"text": "hold"})
    assert task["status"]["state"] == "TASK_STATE_REJECTED", task_text(task)
    assert AT_THE_CAP in task_text(task)

    for waiting in got.waiting:
        ended = await visitor.let_go(waiting)
        assert ended["structuredContent"]["reason"] == "declined", result_text(ended)
    asked = await ModernMcp(others, None).attempt(0)  # the share is free again
    assert isinstance(asked, Waiting), asked
    declined = await ModernMcp(others, None).let_go(asked)
    assert declined["structuredContent"]["reason"] == "declined", declined
    http.close()
    others.close()

    entries = audit_entries(audit)
    mine = of(entries, capability="note", transport="webmcp")
    assert len({e["invocation_id"] for e in mine}) == len(mine) == ATTEMPTS  # each once
    assert Counter((e["decision"], e["outcome"], e["approval"]) for e in mine) == {
        ("refused", "AgentApprovalError", "unavailable"): ATTEMPTS - SHARE,
        ("refused", "AgentApprovalError", "declined"): SHARE,
    }
    assert not of(entries, capability="note", decision="dispatched")  # nothing was sent


async def _others_are_served_everywhere(http: Http) -> None:
    """Anonymous callers over MCP in both eras, A2A and a new page visit, and the service
    over the Agent Native endpoint: each lists or calls and is answered."""
    modern = ModernMcp(http, None)
    listed = await modern.post("tools/list", {})
    assert {"add_item", "note", "rename_item"} <= {t["name"] for t in listed["tools"]}
    called = await modern.call("add_item", {"title": "bread"})
    assert called["isError"] is False, called

    handshake = await HandshakeMcp(http, None).open()
    called = await handshake.request(
        "tools/call", {"name": "add_item", "arguments": {"title": "eggs"}}
    )
    assert called["isError"] is False, called

    task = await A2a(http, None).send("add_item", {"title": "jam"})
    assert task["status"]["state"] == "TASK_STATE_COMPLETED", task_text(task)

    page = Page(http, sessions=1)
    answered = await page.invoke(page.sessions[0], "add_item", {"title": "tea"})
    assert answered.status == 200, answered.text
    assert answered.json()["isError"] is False, answered.text

    service = {"Authorization": f"Bearer {SERVICE}", "Content-Type": "application/json"}
    r = await http.request("POST", "/native/invoke/add_item", service, {"title": "rice"})
    assert r.status == 200, r.text
    assert r.json()["isError"] is False, r.text

    context = (await http.request("GET", "/agent/context", {})).json()["context"]
    assert {"bread", "eggs", "jam", "tea", "rice"} <= set(context["items"])
