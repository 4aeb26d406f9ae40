"""``foldkit-agent native ...``: connect an Agent Native app (Builder.io's ``@agent-native/core``).

* ``native mcp-config MODULE:ATTR --url URL [--name NAME] [--header "K: V"]`` prints the
  ``mcp.config.json`` document that points the app's MCP client at our MCP server (no
  TypeScript at all).
* ``native actions MODULE:ATTR --out actions/ --url URL`` writes one generated
  ``actions/<name>.ts`` per capability (see :mod:`foldkit_agent.adapters.native`); files that
  are already right are not touched, generated files of removed capabilities are deleted, and
  hand-written files are never overwritten or deleted.

Exit status 2 means the command could not run (a bad ``MODULE:ATTR``, a bad URL, a folder
that cannot be written, a hand-written file in the way); the reason is one line on standard
error, never a traceback.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.markup import escape

from .loading import TargetArg, definition_or_fail
from .loading import fail as _fail
from .root import Command, Group, app

__all__ = ["actions", "default_server_name", "mcp_config_command", "native"]

_err = Console(stderr=True, highlight=False, soft_wrap=True)

native = typer.Typer(
    cls=Group,
    name="native",
    help="Connect an Agent Native app (@agent-native/core) to this contract.",
    no_args_is_help=True,
)
app.add_typer(native, name="native")


def default_server_name(reference: str) -> str:
    """The MCP server id derived from ``MODULE:ATTR``: the module's last part, made safe.

    >>> default_server_name("examples.todo:AppAgent")
    'todo'
    """
    module = reference.partition(":")[0].rsplit(".", 1)[-1]
    name = re.sub(r"[^A-Za-z0-9_-]+", "-", module).strip("-")[:64]
    return name or "foldkit"


def _headers(values: list[str]) -> dict[str, str]:
    headers: dict[str, str] = {}
    for raw in values:
        key, sep, value = raw.partition(":")
        key, value = key.strip(), value.strip()
        if not sep or not key or re.fullmatch(r"[!#$%&'*+.^_`|~0-9A-Za-z-]+", key) is None:
            _fail(f"--header must look like 'Name: value', got {raw!r}")
        headers[key] = value
    return headers


@native.command("mcp-config", cls=Command)
def mcp_config_command(
    target: TargetArg,
    url: Annotated[
        str,
        typer.Option(
            "--url",
            help="Our MCP endpoint (foldkit-agent serve ... --mcp http serves http://HOST:PORT/mcp).",
            show_default=False,
        ),
    ],
    name: Annotated[
        str | None,
        typer.Option(
            "--name", help="Server id; tools appear as mcp__<name>__<tool>. Default: the module."
        ),
    ] = None,
    header: Annotated[
        list[str] | None,
        typer.Option(
            "--header",
            help="Extra HTTP header 'Name: value' (repeatable). Prefer the MCP_SERVERS "
            "environment variable for secrets.",
        ),
    ] = None,
) -> None:
    """Print the mcp.config.json that makes an Agent Native app use our MCP server."""
    from ..adapters.native import mcp_config

    definition = definition_or_fail(target)
    server = name if name is not None else default_server_name(target)
    count = len(definition.capabilities)
    try:
        doc = mcp_config(
            url=url,
            name=server,
            headers=_headers(header or []),
            description=f"foldkit-agent contract {target} ({count} capabilities)",
        )
    except ValueError as exc:
        _fail(str(exc))
    typer.echo(json.dumps(doc, indent=2))
    if not url.rstrip("/").endswith("/mcp"):
        _err.print(
            "[yellow]note:[/] the MCP endpoint usually ends in /mcp "
            "(foldkit-agent serve ... --mcp http)"
        )


@native.command("actions", cls=Command)
def actions(
    target: TargetArg,
    out: Annotated[
        Path,
        typer.Option("--out", help="The Agent Native app's actions/ folder.", file_okay=False),
    ],
    url: Annotated[
        str,
        typer.Option(
            "--url",
            help="Base URL of the endpoint the actions call: http://127.0.0.1:8000/native for "
            "foldkit-agent serve ... --native-token TOKEN (a native_app you mount yourself "
            "answers at its path, /agent by default); FOLDKIT_AGENT_URL overrides it at run time.",
            show_default=False,
        ),
    ],
) -> None:
    """Generate one actions/<name>.ts per capability (deterministic, marked as generated)."""
    from ..adapters.native import NativeGenerationError, write_actions

    definition = definition_or_fail(target)
    try:
        report = write_actions(definition, out, url=url)
    except NativeGenerationError as exc:
        _fail(str(exc))
    except OSError as exc:
        _fail(f"cannot write {out}: {exc.strerror or exc}")
    for name in report.written:
        _err.print(f"[green]wrote[/] {escape(str(out / name))}")
    for name in report.removed:
        _err.print(f"[red]removed[/] {escape(str(out / name))} (its capability is gone)")
    _err.print(
        f"{len(report.written)} written, {len(report.unchanged)} unchanged, "
        f"{len(report.removed)} removed in {escape(str(out))}"
    )
