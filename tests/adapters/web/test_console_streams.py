"""The console's live ``events`` streams: a share per signed-in person, however many
sessions they open, within the server's total."""

from __future__ import annotations

from typing import Any

import pytest
from starlette.requests import Request
from starlette.routing import Route

from examples.todo import run_todo
from foldkit_agent import CallsInFlight
from foldkit_agent.adapters.web.console.app import (
    CONSOLE_STREAMS,
    CONSOLE_STREAMS_PER_PERSON,
    console_app,
)
from foldkit_agent.adapters.web.signin import PERSON_COOKIE, People
from foldkit_agent.edge.tokens import Grant, TokenTable

pytestmark = pytest.mark.anyio

ALICE = "alice-token-0123456789"
CAROL = "carol-token-0123456789"


def _events(app: Any) -> Any:
    (route,) = [r for r in app.routes if isinstance(r, Route) and r.path == "/console/events"]
    return route.endpoint


def _request(sid: str) -> Request:
    cookie = f"{PERSON_COOKIE}={sid}".encode()
    return Request(
        {"type": "http", "method": "GET", "path": "/console/events", "query_string": b"",
         "headers": [(b"cookie", cookie)]}
    )  # fmt: skip


async def test_one_person_with_many_sessions_holds_only_their_share_of_streams() -> None:
    tokens = TokenTable({ALICE: Grant("alice"), CAROL: Grant("carol", ("approver",))})
    people = People(tokens)
    async with run_todo() as (_running, rt):
        events = _events(console_app(rt, calls=CallsInFlight(), people=people))
        alice = [people.sign_in(ALICE) for _ in range(CONSOLE_STREAMS // 4)]
        answers = [(await events(_request(sid))).status_code for sid in alice for _ in range(4)]
        assert answers.count(200) == CONSOLE_STREAMS_PER_PERSON  # her share, then 429s
        assert set(answers[CONSOLE_STREAMS_PER_PERSON:]) == {429}
        carol = people.sign_in(CAROL)
        assert carol is not None
        assert (await events(_request(carol))).status_code == 200  # the approver still watches
