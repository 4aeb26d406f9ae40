"""Approval over MCP: the official client's elicitation callback in both protocol eras.

A ``confirm`` capability asks the person through form-mode elicitation (one boolean
``approve``) when the client declared elicitation; a client that did not gets the
``unavailable`` refusal, never a silent approval (DESIGN §11).
"""

from __future__ import annotations

import asyncio
from typing import Any

import anyio
import mcp.types as types
import pytest
from mcp import Client

from foldkit_agent.adapters.mcp import mcp_server
from foldkit_agent.adapters.mcp.approval import INPUT_KEY
from foldkit_agent.edge.callers import CallerLimits
from foldkit_agent.edge.calls import CallsInFlight
from tests.support.approval_app import shelf
from tests.support.waiting import HeldPerson

MODES = ["legacy", "auto"]  # "auto" discovers and speaks 2026-07-28


class Person:
    """An elicitation callback standing for the person at the client: answers with ``reply``."""

    def __init__(self, reply: types.ElicitResult) -> None:
        self.reply = reply
        self.asked: list[types.ElicitRequestFormParams] = []

    async def __call__(self, context: Any, params: Any) -> types.ElicitResult:
        assert isinstance(params, types.ElicitRequestFormParams)
        self.asked.append(params)
        return self.reply


APPROVE = types.ElicitResult(action="accept", content={"approve": True})
SAY_NO = types.ElicitResult(action="accept", content={"approve": False})
MORE = types.ElicitResult(action="accept", content={"approve": True, "x": 1})  # not the form
ONE = types.ElicitResult(action="accept", content={"approve": 1})  # equals True, is not true
DECLINE = types.ElicitResult(action="decline")
CANCEL = types.ElicitResult(action="cancel")


@pytest.mark.parametrize("mode", MODES)
async def test_an_approved_elicitation_dispatches_the_message_it_showed(mode: str) -> None:
    person = Person(APPROVE)
    async with shelf("milk", "eggs") as (running, rt):
        server = mcp_server(rt, name="shelf", version="1")
        async with Client(server, mode=mode, elicitation_callback=person) as client:
            result = await client.call_tool("remove_item", {"title": "milk"})
        assert result.is_error is False
        assert running.host.model().items == ("eggs",)
        (asked,) = person.asked
        schema = asked.requested_schema
        assert (schema["required"], list(schema["properties"])) == (
            ["approve"],
            ["approve", "message", "title"],
        )
        assert schema["properties"]["title"] == {
            "type": "string",
            "title": "Title",
            "description": "Change it to send the call with your value instead",
            "default": "milk",
        }
        assert asked.message.splitlines() == [
            "Approve remove_item?",
            "Remove an item from the shelf",
            "  Title: milk",
            'Change: removes items.0 (was "milk")',
            "Nothing is sent unless you approve.",
        ]
        entry = rt.audit.entries()[-1]
        assert (entry.transport, entry.decision, entry.approval) == (
            "mcp",
            "dispatched",
            "approved",
        )
        assert entry.approved_by == "mcp client mcp"


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize(
    "reply",
    [SAY_NO, DECLINE, CANCEL, MORE, ONE],
    ids=["approve-false", "decline", "cancel", "another-field", "one-is-not-true"],
)
async def test_a_decline_or_cancel_is_refused_and_sends_nothing(
    mode: str, reply: types.ElicitResult
) -> None:
    person = Person(reply)
    async with shelf("milk") as (running, rt):
        server = mcp_server(rt, name="shelf", version="1")
        async with Client(server, mode=mode, elicitation_callback=person) as client:
            result = await client.call_tool("remove_item", {"title": "milk"})
        assert result.is_error is True
        assert result.structured_content is not None
        assert result.structured_content["_tag"] == "AgentApprovalError"
        assert result.structured_content["reason"] == "declined"
        assert len(person.asked) == 1
        assert running.applied == 0
        assert rt.audit.entries()[-1].approval == "declined"


@pytest.mark.parametrize("mode", MODES)
async def test_a_client_without_elicitation_is_refused_as_unavailable(mode: str) -> None:
    async with shelf("milk") as (running, rt):
        server = mcp_server(rt, name="shelf", version="1")
        async with Client(server, mode=mode) as client:
            result = await client.call_tool("remove_item", {"title": "milk"})
        assert result.is_error is True
        assert result.structured_content is not None
        assert result.structured_content["reason"] == "unavailable"
        text = result.content[0]
        assert isinstance(text, types.TextContent)
        assert "cannot ask" in text.text
        assert running.applied == 0
        assert rt.audit.entries()[-1].approval == "unavailable"


@pytest.mark.parametrize("mode", MODES)
async def test_capabilities_without_confirm_never_elicit(mode: str) -> None:
    person = Person(DECLINE)
    async with shelf("milk") as (running, rt):
        server = mcp_server(rt, name="shelf", version="1")
        async with Client(server, mode=mode, elicitation_callback=person) as client:
            result = await client.call_tool("rename_item", {"title": "milk", "to": "oat milk"})
        assert result.is_error is False
        assert person.asked == []
        assert running.host.model().items == ("oat milk",)


async def test_a_modern_call_parks_until_the_answer_and_the_state_is_single_use() -> None:
    async with shelf("milk") as (running, rt):
        server = mcp_server(rt, name="shelf", version="1")
        async with Client(server, mode="auto", elicitation_callback=Person(APPROVE)) as client:
            assert client.protocol_version == "2026-07-28"
            first = await client.session.call_tool(
                "remove_item", {"title": "milk"}, allow_input_required=True
            )
            assert isinstance(first, types.InputRequiredResult)
            assert first.input_requests is not None
            assert set(first.input_requests) == {INPUT_KEY}
            assert running.applied == 0  # parked: nothing sent while the person decides
            assert rt.pending() == 1
            state = first.request_state
            assert state is not None
            # Someone replaying a state for another tool, or a made-up state, gets nothing.
            wrong = await client.session.call_tool(
                "note",
                {"text": "x"},
                input_responses={INPUT_KEY: APPROVE},
                request_state=state,
                allow_input_required=True,
            )
            assert isinstance(wrong, types.CallToolResult)
            assert wrong.is_error is True
            assert running.applied == 0
            done = await client.session.call_tool(
                "remove_item",
                {"title": "milk"},
                input_responses={INPUT_KEY: APPROVE},
                request_state=state,
                allow_input_required=True,
            )
            assert isinstance(done, types.CallToolResult)
            assert done.is_error is False
            assert running.host.model().items == ()
            again = await client.session.call_tool(
                "remove_item",
                {"title": "milk"},
                input_responses={INPUT_KEY: APPROVE},
                request_state=state,
                allow_input_required=True,
            )
            assert isinstance(again, types.CallToolResult)
            assert again.is_error is True
            assert running.applied == 1
            assert rt.pending() == 0


async def test_a_parked_call_that_is_never_resumed_times_out_with_nothing_sent() -> None:
    async with shelf("milk", approval_timeout=0.05) as (running, rt):
        server = mcp_server(rt, name="shelf", version="1")
        async with Client(server, mode="auto", elicitation_callback=Person(APPROVE)) as client:
            first = await client.session.call_tool(
                "remove_item", {"title": "milk"}, allow_input_required=True
            )
            assert isinstance(first, types.InputRequiredResult)
            adapter = server._foldkit_adapter  # type: ignore[attr-defined]  # pyright: ignore[reportAttributeAccessIssue]
            await asyncio.wait(set(adapter.calls.parked.tasks()))
            assert len(adapter.calls.parked) == 0
            late = await client.session.call_tool(
                "remove_item",
                {"title": "milk"},
                input_responses={INPUT_KEY: APPROVE},
                request_state=first.request_state,
                allow_input_required=True,
            )
            assert isinstance(late, types.CallToolResult)
            assert late.is_error is True
        assert running.applied == 0
        assert rt.audit.entries()[-1].approval == "timeout"


@pytest.mark.parametrize("mode", MODES)
async def test_a_caller_past_its_share_of_waiting_calls_is_refused_without_being_asked(
    mode: str,
) -> None:
    held = HeldPerson()
    calls = CallsInFlight(CallerLimits(waiting_per_caller=2))
    async with shelf("milk") as (running, rt):
        server = mcp_server(rt, name="shelf", version="1", calls=calls)
        async with Client(server, mode=mode, elicitation_callback=held) as client:
            async with anyio.create_task_group() as tg:
                for _ in range(2):
                    tg.start_soon(client.call_tool, "remove_item", {"title": "milk"})
                await held.asked_at_least(2)
                over = await client.call_tool("remove_item", {"title": "milk"})
                held.release()
        assert over.is_error is True
        assert over.structured_content is not None
        assert over.structured_content["reason"] == "unavailable"
        assert held.asked == 2  # the third question never reached the person
        assert running.host.model().items == ("milk",)
        assert (len(calls), len(calls.waiting)) == (0, 0)  # every place given back


async def test_a_caller_past_its_calls_in_flight_is_answered_at_once_and_audited() -> None:
    calls = CallsInFlight(CallerLimits(calls_per_caller=1))
    async with shelf("milk") as (running, rt):
        server = mcp_server(rt, name="shelf", version="1", calls=calls)
        async with Client(server) as client:
            holding = calls.running.take("anonymous")  # one call of this caller in flight
            over = await client.call_tool("rename_item", {"title": "milk", "to": "oat"})
            holding.release()
            served = await client.call_tool("rename_item", {"title": "milk", "to": "oat"})
        assert over.is_error is True
        assert over.structured_content is not None
        assert (over.structured_content["status"], over.structured_content["code"]) == (
            "refused",
            "caller-limit",
        )
        text = over.content[0]
        assert isinstance(text, types.TextContent)
        assert text.text.startswith(
            "Refused: rename_item was not started: Anonymous callers already hold 1"
        )
        assert served.is_error is False
        assert running.host.model().items == ("oat",)
        refused = rt.audit.entries()[-2]
        assert (refused.transport, refused.decision, refused.outcome) == (
            "mcp",
            "refused",
            "AgentCapabilityUnavailableError",
        )
