"""``available_when=``: the declared clause that says when a capability is available, checked
at declaration and shown in listings, the manifest, AGENT.md and the refusal (DESIGN §15)."""

from __future__ import annotations

import pytest

from foldkit_agent import AgentCapabilityUnavailableError, AgentContractError, Program
from foldkit_agent.manifest.data import to_manifest
from foldkit_agent.manifest.markdown import to_markdown
from tests.support.field_todo import (
    SELECTED,
    DeletedSelected,
    FieldAgent,
    FieldContract,
    FieldMessage,
    Model,
    update,
)


def declared(**keywords: object) -> object:
    return FieldAgent.expose(
        FieldMessage,
        {DeletedSelected: FieldAgent.variant(description="Delete it.", **keywords)},  # type: ignore[arg-type]
    )


def test_a_capability_lists_its_description_then_when_it_is_available() -> None:
    cap = FieldContract.by_name["delete_todo"]
    assert cap.available_when == SELECTED
    assert cap.listed_description == f"Delete the selected todo. Available only when {SELECTED}."
    assert FieldContract.by_name["select_todo"].listed_description == "Select a todo by its id."


@pytest.mark.parametrize(
    ("keywords", "said"),
    [
        ({"available_when": "a todo is selected"}, "so it needs available="),
        ({"available": bool, "available_when": "  "}, "takes one line of at most 200"),
        ({"available": bool, "available_when": "one\ntwo"}, "takes one line of at most 200"),
        ({"available": bool, "available_when": "x" * 201}, "takes one line of at most 200"),
        ({"available": bool, "available_when": 7}, "takes one line of at most 200"),
    ],
)
def test_a_bad_available_when_is_refused_at_declaration(
    keywords: dict[str, object], said: str
) -> None:
    with pytest.raises(AgentContractError, match=said):
        declared(**keywords)


def test_the_clause_is_kept_trimmed_and_without_its_full_stop() -> None:
    exposed = declared(available=bool, available_when="  a todo is selected.  ")
    (cap,) = exposed.capabilities  # type: ignore[attr-defined]
    assert cap.available_when == "a todo is selected"


def test_the_manifest_and_agent_md_say_when_it_is_available() -> None:
    by_name = {c["name"]: c for c in to_manifest(FieldContract)["capabilities"]}
    assert by_name["delete_todo"]["available_when"] == SELECTED
    assert "available_when" not in by_name["select_todo"]  # only where declared
    assert f"- Availability: only when {SELECTED}" in to_markdown(FieldContract)


async def test_a_call_while_unavailable_is_refused_naming_what_makes_it_available() -> None:
    program: Program[Model, object] = Program(init=Model(), update=update, message=FieldMessage)
    async with program.run() as running:
        rt = FieldAgent.bind(definition=FieldContract, host=running.host)
        with pytest.raises(AgentCapabilityUnavailableError) as raised:
            await rt.messages.dispatch("delete_todo", {})
        outcome = await rt.call("delete_todo", {})
        rt.close()
    assert raised.value.available_when == SELECTED
    assert raised.value.message == (
        "'delete_todo' is not available in the application's current state; it is available "
        f"only when {SELECTED}. Make that so first (the context shows the state), then call it "
        "again."
    )
    assert outcome.text == "Refused: " + raised.value.message
    assert outcome.data["available_when"] == SELECTED
    assert AgentCapabilityUnavailableError.from_json(raised.value.to_json()) == raised.value
