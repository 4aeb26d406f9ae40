"""Approval declarations and the values that cross the approver seam (DESIGN §11)."""

from __future__ import annotations

from typing import Any

import pytest

from foldkit_agent import (
    AgentApprovalError,
    AgentContractError,
    AgentError,
    Approval,
    ApprovalRequest,
    Invocation,
    agent,
    projection,
    surface,
)
from tests.support.approval_app import App, Contract, Msg, RemovedItem
from tests.support.counter import Incremented, Reset
from tests.support.counter import Msg as CounterMsg


def test_confirm_true_a_predicate_and_false_are_declared_as_always_conditional_and_none() -> None:
    by_name = Contract.by_name
    assert by_name["remove_item"].approval == "always"
    assert by_name["add_item"].approval == "conditional"
    assert by_name["rename_item"].approval == "none"
    d = agent.make(
        messages=agent.expose(CounterMsg, {Reset: agent.variant(description="r", confirm=False)})
    )
    assert d.by_name["reset"].confirm is None
    assert d.by_name["reset"].approval == "none"


def test_the_manifest_and_introspection_say_which_capabilities_ask_a_person() -> None:
    manifest = {c["name"]: c["approval"] for c in agent.to_manifest(Contract)["capabilities"]}
    assert manifest == {
        "add_item": "conditional",
        "remove_item": "always",
        "rename_item": "none",
        "note": "always",
    }
    assert [m["approval"] for m in agent.messages(Contract)] == [
        "conditional",
        "always",
        "none",
        "always",
    ]
    markdown = agent.to_markdown(Contract)
    assert "- Approval: asks a person before every call is sent" in markdown
    assert "- Approval: asks a person before some calls are sent" in markdown


@pytest.mark.parametrize("bad", ["yes", 1, 0.5, ["always"]])
def test_a_confirm_that_is_neither_a_bool_nor_a_callable_fails_at_expose_naming_the_variant(
    bad: Any,
) -> None:
    with pytest.raises(AgentContractError) as info:
        agent.expose(CounterMsg, {Incremented: agent.variant(description="Add", confirm=bad)})
    assert info.value.capability == "Incremented"
    assert "confirm=" in info.value.message


def test_agent_action_takes_confirm_and_checks_it_at_expose() -> None:
    act = surface.action(name="take", description="Take an item", message=RemovedItem)
    d = agent.make(
        context=projection.pick(App.model.items),
        messages=agent.expose(Msg, {RemovedItem: agent.action(act, confirm=True)}),
    )
    assert d.by_name["take"].approval == "always"
    with pytest.raises(AgentContractError, match="confirm="):
        agent.expose(Msg, {RemovedItem: agent.action(act, confirm="please")})


def test_an_invocation_has_no_approver_unless_the_transport_supplies_one() -> None:
    async def approver(request: ApprovalRequest) -> Approval:
        return Approval(approved=True)

    assert Invocation().approver is None
    assert Invocation(approver=approver).approver is approver


@pytest.mark.parametrize("reason", ["declined", "timeout", "unavailable"])
def test_approval_errors_cross_the_wire_as_json_and_say_nothing_was_sent(reason: str) -> None:
    err = AgentApprovalError(
        capability="remove_item", reason=reason, timeout=300.0 if reason == "timeout" else None
    )
    data = err.to_json()
    assert data["_tag"] == "AgentApprovalError"
    assert (data["capability"], data["reason"]) == ("remove_item", reason)
    assert "'remove_item'" in err.message
    assert "nothing was sent" in err.message
    again = AgentError.from_json(data)
    assert isinstance(again, AgentApprovalError)
    assert again == err
    assert again.reason == reason


def test_the_unavailable_refusal_says_the_connection_cannot_ask_a_person() -> None:
    err = AgentApprovalError(capability="remove_item", reason="unavailable")
    assert "cannot ask" in err.message
    assert "needs a person's approval" in err.message


def test_the_timeout_refusal_names_how_long_it_waited() -> None:
    err = AgentApprovalError(capability="remove_item", reason="timeout", timeout=300.0)
    assert "within 300 s" in err.message
    assert err.timeout == 300.0


def test_an_unknown_approval_reason_is_a_programming_error() -> None:
    with pytest.raises(ValueError, match="approval reason"):
        AgentApprovalError(capability="remove_item", reason="maybe")


def test_an_approval_request_renders_as_json_and_as_text_for_a_person() -> None:
    request = ApprovalRequest(
        capability="remove_item",
        title="Remove item",
        description="Remove an item from the shelf",
        input={"title": "milk"},
        message=RemovedItem(title="milk"),
        preview=[{"op": "remove", "path": "/items/0"}],
        summary='removes items.0 (was "milk")',
        fields=(("Title", "milk"),),
    )
    data = request.to_json()
    assert data == {
        "capability": "remove_item",
        "title": "Remove item",
        "description": "Remove an item from the shelf",
        "sentence": None,
        "fields": [{"label": "Title", "value": "milk"}],
        "input": {"title": "milk"},
        "message": {"_tag": "RemovedItem", "title": "milk"},
        "preview": [{"op": "remove", "path": "/items/0"}],
        "summary": 'removes items.0 (was "milk")',
        "effects": [],
        "asks": 1,
        "text": request.text(),
    }
    assert request.text().splitlines() == [
        'Approve "Remove item" (remove_item)?',
        "Remove an item from the shelf",
        "  Title: milk",
        'Change: removes items.0 (was "milk")',
        "Nothing is sent unless you approve.",
    ]
    assert request.shown() == "Remove item (Title: milk)"


def test_a_request_never_shows_the_messages_tag_form_or_an_id_the_agent_did_not_send() -> None:
    """F32: the prompt showed {"_tag": "RequestedArchiveDone", "request_id": "8c5b…"}."""
    request = ApprovalRequest(
        capability="remove_item",
        title="Remove item",
        description="Remove an item",
        input={},
        message=RemovedItem(title="internal-8c5b-9"),
        preview=[],
        summary="no change to what the agent sees",
    )
    assert "_tag" not in request.text()
    assert "internal-8c5b-9" not in request.text()
    assert request.shown() == "Remove item"


def test_a_sentence_from_describe_replaces_the_fields_and_the_effects_follow_the_change() -> None:
    request = ApprovalRequest(
        capability="archive_done",
        title="Archive done cards",
        description="Archive every done card",
        input={},
        message=RemovedItem(title="x"),
        preview=[{"op": "remove", "path": "/cards/0"}],
        summary="removes cards.0",
        sentence="Archive 3 done cards",
        fields=(("Board", "main"),),
        effects=("saves to the server",),
        asks=2,
    )
    assert request.text().splitlines() == [
        'Approve "Archive done cards" (archive_done)?',
        "The application changed while you decided; this is the new preview.",
        "Archive 3 done cards",
        "Change: removes cards.0",
        "Then: saves to the server",
        "Nothing is sent unless you approve.",
    ]
    assert request.shown() == "Archive 3 done cards"


@pytest.mark.parametrize(
    ("hidden", "shown"),
    [
        ("\u202e", "⟨U+202E⟩"),
        ("\u2028", "⟨U+2028⟩"),
        ("\u2029", "⟨U+2029⟩"),
        ("\x85", "⟨U+0085⟩"),
        ("\n", "⟨U+000A⟩"),
        ("\u200b", "⟨U+200B⟩"),
        ("\u2066", "⟨U+2066⟩"),
    ],
)
def test_control_bidi_and_line_separators_from_an_agent_are_visible_in_every_rendering(
    hidden: str, shown: str
) -> None:
    """F36: a title with U+202E read "…present" for "…\u202etneserp"."""
    text = f"cheap{hidden}tneserp"
    request = ApprovalRequest(
        capability="remove_item",
        title=text,
        description="Remove an item",
        input={"title": text},
        message=RemovedItem(title=text),
        preview=[{"op": "add", "path": "/items/0", "value": text}],
        summary=f"adds items.0 = {text}",
        sentence=text,
        fields=(("Title", text),),
        effects=(text,),
    )
    rendered = request.text()
    assert all(hidden not in line for line in rendered.split("\n"))
    assert f"cheap{shown}tneserp" in rendered
    assert len(rendered.splitlines()) == 5  # head, sentence, change, then, the last line
    data = request.to_json()
    for key in ("title", "sentence", "summary"):
        assert hidden not in data[key], key
    assert data["fields"] == [{"label": "Title", "value": f"cheap{shown}tneserp"}]
    assert data["effects"] == [f"cheap{shown}tneserp"]
    assert hidden not in request.shown()


def test_markup_is_kept_as_the_characters_it_is() -> None:
    from foldkit_agent.contract.visible import visible

    assert visible("<b>bold</b> & é 中文 🙂") == "<b>bold</b> & é 中文 🙂"


def test_a_request_without_a_preview_says_there_is_none() -> None:
    request = ApprovalRequest(
        capability="remove_item",
        title="remove_item",
        description="Remove an item",
        input={"title": "milk"},
        message=RemovedItem(title="milk"),
        preview=None,
    )
    lines = request.text().splitlines()
    assert lines[0] == "Approve remove_item?"
    assert lines[2] == "Preview: not available (the application cannot simulate this change)."


def test_describe_and_preview_are_checked_at_expose() -> None:
    with pytest.raises(AgentContractError, match="describe= takes a function") as info:
        agent.expose(
            CounterMsg,
            {Reset: agent.variant(description="r", confirm=True, describe="Reset")},  # type: ignore[arg-type]
        )
    assert info.value.capability == "Reset"
    with pytest.raises(AgentContractError, match="add confirm=True"):
        agent.expose(
            CounterMsg, {Reset: agent.variant(description="r", describe=lambda r: "Reset")}
        )
    with pytest.raises(AgentContractError, match="preview= is shown to a person"):
        agent.expose(CounterMsg, {Reset: agent.variant(description="r", preview=lambda r: [])})


def test_the_manifest_says_whether_describe_and_preview_are_declared() -> None:
    act = surface.action(name="take", description="Take an item", message=RemovedItem)
    d = agent.make(
        context=projection.pick(App.model.items),
        messages=agent.expose(
            Msg,
            {RemovedItem: agent.action(act, confirm=True, describe=lambda r: "Take it")},
        ),
    )
    (cap,) = agent.to_manifest(d)["capabilities"]
    assert cap["approval_request"] == {"describe": True, "preview": False}


def test_a_confirm_capability_without_a_context_is_refused_at_make_naming_the_fix() -> None:
    """F32: a preview that can never show a change is a declaration error, not a prompt."""
    with pytest.raises(AgentContractError) as info:
        agent.make(
            messages=agent.expose(Msg, {RemovedItem: agent.variant(description="r", confirm=True)})
        )
    assert info.value.capability == "removed_item"
    assert "give make(context=...) a projection of what the call changes" in info.value.message
