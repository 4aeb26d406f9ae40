"""The flags of ``serve`` are the options' fields: every field has one, with its default."""

from __future__ import annotations

import dataclasses
from typing import Any

import typer
from typer.testing import CliRunner

from foldkit_agent.cli import app
from foldkit_agent.cli.serve import ServeOptions
from foldkit_agent.cli.serve.flags import FLAGS, LIMIT_HELP, flag_of
from foldkit_agent.edge.callers import CallerLimits
from foldkit_agent.edge.connections import ConnectionLimits


def _help() -> str:
    result = CliRunner().invoke(app, ["serve", "--help"], env={"COLUMNS": "300"})
    assert result.exit_code == 0, result.output
    return result.stdout


def test_every_option_field_but_the_target_and_the_limits_has_one_flag() -> None:
    fields = {f.name for f in dataclasses.fields(ServeOptions)}
    assert fields - set(FLAGS) == {"target", "caller_limits", "connection_limits"}
    assert set(FLAGS) <= fields


def test_every_limit_field_is_a_flag_with_its_own_help_and_default() -> None:
    command: Any = typer.main.get_command(app)
    serve = command.commands["serve"]
    params = {opt: p for p in serve.params for opt in p.opts}
    for kind in (CallerLimits, ConnectionLimits):
        for field in dataclasses.fields(kind):
            assert field.name in LIMIT_HELP, f"{kind.__name__}.{field.name} has no help"
            param = params[f"--{flag_of(kind, field)}"]
            assert param.default == field.default
            assert param.help == LIMIT_HELP[field.name]


def test_caps_read_as_max_flags_and_timeouts_keep_their_names() -> None:
    by_name = {f.name: f for f in dataclasses.fields(CallerLimits)}
    assert flag_of(CallerLimits, by_name["waiting_per_caller"]) == "max-waiting-per-caller"
    assert flag_of(CallerLimits, by_name["session_idle_timeout"]) == "session-idle-timeout"
    (connections,) = [f for f in dataclasses.fields(ConnectionLimits) if f.name == "keep_alive"]
    assert flag_of(ConnectionLimits, connections) == "keep-alive"


def test_a_limit_out_of_range_is_refused_in_the_words_of_its_flag() -> None:
    for flag, said in (
        ("--max-streams", "--max-streams must be at least 1, got 0"),
        ("--max-headers", "--max-headers must be at least 1, got 0"),
    ):
        result = CliRunner().invoke(
            app, ["serve", "examples.todo:runtime", "--mcp", "http", flag, "0"]
        )
        assert result.exit_code == 2
        assert said in result.output


def test_the_help_groups_the_flags_in_panels() -> None:
    shown = _help()
    for panel in ("Adapters", "HTTP", "Callers", "Calls", "Tenants", "Connection limits"):
        assert f"─ {panel} ─" in shown
    assert "foldkit-agent[a2a-db]" in shown  # not eaten as markup
