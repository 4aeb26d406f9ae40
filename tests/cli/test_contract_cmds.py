"""``foldkit-agent manifest``, ``docs`` and ``check`` (the check is what keeps CI honest)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from examples.todo import AppAgent
from foldkit_agent.cli import app
from foldkit_agent.manifest import manifest_json, to_markdown
from tests.support.paths import ROOT

TARGET = "examples.todo:AppAgent"
AGENT_JSON = ROOT / "examples/todo/agent.json"
AGENT_MD = ROOT / "examples/todo/AGENT.md"


@pytest.fixture
def runner(monkeypatch: pytest.MonkeyPatch) -> CliRunner:
    monkeypatch.chdir(ROOT)
    return CliRunner()


def test_the_committed_todo_manifest_and_docs_pass_check(runner: CliRunner) -> None:
    result = runner.invoke(app, ["check", TARGET, str(AGENT_JSON), "--docs", str(AGENT_MD)])
    assert result.exit_code == 0, result.output
    assert "matches" in result.stderr


def test_check_passes_in_a_fresh_process_as_ci_runs_it() -> None:
    done = subprocess.run(
        [
            sys.executable,
            "-c",
            "from foldkit_agent.cli import main; main()",
            "check",
            TARGET,
            "examples/todo/agent.json",
            "--docs",
            "examples/todo/AGENT.md",
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr


def test_manifest_prints_agent_json_to_stdout(runner: CliRunner) -> None:
    result = runner.invoke(app, ["manifest", TARGET])
    assert result.exit_code == 0
    assert result.stdout == manifest_json(AppAgent)


def test_manifest_and_docs_write_files_with_o(runner: CliRunner, tmp_path: Path) -> None:
    out_json, out_md = tmp_path / "agent.json", tmp_path / "AGENT.md"
    assert runner.invoke(app, ["manifest", TARGET, "-o", str(out_json)]).exit_code == 0
    assert runner.invoke(app, ["docs", TARGET, "--output", str(out_md)]).exit_code == 0
    assert out_json.read_bytes() == manifest_json(AppAgent).encode()
    # what the command writes is agent.to_markdown(X) itself: one reproducible output
    assert out_md.read_bytes() == to_markdown(AppAgent).encode()


def test_a_drifted_manifest_fails_check_with_a_readable_diff(
    runner: CliRunner, tmp_path: Path
) -> None:
    committed = json.loads(AGENT_JSON.read_text(encoding="utf-8"))
    committed["capabilities"] = [c for c in committed["capabilities"] if c["name"] != "delete_todo"]
    committed["capabilities"][0]["description"] = "Old wording"
    stale = tmp_path / "agent.json"
    stale.write_text(json.dumps(committed, sort_keys=True, indent=2) + "\n", encoding="utf-8")
    result = runner.invoke(app, ["check", TARGET, str(stale)])
    assert result.exit_code == 1
    assert "drift:" in result.stderr
    assert f"--- {stale} (committed)" in result.stdout
    assert f"+++ {stale} (from the contract)" in result.stdout
    assert '-      "description": "Old wording",' in result.stdout
    assert '+      "name": "delete_todo",' in result.stdout
    assert "capability delete_todo added" in result.stderr
    assert "capability create_todo changed: description" in result.stderr
    assert f"foldkit-agent manifest {TARGET} -o {stale}" in result.stderr
    assert "Traceback" not in result.output


def test_drifted_docs_fail_check(runner: CliRunner, tmp_path: Path) -> None:
    stale = tmp_path / "AGENT.md"
    stale.write_text(AGENT_MD.read_text(encoding="utf-8").replace("Size budget", "Budget"))
    result = runner.invoke(app, ["check", TARGET, str(AGENT_JSON), "--docs", str(stale)])
    assert result.exit_code == 1
    assert "-## Budget" in result.stdout
    assert "+## Size budget" in result.stdout


def test_windows_line_endings_in_a_committed_manifest_are_not_drift(
    runner: CliRunner, tmp_path: Path
) -> None:
    crlf = tmp_path / "agent.json"
    crlf.write_bytes(manifest_json(AppAgent).replace("\n", "\r\n").encode())
    assert runner.invoke(app, ["check", TARGET, str(crlf)]).exit_code == 0


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["manifest", "examples.todo"], "expected MODULE:ATTR"),
        (["manifest", "no_such_module_xyz:Agent"], "cannot import module 'no_such_module_xyz'"),
        (["docs", "examples.todo:Nope"], "has no attribute 'Nope'"),
        (["manifest", "examples.todo:App"], "is not an agent definition"),
        (["check", "examples.todo:AppAgent", "missing.json"], "missing.json does not exist"),
        (["check", "bad", "examples/todo/agent.json"], "expected MODULE:ATTR"),
    ],
)
def test_a_bad_reference_or_file_is_one_red_line_and_exit_2(
    runner: CliRunner, args: list[str], message: str
) -> None:
    result = runner.invoke(app, args)
    assert result.exit_code == 2
    assert result.stdout == ""
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1
    assert lines[0].startswith("error: ")
    assert message in lines[0]
    assert "Traceback" not in result.output


def test_an_unwritable_output_is_one_line_and_exit_2(runner: CliRunner, tmp_path: Path) -> None:
    result = runner.invoke(app, ["manifest", TARGET, "-o", str(tmp_path / "no" / "dir.json")])
    assert result.exit_code == 2
    assert result.stderr.strip().startswith("error: cannot write")


def test_check_fails_and_says_so_when_a_capability_became_destructive(
    runner: CliRunner, tmp_path: Path
) -> None:
    committed = json.loads(AGENT_JSON.read_text(encoding="utf-8"))
    for cap in committed["capabilities"]:
        if cap["name"] == "delete_todo":
            cap["hints"]["destructive"] = False
        if cap["name"] == "select_todo":
            cap["hints"]["idempotent"] = True  # unchanged: not reported
    stale = tmp_path / "agent.json"
    stale.write_text(json.dumps(committed, sort_keys=True, indent=2) + "\n", encoding="utf-8")
    result = runner.invoke(app, ["check", TARGET, str(stale)])
    assert result.exit_code == 1
    assert '-        "destructive": false,' in result.stdout
    assert '+        "destructive": true,' in result.stdout
    assert "capability delete_todo changed: hints" in result.stderr
    assert "capability delete_todo became destructive" in result.stderr
    assert "select_todo" not in result.stderr


_HINTED = """
from foldkit_agent import agent
from tests.support.counter import Incremented, Msg

AppAgent = agent.make(
    messages=agent.expose(
        Msg, {{Incremented: agent.variant(description="Add", read_only={ro}, open_world={ow})}}
    )
)
"""


@pytest.mark.parametrize(
    ("before", "after", "said"),
    [
        ({"ro": True, "ow": False}, {"ro": False, "ow": False}, "is no longer read-only"),
        (
            {"ro": False, "ow": False},
            {"ro": False, "ow": None},
            "now reaches outside the application (undeclared now, so clients assume it)",
        ),
    ],
)
def test_check_in_a_fresh_process_fails_when_a_declared_hint_changes(
    tmp_path: Path, before: dict[str, Any], after: dict[str, Any], said: str
) -> None:
    module = tmp_path / "hinted_contract.py"
    module.write_text(_HINTED.format(**before), encoding="utf-8")
    env = {**os.environ, "PYTHONPATH": f"{tmp_path}{os.pathsep}{ROOT}"}

    def cli(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "foldkit_agent", *args],
            cwd=tmp_path,
            env=env,
            capture_output=True,
            text=True,
            check=False,
        )

    assert cli("manifest", "hinted_contract:AppAgent", "-o", "agent.json").returncode == 0
    assert cli("check", "hinted_contract:AppAgent", "agent.json").returncode == 0
    module.write_text(_HINTED.format(**after), encoding="utf-8")
    done = cli("check", "hinted_contract:AppAgent", "agent.json")
    assert done.returncode == 1
    assert f"capability incremented {said}" in done.stderr
