"""The Agent Native adapter, Python side: generated actions, mcp.config.json, CLI, native_app."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from starlette.requests import Request
from typer.testing import CliRunner

from examples.todo import AppAgent, TodoAgent, User, run_todo
from examples.todo.app import RequestedCreateTodo, TodoMessage, ToggledTodo
from foldkit_agent import AgentRuntime
from foldkit_agent.adapters.native import (
    GENERATED_MARKER,
    NativeCaller,
    NativeGenerationError,
    contract_hash,
    is_generated,
    mcp_config,
    native_app,
    native_caller,
    render_actions,
    write_actions,
)
from foldkit_agent.cli import app
from tests.support.paths import ROOT

URL = "http://127.0.0.1:8000/agent"

SMALLER = TodoAgent.make(
    messages=TodoAgent.expose(
        TodoMessage,
        {RequestedCreateTodo: "Create a todo.", ToggledTodo: "Toggle a todo."},
    )
)


# -- generation ------------------------------------------------------------------------------


def test_one_marked_file_per_capability_carrying_our_schema() -> None:
    files = render_actions(AppAgent, url=URL)
    assert list(files) == [f"{c.name}.ts" for c in AppAgent.capabilities]
    digest = contract_hash(AppAgent)
    for cap in AppAgent.capabilities:
        text = files[f"{cap.name}.ts"]
        assert text.startswith(GENERATED_MARKER + ": do not edit.\n")
        assert f"// contract: sha256:{digest}\n" in text
        assert text.isascii()
        assert text.endswith("\n")
        assert "\r" not in text
        assert 'from "@agent-native/core/action"' in text
        start = text.index("const INPUT_SCHEMA = ") + len("const INPUT_SCHEMA = ")
        end = text.index(";\n", start)
        assert json.loads(text[start:end]) == cap.input_schema
        assert f"const NAME = {json.dumps(cap.name)};" in text
        assert f"description: {json.dumps(cap.description)}," in text
        assert f'const DEFAULT_URL = "{URL}";' in text
        assert "process.env.FOLDKIT_AGENT_TOKEN" in text
        assert "process.env.FOLDKIT_AGENT_URL" in text


def test_generation_is_deterministic_across_processes() -> None:
    script = (
        "import json; from examples.todo import AppAgent; "
        "from foldkit_agent.adapters.native import render_actions; "
        f"print(json.dumps(render_actions(AppAgent, url={URL!r})))"
    )
    outputs = set()
    for seed in ("0", "1", "12345"):
        env = {**os.environ, "PYTHONHASHSEED": seed}
        done = subprocess.run(
            [sys.executable, "-c", script], cwd=ROOT, env=env, capture_output=True, check=True
        )
        outputs.add(done.stdout)
    assert len(outputs) == 1
    assert json.loads(outputs.pop()) == render_actions(AppAgent, url=URL)


def test_trailing_slash_in_url_is_normalised() -> None:
    assert render_actions(AppAgent, url=URL + "/") == render_actions(AppAgent, url=URL)


@pytest.mark.parametrize(
    "url", ["ftp://host/agent", "127.0.0.1:8000", "http://u:p@host/agent", "http://h/a?x=1", ""]
)
def test_bad_urls_are_refused(url: str) -> None:
    with pytest.raises(NativeGenerationError, match="url"):
        render_actions(AppAgent, url=url)


def test_rerun_with_unchanged_contract_touches_nothing(tmp_path: Path) -> None:
    out = tmp_path / "actions"
    first = write_actions(AppAgent, out, url=URL)
    assert first.written == tuple(sorted(f"{c.name}.ts" for c in AppAgent.capabilities))
    assert first.changed
    past = 1_000_000_000
    for path in out.iterdir():
        os.utime(path, (past, past))
    before = {p.name: (p.read_bytes(), p.stat().st_mtime_ns) for p in out.iterdir()}
    again = write_actions(AppAgent, out, url=URL)
    assert not again.changed
    assert again.unchanged == first.written
    after = {p.name: (p.read_bytes(), p.stat().st_mtime_ns) for p in out.iterdir()}
    assert after == before
    assert not [p for p in out.iterdir() if p.name.startswith(".")]  # no temp files left


def test_a_changed_file_is_rewritten(tmp_path: Path) -> None:
    write_actions(AppAgent, tmp_path, url=URL)
    target = tmp_path / "create_todo.ts"
    target.write_text(target.read_text() + "// tampered\n")
    report = write_actions(AppAgent, tmp_path, url=URL)
    assert report.written == ("create_todo.ts",)
    assert target.read_text() == render_actions(AppAgent, url=URL)["create_todo.ts"]


def test_removed_capability_removes_only_its_generated_file(tmp_path: Path) -> None:
    write_actions(AppAgent, tmp_path, url=URL)
    hand = tmp_path / "view-screen.ts"
    hand.write_text('import { defineAction } from "@agent-native/core/action";\n')
    mentions = tmp_path / "notes.ts"  # mentions the marker, but not as its first line
    mentions.write_text("// a note\n" + GENERATED_MARKER + "\n")
    readme = tmp_path / "README.md"
    readme.write_text(GENERATED_MARKER + "\n")  # not an action file
    report = write_actions(SMALLER, tmp_path, url=URL)
    assert report.removed == tuple(sorted(f"{c.name}.ts" for c in AppAgent.capabilities))
    assert report.written == ("requested_create_todo.ts", "toggled_todo.ts")
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        "README.md",
        "notes.ts",
        "requested_create_todo.ts",
        "toggled_todo.ts",
        "view-screen.ts",
    ]
    assert is_generated(tmp_path / "toggled_todo.ts")
    assert not is_generated(hand)
    assert not is_generated(mentions)


def test_hand_written_file_in_the_way_is_never_overwritten(tmp_path: Path) -> None:
    hand = tmp_path / "create_todo.ts"
    hand.write_text("// my own create_todo\n")
    with pytest.raises(NativeGenerationError, match="not generated by foldkit-agent"):
        write_actions(AppAgent, tmp_path, url=URL)
    assert hand.read_text() == "// my own create_todo\n"
    assert [p.name for p in tmp_path.iterdir()] == ["create_todo.ts"]  # nothing written


def test_symlink_to_a_generated_file_is_not_ours(tmp_path: Path) -> None:
    write_actions(AppAgent, tmp_path / "a", url=URL)
    out = tmp_path / "b"
    out.mkdir()
    (out / "old_action.ts").symlink_to(tmp_path / "a" / "create_todo.ts")
    write_actions(SMALLER, out, url=URL)
    assert (out / "old_action.ts").is_symlink()


def test_out_must_be_a_folder(tmp_path: Path) -> None:
    target = tmp_path / "actions"
    target.write_text("x")
    with pytest.raises(NativeGenerationError, match="not a folder"):
        write_actions(AppAgent, target, url=URL)


@pytest.mark.parametrize("name", ["run", "helpers", "registry", "_private"])
def test_names_agent_native_would_skip_are_refused(name: str) -> None:
    contract = TodoAgent.make(
        messages=TodoAgent.expose(
            TodoMessage, {ToggledTodo: TodoAgent.variant(name=name, description="Toggle.")}
        )
    )
    with pytest.raises(NativeGenerationError, match="Agent Native skips"):
        render_actions(contract, url=URL)


def test_names_differing_only_in_case_are_refused() -> None:
    contract = TodoAgent.make(
        messages=TodoAgent.expose(
            TodoMessage,
            {
                ToggledTodo: TodoAgent.variant(name="toggle", description="Toggle."),
                RequestedCreateTodo: TodoAgent.variant(name="Toggle", description="Create."),
            },
        )
    )
    with pytest.raises(NativeGenerationError, match="differ only in case"):
        render_actions(contract, url=URL)


def test_contract_hash_follows_the_manifest() -> None:
    assert contract_hash(AppAgent) == contract_hash(AppAgent)
    assert contract_hash(AppAgent) != contract_hash(SMALLER)


# -- mcp.config.json -------------------------------------------------------------------------


def test_mcp_config_shape() -> None:
    assert mcp_config(url="http://127.0.0.1:8000/mcp", name="todo") == {
        "servers": {"todo": {"type": "http", "url": "http://127.0.0.1:8000/mcp"}}
    }
    doc = mcp_config(
        url="https://todo.example/mcp/",
        name="todo-app",
        headers={"Authorization": "Bearer t"},
        description="d",
    )
    assert doc["servers"]["todo-app"] == {
        "type": "http",
        "url": "https://todo.example/mcp",
        "headers": {"Authorization": "Bearer t"},
        "description": "d",
    }


@pytest.mark.parametrize(
    ("url", "name"), [("ftp://x/mcp", "todo"), ("http://x/mcp", "to do"), ("http://x/mcp", "")]
)
def test_mcp_config_refuses_bad_input(url: str, name: str) -> None:
    with pytest.raises(ValueError, match=r"url|server name"):
        mcp_config(url=url, name=name)


# -- command line ----------------------------------------------------------------------------

runner = CliRunner()


def test_cli_mcp_config_prints_the_document() -> None:
    result = runner.invoke(
        app,
        ["native", "mcp-config", "examples.todo:AppAgent", "--url", "http://127.0.0.1:8000/mcp"],
    )
    assert result.exit_code == 0, result.output
    doc = json.loads(result.stdout)
    entry = doc["servers"]["todo"]
    assert entry["type"] == "http"
    assert entry["url"] == "http://127.0.0.1:8000/mcp"
    assert "6 capabilities" in entry["description"]


def test_cli_mcp_config_name_and_headers() -> None:
    result = runner.invoke(
        app,
        [
            "native",
            "mcp-config",
            "examples.todo:AppAgent",
            "--url",
            "http://127.0.0.1:8000/mcp",
            "--name",
            "todos",
            "--header",
            "Authorization: Bearer abc",
        ],
    )
    assert result.exit_code == 0, result.output
    entry = json.loads(result.stdout)["servers"]["todos"]
    assert entry["headers"] == {"Authorization": "Bearer abc"}


def test_cli_actions_writes_then_reports_unchanged(tmp_path: Path) -> None:
    out = tmp_path / "actions"
    args = ["native", "actions", "examples.todo:AppAgent", "--out", str(out), "--url", URL]
    first = runner.invoke(app, args)
    assert first.exit_code == 0, first.output
    assert "6 written, 0 unchanged, 0 removed" in first.stderr
    assert sorted(p.name for p in out.iterdir()) == sorted(
        f"{c.name}.ts" for c in AppAgent.capabilities
    )
    second = runner.invoke(app, args)
    assert second.exit_code == 0
    assert "0 written, 6 unchanged, 0 removed" in second.stderr


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (["native", "actions", "examples.nope:AppAgent"], "no such module"),
        (["native", "actions", "examples.todo:Nope"], "no attribute"),
        (["native", "actions", "examples.todo"], "MODULE:ATTR"),
        (["native", "actions", "examples.todo:App"], "not an agent definition"),
        (["native", "mcp-config", "examples.todo:Nope"], "no attribute"),
    ],
)
def test_cli_target_errors_are_one_line_exit_2(
    tmp_path: Path, args: list[str], needle: str
) -> None:
    extra = ["--url", URL] + (["--out", str(tmp_path)] if args[1] == "actions" else [])
    result = runner.invoke(app, args + extra)
    assert result.exit_code == 2
    assert needle in result.stderr
    assert result.stderr.strip().count("\n") == 0
    assert "Traceback" not in result.output


def test_cli_bad_url_and_hand_written_conflict_exit_2(tmp_path: Path) -> None:
    result = runner.invoke(
        app, ["native", "actions", "examples.todo:AppAgent", "--out", str(tmp_path), "--url", "x"]
    )
    assert result.exit_code == 2
    assert "http(s) URL" in result.stderr
    (tmp_path / "delete_todo.ts").write_text("// mine\n")
    result = runner.invoke(
        app, ["native", "actions", "examples.todo:AppAgent", "--out", str(tmp_path), "--url", URL]
    )
    assert result.exit_code == 2
    assert "not generated by foldkit-agent" in result.stderr
    bad = runner.invoke(
        app,
        ["native", "mcp-config", "examples.todo:AppAgent", "--url", URL, "--header", "nocolon"],
    )
    assert bad.exit_code == 2
    assert "--header" in bad.stderr


# -- native_app: the Python side -------------------------------------------------------------

TOKEN = "native-service-token-0123456789"
USERS = {"alice@example.com": User(id="alice", can_delete=True), "bob@example.com": User(id="bob")}


def credentials_of(request: Request) -> User | None:
    caller = native_caller(request)
    if caller is None or caller.service != "mail-app" or caller.user_email is None:
        return None
    return USERS.get(caller.user_email)


@pytest.fixture
async def runtime() -> AsyncIterator[AgentRuntime[Any, Any]]:
    async with run_todo() as (_running, rt):
        yield rt


def client(application: Any) -> httpx.AsyncClient:
    return httpx.AsyncClient(
        transport=httpx.ASGITransport(app=application), base_url="http://127.0.0.1:8000"
    )


def auth(token: str = TOKEN, **caller: str) -> dict[str, str]:
    headers = {"Authorization": f"Bearer {token}"}
    names = {"user": "X-Foldkit-Principal", "org": "X-Foldkit-Org", "caller": "X-Foldkit-Caller"}
    headers.update({names[k]: v for k, v in caller.items()})
    return headers


async def test_forged_caller_without_service_token_is_refused(
    runtime: AgentRuntime[Any, Any],
) -> None:
    application = native_app(
        runtime, service_tokens={TOKEN: "mail-app"}, credentials_of=credentials_of
    )
    async with client(application) as http:
        forged = await http.post(
            "/agent/invoke/create_todo",
            json={"title": "Milk"},
            headers={"X-Foldkit-Principal": "alice@example.com"},
        )
        wrong = await http.post(
            "/agent/invoke/create_todo",
            json={"title": "Milk"},
            headers=auth("not-the-token-0123456789", user="alice@example.com"),
        )
        listing = await http.get("/agent/capabilities")
    for response in (forged, wrong, listing):
        assert response.status_code == 401
        body = response.json()
        assert body["isError"] is True
        assert body["structuredContent"]["status"] == "rejected"
    assert runtime.context()["todos"] == []
    assert runtime.audit is not None
    # refused at the edge: audited as refusals of the capability named, with no principal
    refusals = [(e.capability, e.principal, e.decision, e.outcome) for e in runtime.audit.entries()]
    assert refusals == [("create_todo", None, "refused", "AgentAuthorizationError")] * 2


async def test_service_caller_reaches_the_runtime_with_its_principal(
    runtime: AgentRuntime[Any, Any],
) -> None:
    application = native_app(
        runtime, service_tokens={TOKEN: "mail-app"}, credentials_of=credentials_of
    )
    async with client(application) as http:
        created = await http.post(
            "/agent/invoke/create_todo",
            json={"title": "Milk"},
            headers=auth(user="alice@example.com", caller="tool"),
        )
        assert created.status_code == 200
        assert created.json()["isError"] is False
        assert created.json()["structuredContent"]["status"] == "completed"
        todo_id = runtime.context()["todos"][0]["id"]
        await http.post("/agent/invoke/select_todo", json={"id": todo_id}, headers=auth(user="x"))
        bob = await http.post(
            "/agent/invoke/delete_todo", json={}, headers=auth(user="bob@example.com")
        )
        assert bob.json()["isError"] is True
        assert bob.json()["structuredContent"]["_tag"] == "AgentAuthorizationError"
        nobody = await http.post("/agent/invoke/delete_todo", json={}, headers=auth())
        assert nobody.json()["structuredContent"]["_tag"] == "AgentAuthorizationError"
        caps = await http.get("/agent/capabilities", headers=auth())
        assert "delete_todo" in [c["name"] for c in caps.json()["capabilities"]]
    assert runtime.audit is not None
    entries = runtime.audit.entries()
    assert {e.transport for e in entries} == {"agent-native"}
    assert [e.principal for e in entries if e.capability == "create_todo"] == ["alice"]


async def test_default_principal_is_the_native_caller(runtime: AgentRuntime[Any, Any]) -> None:
    seen: list[Any] = []

    def resolve(request: Request) -> AgentRuntime[Any, Any]:
        seen.append(native_caller(request))
        return runtime

    application = native_app(resolve, service_tokens=[TOKEN], path="/")
    async with client(application) as http:
        response = await http.post(
            "/invoke/toggle_todo",
            json={"id": "todo-9"},
            headers=auth(user="%C3%A9lise%40example.com", org="org-1", caller="tool"),
        )
    assert response.status_code == 200
    assert seen == [NativeCaller("agent-native", "élise@example.com", "org-1", "tool")]


def test_native_app_refuses_weak_token_configuration() -> None:
    with pytest.raises(ValueError, match="at least one"):
        native_app(lambda _r: None, service_tokens=[])  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="at least 16"):
        native_app(lambda _r: None, service_tokens=["short"])  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        native_app(lambda _r: None, service_tokens=TOKEN)  # type: ignore[arg-type]


async def test_caller_header_that_is_not_percent_encoded_utf8_is_refused(
    runtime: AgentRuntime[Any, Any],
) -> None:
    application = native_app(
        runtime, service_tokens={TOKEN: "mail-app"}, credentials_of=credentials_of
    )
    async with client(application) as http:
        response = await http.post(
            "/agent/invoke/create_todo", json={"title": "Milk"}, headers=auth(user="%FF%FE")
        )
    assert response.status_code == 403
    assert response.json()["isError"] is True
    assert runtime.context()["todos"] == []
