"""``a2a_app`` reads the server's shared ``HttpOptions``: its caps bound the default task store,
its tokens guard every route but the card."""

from __future__ import annotations

import httpx

from examples.todo import run_todo
from foldkit_agent import CallerLimits, HttpOptions
from foldkit_agent.adapters.a2a import CARD_PATH, JSONRPC_PATH, a2a_app
from foldkit_agent.edge import Grant, TokenTable

BASE = "http://127.0.0.1:8000"


async def test_the_default_task_store_holds_to_the_shared_caps() -> None:
    caps = CallerLimits(tasks=7, tasks_per_caller=3, task_max_age=60.0)
    async with run_todo() as (_running, rt):
        app = a2a_app(rt, name="t", version="1", base_url=BASE, options=HttpOptions(caps=caps))
    store = app.state.a2a_task_store
    assert (store.max_tasks, store.max_per_caller, store.max_age) == (7, 3, 60.0)


async def test_shared_tokens_are_required_everywhere_but_the_card() -> None:
    tokens = TokenTable({"alice-token-0123": Grant("alice", ())})
    async with run_todo() as (_running, rt):
        app = a2a_app(rt, name="t", version="1", base_url=BASE, options=HttpOptions(tokens=tokens))
        async with (
            app.router.lifespan_context(app),
            httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url=BASE) as http,
        ):
            body = {"jsonrpc": "2.0", "id": 1, "method": "GetTask", "params": {"id": "t"}}
            headers = {"A2A-Version": "1.0"}
            assert (await http.get(CARD_PATH)).status_code == 200
            assert (await http.post(JSONRPC_PATH, json=body, headers=headers)).status_code == 401
            bearer = {**headers, "Authorization": "Bearer alice-token-0123"}
            assert (await http.post(JSONRPC_PATH, json=body, headers=bearer)).status_code == 200
