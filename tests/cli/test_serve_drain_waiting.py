"""SIGTERM with calls waiting for a person, on a real ``foldkit-agent serve``: each is answered
at once that nothing was sent, and audited once, whatever the drain deadline.

One call of ``note`` (``confirm=True``, :mod:`tests.support.waiting_app`) waits on each
transport that can put a question to a person: a handshake-era MCP call eliciting on its own
stream, a 2026-era MCP call and an A2A task parked between requests, and a signed-in person's
page call parked with ``202``. The drain deadline is an hour: a server that waited for the
people would never exit within the test.
"""

from __future__ import annotations

import asyncio
from collections import Counter
from pathlib import Path

import anyio

from tests.support.serving import Lines, serve_process
from tests.support.waiting_callers import (
    A2a,
    HandshakeMcp,
    Holder,
    Http,
    ModernMcp,
    Page,
    Waiting,
    audit_entries,
    of,
    result_text,
)

ALICE = "alice-token-0123456789"
DAVE = "dave-token-0123456789"


async def test_sigterm_answers_every_call_waiting_for_a_person_and_audits_each_once(
    tmp_path: Path,
) -> None:
    audit = tmp_path / "audit.jsonl"
    said = Lines()
    procs: list[asyncio.subprocess.Process] = []
    args = (
        "--mcp", "http", "--a2a", "--webmcp",
        "--token", f"{ALICE}=alice", "--token", f"{DAVE}=dave",
        "--drain-timeout", "3600",
        "--audit", f"jsonl:{audit}", "--audit-durable",
    )  # fmt: skip
    async with serve_process(
        "tests.support.waiting_app:runtime", *args, stderr=said, process=procs
    ) as origin:
        http = Http(origin, 8)
        handshake = await HandshakeMcp(http, ALICE).open()
        holders: list[Holder] = [handshake, ModernMcp(http, ALICE), A2a(http, ALICE)]
        holders.append(Page(http, sessions=1, token=DAVE))
        waiting: list[Waiting] = []
        for holder in holders:
            got = await holder.attempt(0)
            assert isinstance(got, Waiting), (holder.transport, got)  # put to a person
            waiting.append(got)

        (proc,) = procs
        proc.terminate()
        stream = waiting[0].stream
        assert stream is not None
        with anyio.fail_after(60):
            while "id" not in (answer := await stream.message()):
                pass  # the handshake-era call's own stream carries its answer
            assert await proc.wait() == 0
        http.close()

    text = result_text(answer["result"])
    assert answer["result"]["isError"] is True, answer
    assert "shutting down" in text, text
    assert "nothing was sent" in text, text
    entries = of(audit_entries(audit), capability="note")
    assert Counter(e["transport"] for e in entries) == Counter(h.transport for h in holders)
    assert {(e["decision"], e["outcome"]) for e in entries} == {("refused", "AgentCancelledError")}
    assert len({e["invocation_id"] for e in entries}) == len(holders)  # each once
    assert not [line for line in said if "Traceback" in line], said
