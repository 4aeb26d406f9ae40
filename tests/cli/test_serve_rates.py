"""``serve --rate-limit``: one caller past its rate is answered 429 with ``Retry-After`` at the
edge guard, audited with that caller's principal, while another caller is served
(edge/rates.py, edge/guard.py)."""

from __future__ import annotations

import json
from pathlib import Path

import anyio
import httpx
import pytest

from foldkit_agent.adapters.web.csrf import CSRF_HEADER
from tests.support.hostile import mcp_call_body, mcp_headers
from tests.support.serving import serve_process

pytestmark = pytest.mark.anyio

ALICE = "alice-token-0123456789abcdef"
BOB = "bob-token-0123456789abcdefgh"


async def test_one_tokens_1000_calls_get_429s_past_its_rate_while_another_token_is_served(
    tmp_path: Path,
) -> None:
    audit = tmp_path / "audit.jsonl"
    flags = ("--mcp", "http", "--token", f"{ALICE}=alice", "--token", f"{BOB}=bob")
    limit = ("--rate-limit", "100/minute", "--audit", f"jsonl:{audit}")
    body = mcp_call_body('"create_todo"', json.dumps({"title": "Milk"}))
    statuses: list[int] = []
    retry_after: set[str] = set()
    async with (
        serve_process("examples.todo:runtime", *flags, *limit) as origin,
        httpx.AsyncClient(base_url=origin, timeout=60) as http,
    ):

        async def call(token: str, content: bytes = body) -> httpx.Response:
            return await http.post("/mcp", content=content, headers=mcp_headers(token=token))

        async def alice(calls: int) -> None:
            for _ in range(calls):
                r = await call(ALICE)
                statuses.append(r.status_code)
                if r.status_code == 429:
                    retry_after.add(r.headers["retry-after"])
                    assert "Retry after" in r.json()["error"]["message"]

        async with anyio.create_task_group() as tg:
            for _ in range(20):
                tg.start_soon(alice, 50)
        titles = [json.dumps({"title": f"Bob's {n}"}) for n in range(5)]
        bob = [await call(BOB, mcp_call_body('"create_todo"', t)) for t in titles]
    assert len(statuses) == 1000
    assert statuses.count(200) == 100
    assert statuses.count(429) == 900
    assert all(1 <= int(seconds) <= 60 for seconds in retry_after)
    assert [r.status_code for r in bob] == [200] * 5
    assert all('"isError":false' in r.text.replace(" ", "") for r in bob), bob[0].text[:600]
    entries = [json.loads(line) for line in audit.read_text().splitlines()]
    refused = [e for e in entries if e["decision"] == "refused"]
    assert len(refused) == 900
    assert {(e["capability"], e["outcome"], e["principal"]) for e in refused} == {
        ("create_todo", "AgentCapabilityUnavailableError", "alice")  # whose calls were limited
    }
    assert sum(e["decision"] == "dispatched" for e in entries) == 105


async def test_the_pages_429s_are_audited_with_the_signed_in_persons_principal(
    tmp_path: Path,
) -> None:
    audit = tmp_path / "audit.jsonl"
    flags = ("--webmcp", "--token", f"{ALICE}=alice", "--rate-limit", "4/minute")
    async with (
        serve_process("examples.todo:runtime", *flags, "--audit", f"jsonl:{audit}") as origin,
        httpx.AsyncClient(base_url=origin, timeout=60, headers={"Origin": origin}) as page,
    ):
        signed = await page.post("/console/sign-in", json={"token": ALICE})
        assert signed.status_code == 200, signed.text
        csrf = {CSRF_HEADER: (await page.get("/agent/session")).json()["csrfToken"]}
        statuses = [
            (
                await page.post("/agent/invoke/create_todo", json={"title": f"t{n}"}, headers=csrf)
            ).status_code
            for n in range(6)
        ]
    assert 429 in statuses
    entries = [json.loads(line) for line in audit.read_text().splitlines()]
    refused = [e for e in entries if e["decision"] == "refused"]
    assert len(refused) == statuses.count(429)
    assert {(e["transport"], e["capability"], e["principal"]) for e in refused} == {
        ("webmcp", "create_todo", "alice")
    }
