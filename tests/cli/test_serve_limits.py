"""``foldkit-agent serve``'s per-caller flags reach the adapters: two callers, one at its cap."""

from __future__ import annotations

import os
import subprocess
import sys
from contextlib import AsyncExitStack
from pathlib import Path

import httpx
import pytest
from typer.testing import CliRunner

from foldkit_agent.cli import app
from tests.support.hostile import MODERN_META, mcp_call_body, mcp_headers
from tests.support.mcp_helpers import INITIALIZE
from tests.support.paths import ROOT
from tests.support.serving import serve_process

CLI = str(Path(sys.executable).parent / "foldkit-agent")

TOKENS = ["--token", "alice-token=alice", "--token", "bob-token=bob"]


def _headers(token: str) -> dict[str, str]:
    return {"Accept": "application/json, text/event-stream", "Authorization": f"Bearer {token}"}


async def test_serve_max_sessions_per_caller_refuses_alice_and_lets_bob_in() -> None:
    async with (
        serve_process(
            "examples.todo:runtime", "--mcp", "http", *TOKENS, "--max-sessions-per-caller", "1"
        ) as origin,
        httpx.AsyncClient(base_url=origin, timeout=30) as hc,
    ):
        first = await hc.post("/mcp", json=INITIALIZE, headers=_headers("alice-token"))
        assert first.status_code == 200
        second = await hc.post("/mcp", json=INITIALIZE, headers=_headers("alice-token"))
        assert second.status_code == 429
        assert "per-caller cap 1" in second.json()["error"]["message"]
        bob = await hc.post("/mcp", json=INITIALIZE, headers=_headers("bob-token"))
        assert bob.status_code == 200


async def test_serve_a2a_answers_a_9900_value_body_and_still_refuses_a_missing_message_id() -> None:
    # The SDK's own required-field walk is replaced by check_required_fields (adapters/a2a/
    # _sdk.py): the refusal of a message without its id is the same, the large body is answered.
    from foldkit_agent.adapters.a2a import EXTENSION_URI

    def send(message: dict[str, object]) -> dict[str, object]:
        params = {"message": message, "metadata": {EXTENSION_URI: {"skill": "create_todo"}}}
        return {"jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": params}

    values = {f"f{n}": "y" * 85 for n in range(9_900)}
    large = send({"role": "ROLE_USER", "messageId": "m", "parts": [{"data": values}]})
    unnamed = send({"role": "ROLE_USER", "parts": [{"data": {"title": "x"}}]})
    headers = {"A2A-Version": "1.0"}
    async with (
        serve_process("examples.todo:runtime", "--a2a") as origin,
        httpx.AsyncClient(base_url=origin, timeout=60) as hc,
    ):
        answer = (await hc.post("/a2a/jsonrpc", json=large, headers=headers)).json()
        status = answer["result"]["task"]["status"]
        assert status["state"] == "TASK_STATE_REJECTED"
        assert "title: missing required field" in status["message"]["parts"][0]["text"]
        refused = (await hc.post("/a2a/jsonrpc", json=unnamed, headers=headers)).json()
        assert refused["error"]["code"] == -32602
        assert "do not match the A2A 1.0 schema" in refused["error"]["message"]


LISTEN = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "subscriptions/listen",
    "params": {"_meta": MODERN_META, "notifications": {"toolsListChanged": True}},
}


def _listen_headers(token: str) -> dict[str, str]:
    modern = {"MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "subscriptions/listen"}
    return {**_headers(token), **modern}


async def test_serve_at_max_streams_ends_alices_oldest_idle_stream_for_bob() -> None:
    caps = ["--max-streams", "2", "--max-streams-per-caller", "2"]
    async with (
        serve_process("examples.todo:runtime", "--mcp", "http", *TOKENS, *caps) as origin,
        httpx.AsyncClient(base_url=origin, timeout=30) as hc,
        AsyncExitStack() as stack,
    ):
        alice = [
            await stack.enter_async_context(
                hc.stream("POST", "/mcp", json=LISTEN, headers=_listen_headers("alice-token"))
            )
            for _ in range(2)
        ]
        assert [r.status_code for r in alice] == [200, 200]  # alice holds the server's cap
        bob = await stack.enter_async_context(
            hc.stream("POST", "/mcp", json=LISTEN, headers=_listen_headers("bob-token"))
        )
        assert bob.status_code == 200  # not a 503: the longest idle stream made room
        async for _chunk in alice[0].aiter_bytes():  # her oldest ends, as a complete body
            pass
        assert alice[0].is_stream_consumed
        # at the cap again (alice's newer stream and bob's): the longest idle is now alice's
        # newer one, opened before bob's, and it makes room in turn
        third = await stack.enter_async_context(
            hc.stream("POST", "/mcp", json=LISTEN, headers=_listen_headers("alice-token"))
        )
        assert third.status_code == 200
        async for _chunk in alice[1].aiter_bytes():
            pass
        assert alice[1].is_stream_consumed


async def test_serve_webmcp_gives_each_page_session_its_own_share_of_event_streams() -> None:
    async with (
        serve_process(
            "examples.todo:runtime", "--webmcp", "--max-streams-per-caller", "1"
        ) as origin,
        httpx.AsyncClient(base_url=origin, timeout=30) as page_a,
        httpx.AsyncClient(base_url=origin, timeout=30) as page_b,
        httpx.AsyncClient(base_url=origin, timeout=30) as made_up,
        AsyncExitStack() as stack,
    ):
        for page in (page_a, page_b):
            assert (await page.get("/agent/session")).status_code == 200  # sets its cookie
        opened = await stack.enter_async_context(page_a.stream("GET", "/agent/events"))
        assert opened.status_code == 200
        refused = await page_a.get("/agent/events")
        assert refused.status_code == 429  # page A is at its share ...
        assert "per-caller cap 1" in refused.json()["structuredContent"]["message"]
        other = await stack.enter_async_context(page_b.stream("GET", "/agent/events"))
        assert other.status_code == 200  # ... and page B still gets its own
        # a cookie the server never handed a token to is the one anonymous caller
        made_up.cookies.set("foldkit_agent_sid", "made-up")
        anonymous = await stack.enter_async_context(made_up.stream("GET", "/agent/events"))
        assert anonymous.status_code == 200
        assert (await made_up.get("/agent/events")).status_code == 429


async def test_anonymous_page_sessions_share_one_small_pool_and_an_mcp_caller_still_calls() -> None:
    # Page sessions are free to mint: however many a stranger mints, their events streams
    # together stay within --max-page-streams, so connections stay free for callers with a
    # token; and a freshly minted session never ends another page's only stream (it is refused
    # instead), so minting cannot make other pages' live updates churn.
    caps = ["--max-page-streams", "2", "--max-streams", "2", "--max-connections", "8",
            "--max-waiting-per-caller", "2"]  # fmt: skip
    # no --token: with tokens the page answers only a signed-in person, so no stranger mints
    args = ["--mcp", "http", "--webmcp", "--max-streams-per-caller", "1", *caps]
    async with (
        serve_process("examples.todo:runtime", *args) as origin,
        AsyncExitStack() as stack,
    ):
        pages = [
            await stack.enter_async_context(httpx.AsyncClient(base_url=origin, timeout=30))
            for _ in range(3)
        ]
        streams: list[httpx.Response] = []
        for page in pages[:2]:
            assert (await page.get("/agent/session")).status_code == 200
            streams.append(await stack.enter_async_context(page.stream("GET", "/agent/events")))
        assert [s.status_code for s in streams] == [200, 200]
        assert (await pages[2].get("/agent/session")).status_code == 200
        full = await pages[2].get("/agent/events")  # the pool holds 2, one per session
        assert full.status_code == 503
        assert "cap 2" in full.text, full.text
        refused = await pages[0].get("/agent/events")  # and each session is at its share
        assert refused.status_code == 429
        async with httpx.AsyncClient(base_url=origin, timeout=30) as hc:
            answer = await hc.post(
                "/mcp",
                content=mcp_call_body('"create_todo"', '{"title": "Milk"}'),
                headers=mcp_headers(token="alice-token"),
            )
        assert answer.status_code == 200, answer.text[:300]
        assert '"status":"completed"' in answer.text.replace(" ", ""), answer.text[:300]
        for stream in streams:  # both pages' streams lived on and carry the change
            assert await _next_event(stream, "change")


async def _next_event(stream: httpx.Response, name: str) -> bool:
    """Whether ``stream`` carries an event ``name`` before it ends."""
    async for line in stream.aiter_lines():
        if line.strip() == f"event: {name}":
            return True
    return False


@pytest.mark.parametrize(
    "caps",
    [
        ["--max-connections", "300"],  # the default MCP 256 + page 64 reach it
        ["--max-streams", "10", "--max-page-streams", "10", "--max-connections", "20"],
    ],
)
def test_f15_serve_refuses_stream_caps_that_reach_max_connections(caps: list[str]) -> None:
    args = ["serve", "examples.todo:runtime", "--mcp", "http", "--webmcp", *caps]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 2
    assert "which reaches --max-connections" in result.output
    assert "Traceback" not in result.output


@pytest.mark.parametrize(
    ("caps", "said"),
    [
        (
            ["--max-calls-per-caller", "2000"],
            "--max-calls-per-caller must be at most --max-calls (1024), got 2000: "
            "lower it or raise --max-calls",
        ),
        (
            ["--max-waiting-per-caller", "17", "--max-waiting", "4"],
            "--max-waiting-per-caller must be at most --max-waiting (4), got 17",
        ),
    ],
)
def test_serve_refuses_a_callers_share_above_the_total_in_one_line_and_exit_2(
    caps: list[str], said: str
) -> None:
    done = subprocess.run(
        [CLI, "serve", "examples.todo:runtime", "--mcp", "http", *caps],
        cwd=ROOT,
        env={**os.environ, "NO_COLOR": "1", "COLUMNS": "200"},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 2, done.stderr
    assert said in done.stderr
    assert "Traceback" not in done.stderr + done.stdout
