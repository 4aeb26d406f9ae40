"""Approval on the page surface: the page's person answers while the agent's call waits
parked, holding no request (§11).

Same-origin + CSRF on the answer; only the same session sees, answers or reads a request; every
anonymous page together is one caller for the cap on calls waiting for a person; a service
caller is refused as unavailable unless the surface trusts its statement that a person
approved.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import anyio
import httpx
import pytest
from starlette.requests import Request

from foldkit_agent.adapters.web.surface import (
    APPROVED_HEADER,
    CSRF_HEADER,
    SESSION_COOKIE,
    CsrfTokens,
    agent_surface,
)
from foldkit_agent.edge.callers import CallerLimits
from foldkit_agent.edge.calls import CallsInFlight
from tests.support.approval_app import shelf
from tests.support.web_serving import serve
from tests.support.web_surface import next_event

BASE = "http://127.0.0.1:8000"
SECRET = b"0123456789abcdef-approval"
CSRF = CsrfTokens(SECRET)
PEOPLE = {"s-ann": "ann", "s-ben": "ben"}


class Person:
    def __init__(self, name: str) -> None:
        self.name = name


def session_of(request: Request) -> str | None:
    sid = request.cookies.get("sid")
    return sid if sid in PEOPLE else None


def credentials_of(request: Request) -> Any:
    sid = session_of(request)
    return Person(PEOPLE[sid]) if sid else None


@asynccontextmanager
async def surface(*items: str, **options: Any) -> AsyncIterator[tuple[Any, Any, Any]]:
    async with shelf(*items) as (running, rt):
        app = agent_surface(
            rt,
            credentials_of=credentials_of,
            session_of=session_of,
            csrf_secret=SECRET,
            service_auth=lambda token: "native" if token == "svc" else None,
            **options,
        )
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url=BASE) as client:
            yield running, rt, client


def page(sid: str) -> dict[str, Any]:
    """What a page of session ``sid`` sends: its cookie, its CSRF token, same origin."""
    return {"headers": {"cookie": f"sid={sid}", CSRF_HEADER: CSRF.token_for(sid), "origin": BASE}}


async def waiting_for(client: httpx.AsyncClient, sid: str) -> list[dict[str, Any]]:
    """The session's waiting approvals, once there is one (polled through the public route)."""
    with anyio.fail_after(10):
        while True:
            got = (await client.get("/approvals", headers={"cookie": f"sid={sid}"})).json()
            got = got["approvals"]
            if got:
                return got
            await asyncio.sleep(0)


async def call(client: httpx.AsyncClient, sid: str, name: str, body: Any) -> dict[str, Any]:
    """What the bridge does for one ``execute``: the invoke, and for a call parked for the
    person, its own answer once it has one (polled through the public route)."""
    response = await client.post(f"/invoke/{name}", json=body, **page(sid))
    if response.status_code != 202:
        return response.json()
    return (await answer_of(client, sid, response.json()["structuredContent"]["call"])).json()


async def answer_of(client: httpx.AsyncClient, sid: str, key: str) -> httpx.Response:
    """``GET calls/<key>`` once the call has ended (polled through the public route)."""
    with anyio.fail_after(10):
        while True:
            got = await client.get(f"/calls/{key}", headers={"cookie": f"sid={sid}"})
            if got.status_code != 202:
                return got
            await asyncio.sleep(0)


async def test_the_person_in_the_page_approves_and_the_waiting_call_sends_it() -> None:
    async with surface("milk", "eggs") as (running, rt, client):
        invoke = asyncio.ensure_future(call(client, "s-ann", "remove_item", {"title": "milk"}))
        (shown,) = await waiting_for(client, "s-ann")
        assert shown["capability"] == "remove_item"
        assert shown["preview"] == [{"op": "remove", "path": "/items/0"}]
        assert 'removes items.0 (was "milk")' in shown["text"]
        assert running.applied == 0
        answer = await client.post(
            f"/approvals/{shown['id']}", json={"approve": True}, **page("s-ann")
        )
        # answered once the call took its step: the Message was sent
        assert answer.json() == {
            "ok": True,
            "approved": True,
            "outcome": "dispatched",
            "text": "remove_item was dispatched: the application received its Message.",
        }
        result = await invoke
        assert result["isError"] is False
        assert running.host.model().items == ("eggs",)
        entry = rt.audit.entries()[-1]
        assert (entry.transport, entry.approval, entry.approved_by) == ("webmcp", "approved", "ann")


async def test_a_parked_call_is_answered_202_at_once_and_its_own_answer_is_read_once() -> None:
    async with surface("milk") as (running, _rt, client):
        parked = await client.post("/invoke/remove_item", json={"title": "milk"}, **page("s-ann"))
        assert parked.status_code == 202
        waiting = parked.json()
        assert waiting["isError"] is False
        assert waiting["structuredContent"]["status"] == "waiting"
        assert waiting["structuredContent"]["capability"] == "remove_item"
        assert waiting["structuredContent"]["approval"]["input"] == {"title": "milk"}
        key = waiting["structuredContent"]["call"]
        (shown,) = await waiting_for(client, "s-ann")
        assert shown["id"] == key
        ann, ben = {"cookie": "sid=s-ann"}, {"cookie": "sid=s-ben"}
        assert (await client.get(f"/calls/{key}", headers=ann)).status_code == 202
        assert (await client.get(f"/calls/{key}", headers=ben)).status_code == 404
        await client.post(f"/approvals/{key}", json={"approve": True}, **page("s-ann"))
        read = await answer_of(client, "s-ann", key)
        assert read.status_code == 200
        assert read.json()["isError"] is False
        assert read.json()["structuredContent"]["capability"] == "remove_item"
        assert running.applied == 1
        assert (await client.get(f"/calls/{key}", headers=ann)).status_code == 404  # read once


async def test_the_events_stream_says_when_a_parked_call_ended() -> None:
    async with shelf("milk") as (_running, rt):
        app = agent_surface(
            rt, credentials_of=credentials_of, session_of=session_of, csrf_secret=SECRET
        )
        async with serve(app) as url, httpx.AsyncClient(base_url=url, timeout=10) as client:
            origin = {"origin": url}
            async with client.stream("GET", "/events", headers={"cookie": "sid=s-ann"}) as r:
                lines = r.aiter_lines()
                assert (await next_event(lines))[0] == "ready"
                headers = {**page("s-ann")["headers"], **origin}
                parked = await client.post(
                    "/invoke/remove_item", json={"title": "milk"}, headers=headers
                )
                key = parked.json()["structuredContent"]["call"]
                event, data = await next_event(lines)
                assert (event, [a["id"] for a in data["approvals"]]) == ("approvals", [key])
                await client.post(f"/approvals/{key}", json={"approve": False}, headers=headers)
                seen = [await next_event(lines) for _ in range(2)]
                assert ("ended", {"id": key}) in seen
            answer = await client.get(f"/calls/{key}", headers={"cookie": "sid=s-ann"})
            assert answer.json()["structuredContent"]["reason"] == "declined"


@pytest.mark.parametrize("ending", ["aborted", "cancelled"])
async def test_a_parked_call_that_ends_unanswered_withdraws_its_question_from_the_page(
    ending: str,
) -> None:
    """Aborted (the server stopping, the drain deadline) or its task cancelled at shutdown: the
    session's list no longer shows the question, on its events stream and ``GET approvals``,
    and the session's share of calls waiting for a person is whole again."""
    async with shelf("milk") as (running, rt):
        calls = CallsInFlight(CallerLimits(waiting_per_caller=1))
        app = agent_surface(
            rt, credentials_of=credentials_of, session_of=session_of, csrf_secret=SECRET,
            calls=calls,
        )  # fmt: skip
        async with serve(app) as url, httpx.AsyncClient(base_url=url, timeout=10) as client:
            headers = {**page("s-ann")["headers"], "origin": url}
            ann = {"cookie": "sid=s-ann"}
            async with client.stream("GET", "/events", headers=ann) as r:
                lines = r.aiter_lines()
                assert (await next_event(lines))[0] == "ready"
                parked = await client.post("/invoke/note", json={"text": "x"}, headers=headers)
                key = parked.json()["structuredContent"]["call"]
                event, data = await next_event(lines)
                assert (event, [a["id"] for a in data["approvals"]]) == ("approvals", [key])
                if ending == "aborted":
                    await calls.abort(5, "webmcp")
                else:
                    (call,) = calls.parked.tasks()
                    call.cancel()
                with anyio.fail_after(10):  # a guard against hanging, not a timing
                    assert await next_event(lines) == ("approvals", {"approvals": []})
                    if ending == "aborted":  # answered: the page reads why, once
                        assert await next_event(lines) == ("ended", {"id": key})
            assert (await client.get("/approvals", headers=ann)).json() == {"approvals": []}
            answer = await client.get(f"/calls/{key}", headers=ann)
            if ending == "aborted":
                assert answer.json()["structuredContent"]["_tag"] == "AgentCancelledError"
            else:
                assert answer.status_code == 404  # no answer to keep
            again = await client.post("/invoke/note", json={"text": "y"}, headers=headers)
            assert again.status_code == 202  # the share (1) is free again
            await calls.abort(5)
        assert running.applied == 0


async def test_made_up_sessions_are_one_anonymous_caller_for_the_calls_waiting_for_a_person() -> (
    None
):
    async with shelf("milk") as (running, rt):
        calls = CallsInFlight(CallerLimits(waiting_per_caller=2))
        app = agent_surface(rt, csrf_secret=SECRET, calls=calls)
        async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url=BASE) as c:

            async def anonymous(sid: str) -> httpx.Response:
                headers = {"cookie": f"{SESSION_COOKIE}={sid}", CSRF_HEADER: CSRF.token_for(sid)}
                return await c.post("/invoke/remove_item", json={"title": "milk"}, headers=headers)

            first, second, third = [await anonymous(f"made-up-{n}") for n in range(3)]
            assert [first.status_code, second.status_code] == [202, 202]
            refused = third.json()
            assert third.status_code == 200
            assert refused["isError"] is True
            assert refused["structuredContent"]["reason"] == "unavailable"
            assert "(2" in refused["content"][0]["text"]  # names the cap it reached
            assert running.applied == 0
            await calls.abort(5)


async def test_a_decline_refuses_the_call_and_sends_nothing() -> None:
    async with surface("milk") as (running, _rt, client):
        invoke = asyncio.ensure_future(call(client, "s-ann", "remove_item", {"title": "milk"}))
        (shown,) = await waiting_for(client, "s-ann")
        await client.post(f"/approvals/{shown['id']}", json={"approve": False}, **page("s-ann"))
        result = await invoke
        assert result["isError"] is True
        assert result["structuredContent"]["reason"] == "declined"
        assert running.applied == 0


async def test_another_session_neither_sees_nor_answers_the_request() -> None:
    async with surface("milk") as (running, _rt, client):
        invoke = asyncio.ensure_future(call(client, "s-ann", "remove_item", {"title": "milk"}))
        (shown,) = await waiting_for(client, "s-ann")
        assert (await client.get("/approvals", headers={"cookie": "sid=s-ben"})).json() == {
            "approvals": []
        }
        stolen = await client.post(
            f"/approvals/{shown['id']}", json={"approve": True}, **page("s-ben")
        )
        assert stolen.status_code == 404
        assert running.applied == 0
        await client.post(f"/approvals/{shown['id']}", json={"approve": False}, **page("s-ann"))
        assert (await invoke)["structuredContent"]["reason"] == "declined"


@pytest.mark.parametrize(
    ("change", "status"),
    [
        pytest.param(
            {"headers": {"cookie": "sid=s-ann", CSRF_HEADER: "forged", "origin": BASE}},
            403,
            id="bad-csrf",
        ),
        pytest.param(
            {
                "headers": {
                    "cookie": "sid=s-ann",
                    CSRF_HEADER: CSRF.token_for("s-ann"),
                    "origin": "http://evil.test",
                }
            },
            403,
            id="cross-origin",
        ),
    ],
)
async def test_an_answer_needs_the_pages_origin_and_csrf_token(
    change: dict[str, Any], status: int
) -> None:
    async with surface("milk") as (running, _rt, client):
        invoke = asyncio.ensure_future(call(client, "s-ann", "remove_item", {"title": "milk"}))
        (shown,) = await waiting_for(client, "s-ann")
        refused = await client.post(f"/approvals/{shown['id']}", json={"approve": True}, **change)
        assert refused.status_code == status
        assert running.applied == 0
        await client.post(f"/approvals/{shown['id']}", json={"approve": False}, **page("s-ann"))
        await invoke


@pytest.mark.parametrize("body", [{"approve": "yes"}, {"approve": True, "extra": 1}, []])
async def test_an_answer_is_exactly_approve_true_or_false(body: Any) -> None:
    async with surface("milk") as (running, _rt, client):
        invoke = asyncio.ensure_future(call(client, "s-ann", "remove_item", {"title": "milk"}))
        (shown,) = await waiting_for(client, "s-ann")
        bad = await client.post(f"/approvals/{shown['id']}", json=body, **page("s-ann"))
        assert bad.status_code == 400
        assert running.applied == 0
        await client.post(f"/approvals/{shown['id']}", json={"approve": False}, **page("s-ann"))
        await invoke


@pytest.mark.parametrize("trusted", [False, True])
async def test_a_service_caller_is_unavailable_unless_trusted_to_say_a_person_approved(
    trusted: bool,
) -> None:
    async with surface("milk", trust_service_approvals=trusted) as (running, rt, client):
        response = await client.post(
            "/invoke/remove_item",
            json={"title": "milk"},
            headers={"authorization": "Bearer svc", APPROVED_HEADER: "key-1"},
        )
        result = response.json()
        if trusted:
            assert result["isError"] is False
            assert running.applied == 1
            assert rt.audit.entries()[-1].approved_by == "page session (approved in agent-native)"
        else:
            assert result["structuredContent"]["reason"] == "unavailable"
            assert running.applied == 0


def test_generated_agent_native_actions_declare_needs_approval_for_confirmed_capabilities() -> None:
    from foldkit_agent.adapters.native.codegen import contract_hash, render_action
    from tests.support.approval_app import Contract

    sha = contract_hash(Contract)
    remove = render_action(
        Contract.by_name["remove_item"], url=BASE + "/agent", contract_sha256=sha
    )
    rename = render_action(
        Contract.by_name["rename_item"], url=BASE + "/agent", contract_sha256=sha
    )
    add = render_action(Contract.by_name["add_item"], url=BASE + "/agent", contract_sha256=sha)
    assert "const NEEDS_APPROVAL = true;" in remove
    assert "needsApproval: NEEDS_APPROVAL," in remove
    assert "const NEEDS_APPROVAL = true;" in add  # a predicate: Agent Native asks every time
    assert "const NEEDS_APPROVAL = false;" in rename
    assert '"x-foldkit-approved"' in remove


async def test_an_edited_input_is_asked_again_under_the_same_id_and_sent_once() -> None:
    async with surface("milk", "eggs") as (running, rt, client):
        invoke = asyncio.ensure_future(call(client, "s-ann", "remove_item", {"title": "milk"}))
        (shown,) = await waiting_for(client, "s-ann")
        edited = await client.post(
            f"/approvals/{shown['id']}",
            json={"approve": True, "input": {"title": "eggs"}},
            **page("s-ann"),
        )
        assert (edited.json()["approved"], edited.json()["outcome"]) == (False, "asked again")
        (again,) = await waiting_for(client, "s-ann")
        assert again["id"] == shown["id"]  # the page's call keeps its one id
        assert (again["asks"], again["input"]) == (2, {"title": "eggs"})
        assert running.applied == 0
        sent = await client.post(
            f"/approvals/{again['id']}", json={"approve": True}, **page("s-ann")
        )
        assert sent.json()["approved"] is True
        assert (await invoke)["isError"] is False
        assert running.host.model().items == ("milk",)
        entry = rt.audit.entries()[-1]
        assert (entry.approval, entry.approval_asks) == ("approved", 2)
