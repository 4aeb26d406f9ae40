"""Approval previews: the change to the context as a JSON Patch and a summary (DESIGN §11)."""

from __future__ import annotations

from typing import Any

import jsonpatch  # pyright: ignore[reportMissingTypeStubs]
from hypothesis import given
from hypothesis import strategies as st

from foldkit_agent import Host, projection
from foldkit_agent.runtime.preview import NO_PREVIEW, diff, preview_of, summarize_patch
from tests.support.approval_app import App, Model, RemovedItem, update

Items = projection.pick(App.model.items)


def test_a_removal_is_one_remove_operation_with_what_was_there() -> None:
    before = {"items": ["milk", "eggs"]}
    patch = diff(before, {"items": ["eggs"]})
    assert patch == [{"op": "remove", "path": "/items/0"}]
    assert summarize_patch(before, patch) == 'removes items.0 (was "milk")'


def test_adds_and_replacements_name_the_values() -> None:
    before = {"items": ["milk"], "selected": "milk"}
    after = {"items": ["milk", "tea"], "selected": None}
    patch = diff(before, after)
    assert sorted(patch, key=lambda op: op["path"]) == [
        {"op": "add", "path": "/items/1", "value": "tea"},
        {"op": "replace", "path": "/selected", "value": None},
    ]
    text = summarize_patch(before, patch)
    assert 'adds items.1 = "tea"' in text
    assert 'changes selected from "milk" to null' in text


def test_no_change_says_so() -> None:
    assert diff({"a": 1}, {"a": 1}) == []
    assert summarize_patch({"a": 1}, []) == "no change to what the agent sees"


def test_a_long_patch_is_summarized_in_five_changes_and_a_count() -> None:
    before = {f"k{i}": i for i in range(8)}
    after = {f"k{i}": i + 1 for i in range(8)}
    text = summarize_patch(before, diff(before, after))
    assert text.count("changes ") == 5
    assert text.endswith("; and 3 more")


def test_pointer_escapes_are_read_back_in_the_summary() -> None:
    before = {"a/b": {"c~d": 1}}
    patch = diff(before, {"a/b": {"c~d": 2}})
    assert patch == [{"op": "replace", "path": "/a~1b/c~0d", "value": 2}]
    assert summarize_patch(before, patch) == "changes a/b.c~d from 1 to 2"


def test_long_values_are_shortened_for_a_person() -> None:
    before = {"note": ""}
    text = summarize_patch(before, diff(before, {"note": "x" * 500}))
    assert len(text) < 120
    assert text.endswith("…")


json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-5, 5) | st.text(max_size=3),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=2), inner, max_size=3)
    ),
    max_leaves=12,
)


@given(
    st.dictionaries(st.text(max_size=3), json_values, max_size=4),
    st.dictionaries(st.text(max_size=3), json_values, max_size=4),
)
def test_the_patch_applied_to_before_gives_after(
    before: dict[str, Any], after: dict[str, Any]
) -> None:
    patch = diff(before, after)
    assert jsonpatch.apply_patch(before, patch) == after  # pyright: ignore[reportUnknownMemberType]
    assert isinstance(summarize_patch(before, patch), str)


def test_preview_of_diffs_the_snapshot_against_the_simulated_model() -> None:
    snapshot = Model(items=("milk", "eggs"))
    host = Host(
        model=lambda: snapshot, dispatch=lambda m: None, simulate=lambda m: update(snapshot, m)
    )
    shown = preview_of(host, Items, snapshot, RemovedItem(title="eggs"), "remove_item")
    patch, summary = shown.patch, shown.summary
    assert patch == [{"op": "remove", "path": "/items/1"}]
    assert summary == 'removes items.1 (was "eggs")'


def test_there_is_no_preview_without_simulate_or_without_a_context() -> None:
    snapshot = Model(items=("milk",))
    plain = Host(model=lambda: snapshot, dispatch=lambda m: None)
    shown = preview_of(plain, Items, snapshot, RemovedItem(title="milk"), "remove_item")
    assert shown == NO_PREVIEW
    able = Host(model=lambda: snapshot, dispatch=lambda m: None, simulate=lambda m: snapshot)
    assert preview_of(able, None, snapshot, RemovedItem(title="milk"), "remove_item") == NO_PREVIEW


def test_a_simulation_that_raises_gives_no_preview_and_does_not_raise() -> None:
    def broken(message: Any) -> Any:
        raise RuntimeError("update failed")

    snapshot = Model(items=("milk",))
    host = Host(model=lambda: snapshot, dispatch=lambda m: None, simulate=broken)
    assert preview_of(host, Items, snapshot, RemovedItem(title="milk"), "remove_item") == NO_PREVIEW


async def test_a_request_command_result_capability_previews_the_results_change() -> None:
    """F32: archive_done previewed "no change" when its work ends in a command's Message."""
    from foldkit_agent import Approval, ApprovalRequest, Invocation, Program, agent
    from tests.support import kanban

    asked: list[ApprovalRequest] = []

    async def person(request: ApprovalRequest) -> Approval:
        asked.append(request)
        return Approval(approved=True, by="ann")

    program = Program(init=kanban.STARTING, update=kanban.update, message=kanban.Msg)
    async with program.run() as running:
        rt = agent.bind(definition=kanban.Contract, host=running.host, audit=agent.audit_log())
        outcome = await rt.call("archive_done", {}, Invocation(approver=person))
        assert outcome.ok is True
        await running.settled()
        assert [c.id for c in running.model().cards] == ["c2"]
        (request,) = asked
        assert request.sentence == "Archive 2 done cards"
        assert request.summary is not None
        assert request.summary.startswith('removes cards.0 (was {"id": "c1", "title": "Write spec"')
        assert "removes cards.1" in request.summary
        assert request.effects == ()
        assert "request_id" not in request.text()
        assert "_tag" not in request.text()
        assert rt.audit is not None
        (entry,) = rt.audit.entries()
        assert (entry.approval, entry.approval_text, entry.approval_asks) == (
            "approved",
            "Archive 2 done cards",
            1,
        )


async def test_an_external_effect_is_named_and_preview_declares_its_outcome() -> None:
    from foldkit_agent import Approval, ApprovalRequest, Invocation, Program, agent
    from tests.support import kanban

    asked: list[ApprovalRequest] = []

    async def person(request: ApprovalRequest) -> Approval:
        asked.append(request)
        return Approval(approved=False)

    program = Program(init=kanban.STARTING, update=kanban.update, message=kanban.Msg)
    kanban.saved.clear()
    async with program.run() as running:
        rt = agent.bind(definition=kanban.Contract, host=running.host)
        outcome = await rt.call("publish", {}, Invocation(approver=person))
        assert outcome.ok is False
        await running.settled()
        assert kanban.saved == []  # declined: the effect never ran
    (request,) = asked
    assert request.effects == ("saves to the server",)
    assert request.summary == "changes published from false to true"
    assert "Then: saves to the server" in request.text().splitlines()
    assert request.fields == ()  # no input: the title alone, never the internal request id
    assert request.shown() == "Publish the board"
