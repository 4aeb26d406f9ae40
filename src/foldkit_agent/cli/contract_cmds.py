"""``foldkit-agent manifest``, ``docs`` and ``check``: the contract as committed files.

* ``manifest MODULE:ATTR [-o agent.json]`` prints (or writes) the manifest.
* ``docs MODULE:ATTR [-o AGENT.md]`` prints (or writes) the Markdown documentation.
* ``check MODULE:ATTR agent.json [--docs AGENT.md]`` compares the committed files with what the
  contract generates now: exit 0 when they match, 1 with a unified diff when they drifted.

Exit status 2 means the command could not run (a bad ``MODULE:ATTR``, a missing or unreadable
file); the reason is printed as one line, never a traceback.
"""

from __future__ import annotations

import difflib
import json
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any, cast

import typer
from rich.console import Console
from rich.markup import escape
from rich.text import Text

from ..contract.declare import AgentDefinition
from ..manifest import manifest_json, to_markdown
from .loading import TargetArg, definition_or_fail, load_definition
from .loading import fail as _fail
from .root import Command, app

__all__ = ["check", "docs", "load_definition", "manifest"]

EXIT_DRIFT = 1

_err = Console(stderr=True, highlight=False, soft_wrap=True)


def _generate(reference: str, render: Callable[[AgentDefinition], str]) -> str:
    definition = definition_or_fail(reference)
    try:
        return render(definition)
    except Exception as exc:  # a contract whose schema cannot be rendered
        _fail(f"cannot render the contract {reference}: {type(exc).__name__}: {exc}")


def _emit(text: str, output: Path | None, what: str) -> None:
    if output is None:
        typer.echo(text, nl=False)
        return
    try:
        output.write_text(text, encoding="utf-8", newline="\n")
    except OSError as exc:
        _fail(f"cannot write {output}: {exc.strerror or exc}")
    _err.print(f"[green]wrote[/] {escape(str(output))} ({escape(what)})")


OutputOpt = Annotated[
    Path | None,
    typer.Option(
        "--output", "-o", help="Write to this file instead of standard output.", dir_okay=False
    ),
]


@app.command(cls=Command)
def manifest(target: TargetArg, output: OutputOpt = None) -> None:
    """Print the contract's manifest (agent.json): deterministic JSON to commit and diff."""
    text = _generate(target, manifest_json)
    size = json.loads(text)["size"]["total"]
    _emit(text, output, f"{size['bytes']} bytes of schema, ~{size['tokens']} tokens")


@app.command(cls=Command)
def docs(target: TargetArg, output: OutputOpt = None) -> None:
    """Print the contract's Markdown documentation (AGENT.md)."""
    # the same bytes as agent.to_markdown(definition): one reproducible AGENT.md
    text = _generate(target, to_markdown)
    _emit(text, output, f"{text.count(chr(10))} lines")


@app.command(cls=Command)
def check(
    target: TargetArg,
    committed: Annotated[
        Path,
        typer.Argument(
            metavar="AGENT_JSON",
            help="The committed manifest to compare with.",
            show_default=False,
        ),
    ],
    docs_file: Annotated[
        Path | None,
        typer.Option(
            "--docs",
            metavar="AGENT_MD",
            help="Also compare this committed AGENT.md.",
            dir_okay=False,
        ),
    ] = None,
) -> None:
    """Fail (exit 1, with a diff) when committed files no longer match the contract."""
    definition = definition_or_fail(target)
    pairs: list[tuple[Path, str, str]] = [(committed, manifest_json(definition), "manifest")]
    if docs_file is not None:
        pairs.append((docs_file, to_markdown(definition), "docs"))
    drifted = 0
    for path, fresh, command in pairs:
        old = _read(path)
        if old == fresh:
            _err.print(f"[green]ok[/] {escape(str(path))} matches {escape(target)}")
            continue
        drifted += 1
        _report_drift(path, old, fresh)
        if command == "manifest":
            _summarize(old, fresh)
        _err.print(
            f"  regenerate it with: [bold]foldkit-agent {command} {escape(target)} "
            f"-o {escape(str(path))}[/]"
        )
    if drifted:
        raise typer.Exit(EXIT_DRIFT)


def _read(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8").replace("\r\n", "\n")
    except FileNotFoundError:
        _fail(f"{path} does not exist (create it with foldkit-agent manifest/docs ... -o {path})")
    except (OSError, UnicodeDecodeError) as exc:
        _fail(f"cannot read {path}: {getattr(exc, 'strerror', None) or exc}")


def _report_drift(path: Path, old: str, fresh: str) -> None:
    _err.print(f"[bold red]drift:[/] {escape(str(path))} no longer matches the contract")
    diff = difflib.unified_diff(
        old.splitlines(keepends=True),
        fresh.splitlines(keepends=True),
        fromfile=f"{path} (committed)",
        tofile=f"{path} (from the contract)",
    )
    out = Console(highlight=False, soft_wrap=True)
    for line in diff:
        style = None
        if line.startswith(("---", "+++")):
            style = "bold"
        elif line.startswith("@@"):
            style = "cyan"
        elif line.startswith("-"):
            style = "red"
        elif line.startswith("+"):
            style = "green"
        out.print(Text(line.rstrip("\n"), style=style or ""))


def _summarize(old: str, fresh: str) -> None:
    """One line per capability added, removed or changed, when the old file is a manifest."""
    try:
        before = {c["name"]: c for c in json.loads(old)["capabilities"]}
        after = {c["name"]: c for c in json.loads(fresh)["capabilities"]}
    except (ValueError, KeyError, TypeError):
        return
    for name in sorted(after.keys() - before.keys()):
        _err.print(f"  [green]+[/] capability {escape(name)} added")
    for name in sorted(before.keys() - after.keys()):
        _err.print(f"  [red]-[/] capability {escape(name)} removed")
    for name in sorted(after.keys() & before.keys()):
        changed = sorted(
            k
            for k in after[name].keys() | before[name].keys()
            if after[name].get(k) != before[name].get(k)
        )
        if changed:
            _err.print(f"  [yellow]~[/] capability {escape(name)} changed: {', '.join(changed)}")
        for line in _hint_changes(before[name].get("hints"), after[name].get("hints")):
            _err.print(f"  [bold red]![/] capability {escape(name)} {line}")


_RISKIER = (
    # (hint, the value that is riskier than any other, what to say when it newly holds)
    ("destructive", True, "became destructive"),
    ("read_only", False, "is no longer read-only"),
    ("idempotent", False, "is no longer idempotent"),
    ("open_world", True, "now reaches outside the application"),
)


def _hint_changes(before: Any, after: Any) -> list[str]:
    """What became riskier for a supervising person, one phrase per hint.

    A hint that was not declared (``None``) counts as its cautious value, as MCP clients
    read it: declaring ``destructive=True`` where nothing was said is not news, dropping a
    ``destructive=False`` is.
    """
    if not isinstance(before, dict) or not isinstance(after, dict):
        return []
    was = cast(dict[str, Any], before)
    now = cast(dict[str, Any], after)
    cautious = {"destructive": True, "open_world": True}
    out: list[str] = []
    for hint, risky, phrase in _RISKIER:
        old, new = was.get(hint), now.get(hint)
        undeclared = new is None
        old = cautious.get(hint) if old is None else old
        new = cautious.get(hint) if new is None else new
        if new == risky and old != risky:
            out.append(f"{phrase} (undeclared now, so clients assume it)" if undeclared else phrase)
    return out
