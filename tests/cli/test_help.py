"""What ``foldkit-agent --help`` / ``--version`` show a newcomer (issue 19, point 7)."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from foldkit_agent import __version__
from foldkit_agent.cli import app

COMMANDS = [
    [],
    ["demo"],
    ["serve"],
    ["manifest"],
    ["docs"],
    ["check"],
    ["native"],
    ["native", "actions"],
    ["native", "mcp-config"],
]


def test_version_prints_the_package_version() -> None:
    result = CliRunner().invoke(app, ["--version"])
    assert result.exit_code == 0
    assert result.stdout == f"foldkit-agent {__version__}\n"


@pytest.mark.parametrize("command", COMMANDS, ids=lambda c: " ".join(c) or "top")
def test_flags_show_no_value_placeholder(command: list[str]) -> None:
    result = CliRunner().invoke(app, [*command, "--help"], terminal_width=100)
    assert result.exit_code == 0, result.output
    assert "--help" in result.stdout
    assert "<bool>" not in result.stdout


def test_demo_help_lists_serve_as_a_bare_flag() -> None:
    result = CliRunner().invoke(app, ["demo", "--help"], terminal_width=100)
    line = next(x for x in result.stdout.splitlines() if "--serve" in x)
    assert "<" not in line


def test_native_actions_help_gives_the_url_serve_uses() -> None:
    result = CliRunner().invoke(app, ["native", "actions", "--help"], terminal_width=200)
    assert "http://127.0.0.1:8000/native" in result.stdout
    assert "8000/agent" not in result.stdout
