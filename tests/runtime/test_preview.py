"""Approval previews: the change to the context as a JSON Patch and a summary (DESIGN §11)."""

from __future__ import annotations

from typing import Any

import jsonpatch  # pyright: ignore[reportMissingTypeStubs]
from hypothesis import given
from hypothesis import strategies as st

from foldkit_agent import Host, projection
from foldkit_agent.runtime.preview import diff, preview_of, summarize_patch
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
    patch, summary = preview_of(host, Items, snapshot, RemovedItem(title="eggs"), "remove_item")
    assert patch == [{"op": "remove", "path": "/items/1"}]
    assert summary == 'removes items.1 (was "eggs")'


def test_there_is_no_preview_without_simulate_or_without_a_context() -> None:
    snapshot = Model(items=("milk",))
    plain = Host(model=lambda: snapshot, dispatch=lambda m: None)
    assert preview_of(plain, Items, snapshot, RemovedItem(title="milk"), "remove_item") == (
        None,
        None,
    )
    able = Host(model=lambda: snapshot, dispatch=lambda m: None, simulate=lambda m: snapshot)
    assert preview_of(able, None, snapshot, RemovedItem(title="milk"), "remove_item") == (
        None,
        None,
    )


def test_a_simulation_that_raises_gives_no_preview_and_does_not_raise() -> None:
    def broken(message: Any) -> Any:
        raise RuntimeError("update failed")

    snapshot = Model(items=("milk",))
    host = Host(model=lambda: snapshot, dispatch=lambda m: None, simulate=broken)
    assert preview_of(host, Items, snapshot, RemovedItem(title="milk"), "remove_item") == (
        None,
        None,
    )
