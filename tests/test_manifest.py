"""agent.json and AGENT.md: complete, read nothing from a Model, and byte-identical everywhere."""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
from typing import Any

import pytest
from pydantic import BaseModel, Field

from examples.todo import AppAgent
from foldkit_agent import Message, agent, message_union, projection, surface
from foldkit_agent.manifest import (
    TOKEN_ESTIMATOR,
    canonical_json,
    estimate_tokens,
    manifest_json,
    to_manifest,
    to_markdown,
)
from tests.support.paths import ROOT


def test_the_manifest_lists_every_capability_with_what_an_agent_needs() -> None:
    m = to_manifest(AppAgent)
    assert m["manifest_version"] == 4
    names = [c["name"] for c in m["capabilities"]]
    assert names == [c.name for c in AppAgent.capabilities]  # declaration order
    create = m["capabilities"][0]
    assert set(create) == {
        "name",
        "tag",
        "title",
        "description",
        "hints",
        "input_schema",
        "model_dependent",
        "has_authorize",
        "scopes",
        "approval",
        "approval_request",
        "completion",
        "size",
        "schema_size",
    }
    assert create["tag"] == "RequestedCreateTodo"
    assert create["input_schema"]["additionalProperties"] is False
    assert create["completion"] == {
        "kind": "message",
        "success": "SavedTodo",
        "failure": "FailedToSaveTodo",
        "correlated": True,
        "timeout_seconds": 5.0,
    }
    by_name = {c["name"]: c for c in m["capabilities"]}
    assert by_name["rename_todo"]["completion"] == {
        "kind": "state",
        "watches": ["todos"],
        "source": False,
        "timeout_seconds": 2.0,
    }
    assert by_name["toggle_todo"]["completion"] == {"kind": "none"}
    assert (by_name["delete_todo"]["has_authorize"], by_name["delete_todo"]["model_dependent"]) == (
        True,
        True,
    )
    assert (create["has_authorize"], create["model_dependent"]) == (False, False)
    assert [r["name"] for r in m["resources"]] == ["todos"]
    assert m["context"]["schema"] == agent.context_schema(AppAgent)


def test_introspection_says_which_capabilities_require_authorization_under_both_names() -> None:
    listed = {m["name"]: m for m in agent.messages(AppAgent)}
    assert {n: m["requires_authorization"] for n, m in listed.items()} == {
        "create_todo": False,
        "rename_todo": False,
        "toggle_todo": False,
        "select_todo": False,
        "clear_selection": False,
        "delete_todo": True,
    }
    assert all(m["has_authorize"] is m["requires_authorization"] for m in listed.values())


def test_sizes_are_canonical_json_bytes_and_tokens_are_a_quarter_rounded_up() -> None:
    m = to_manifest(AppAgent)
    for cap in m["capabilities"]:
        shown = {k: cap[k] for k in ("name", "description", "input_schema")}
        shown["hints"] = {k: v for k, v in cap["hints"].items() if v is not None}
        if cap["title"] is not None:
            shown["title"] = cap["title"]
        n = len(canonical_json(shown))
        assert cap["size"] == {"bytes": n, "tokens": math.ceil(n / 4)}
    for res in m["resources"]:
        shown = {k: res[k] for k in ("name", "description", "schema")}
        assert res["size"]["bytes"] == len(canonical_json(shown))
    size = m["size"]
    assert size["estimator"] == TOKEN_ESTIMATOR
    assert size["capabilities"]["bytes"] == sum(c["size"]["bytes"] for c in m["capabilities"])
    parts = ("capabilities", "resources", "context")
    total = sum(size[p]["bytes"] for p in parts)
    assert size["total"] == {"bytes": total, "tokens": estimate_tokens(total)}
    for cap in m["capabilities"]:
        n = len(canonical_json(cap["input_schema"]))
        assert cap["schema_size"] == {"bytes": n, "tokens": estimate_tokens(n)}
    schemas = sum(c["schema_size"]["bytes"] for c in m["capabilities"])
    assert size["schemas"] == {"bytes": schemas, "tokens": estimate_tokens(schemas)}
    assert [estimate_tokens(n) for n in (0, 1, 4, 5)] == [0, 1, 1, 2]


def test_canonical_json_counts_utf8_bytes_not_characters() -> None:
    assert canonical_json({"b": "ä", "a": 1}) == '{"a":1,"b":"ä"}'.encode()
    assert len(canonical_json("ä")) == 4


def test_the_manifest_and_docs_read_nothing_from_a_model() -> None:
    class Model(BaseModel, frozen=True):
        items: tuple[str, ...] = ()

    class Added(Message):
        item: str = Field(description="The item | with a pipe")

    union = message_union(Added)
    app = surface.application(model=Model, message=union)
    b = agent.for_application(app)

    def never(_m: Model) -> bool:
        raise AssertionError("the manifest evaluated a predicate")

    d = b.make(
        context=projection.pick(app.model.items),
        messages=b.expose(union, {Added: b.variant(description="Add", available=never)}),
    )
    m = to_manifest(d)  # no host, no Model: nothing to read
    assert m["capabilities"][0]["model_dependent"] is True
    text = to_markdown(d)
    assert "The item \\| with a pipe." in text  # table cells stay one cell


def test_a_contract_without_context_or_resources_still_documents() -> None:
    class Model(BaseModel, frozen=True):
        n: int = 0

    class Reset(Message):
        pass

    union = message_union(Reset)
    b = agent.for_model(Model, union)
    d = b.make(messages=b.expose(union, {Reset: "Start over"}))
    m = to_manifest(d)
    assert m["context"] is None
    assert m["resources"] == []
    assert m["size"]["context"] == {"bytes": 0, "tokens": 0}
    text = to_markdown(d)
    assert "This contract declares no context." in text
    assert "Takes no input: send `{}`." in text


def test_a_non_definition_is_refused() -> None:
    with pytest.raises(TypeError, match=r"agent\.make"):
        to_manifest({"capabilities": []})  # type: ignore[arg-type]


def test_agent_md_is_titled_after_the_application_not_the_model_class() -> None:
    text = to_markdown(AppAgent, source="examples.todo:AppAgent")
    assert text.startswith("# Agent contract: todo\n")
    assert "regenerate with `foldkit-agent docs examples.todo:AppAgent -o AGENT.md`" in text
    assert to_markdown(AppAgent).startswith("# Agent contract\n")
    assert "Model" not in to_markdown(AppAgent).splitlines()[0]


def test_agent_md_documents_each_capability_field_and_the_budget() -> None:
    text = to_markdown(AppAgent)
    assert text.endswith("\n")
    assert not text.endswith("\n\n")
    for cap in AppAgent.capabilities:
        assert f"### `{cap.name}`" in text
        assert cap.description in text
    assert (
        "| `title` | string | yes | What needs doing, with no leading or trailing space. "
        "1–200 characters; matches `" in text
    )
    assert "(its input schema: " in text
    assert "are their input schemas." in text
    assert "| `todos[].completed` | boolean | no | Default `false`. |" in text
    assert "| `selected_todo_id` | string or null | yes |  |" in text
    assert "on a Message: `SavedTodo`, fails on `FailedToSaveTodo` (timeout 5 s)" in text
    assert "## Size budget" in text


def test_agent_json_is_the_sorted_two_space_dump_with_a_final_newline() -> None:
    text = manifest_json(AppAgent)
    assert text == json.dumps(to_manifest(AppAgent), sort_keys=True, indent=2) + "\n"


_PRINT_BOTH = (
    "import sys; from examples.todo import AppAgent; "
    "from foldkit_agent.manifest import manifest_json, to_markdown; "
    "sys.stdout.buffer.write(manifest_json(AppAgent).encode() + b'\\0' "
    "+ to_markdown(AppAgent).encode())"
)


def _generate_in_subprocess(seed: str) -> bytes:
    env = {**os.environ, "PYTHONHASHSEED": seed, "PYTHONPATH": f"{ROOT}{os.pathsep}{ROOT / 'src'}"}
    done = subprocess.run(
        [sys.executable, "-c", _PRINT_BOTH], cwd=ROOT, env=env, capture_output=True, check=True
    )
    return done.stdout


def test_manifest_and_docs_are_byte_identical_across_processes_and_hash_seeds() -> None:
    outputs: dict[str, Any] = {seed: _generate_in_subprocess(seed) for seed in ("0", "1", "4242")}
    here = manifest_json(AppAgent).encode() + b"\0" + to_markdown(AppAgent).encode()
    assert set(outputs.values()) == {here}


def test_the_committed_todo_files_are_current() -> None:
    assert (ROOT / "examples/todo/agent.json").read_text(encoding="utf-8") == manifest_json(
        AppAgent
    )
    assert (ROOT / "examples/todo/AGENT.md").read_text(encoding="utf-8") == to_markdown(AppAgent)
