"""The runnable blocks of README.md and docs/*.md, and how a test runs each exactly as written.

The convention, for anyone writing the docs:

* A fenced block tagged ``sh``, ``shell``, ``bash`` or ``console`` holds commands a reader is
  told to run. In ``sh`` blocks every line is a command (a trailing ``\\`` continues it, ``#``
  starts a comment, a trailing ``&`` runs it in the background); in ``console`` blocks the
  commands are the lines starting with ``$ ``, and the lines after a command are its expected
  output (``...`` on a line of its own stands for any lines).
* A fenced ``python`` block is run as a file; the next fenced block, when it is ``text``, is
  what the file must print. With a name (```` ```python title="my_app.py" ````) it is run
  under that name, and it is there, importable, for every command of the same document (so
  ``foldkit-agent serve my_app:runtime`` finds the file the reader saved).
* A ``json`` block holding ``"mcpServers"`` (a Claude Desktop config) is run the way Claude
  Desktop runs it: its ``command`` and ``args`` in its ``cwd``, spoken to over MCP stdio.
* ``<!-- not run: why -->`` on the line before a fence opts the block out. Keep them rare:
  they are for blocks that are illustrative, or that only an external app can run, and the
  reason is written right there in the doc.
* Other fences (``json``, ``text``, ``ts``, untagged) are not run.

What "run" means for each command is in :data:`RUNNERS` of ``tests/test_docs.py``; a command
no runner knows fails the test, so a new doc command cannot slip in unrun.

Two things differ from a reader's terminal, both so that parallel test runs on one machine do
not collide: the documented port ``8000`` (and the todo page's ``8765``) become a free port,
in every command and file of a block alike, and a server command without ``--port`` gets one.
Commands that write files run in a scratch directory with the checkout on ``PYTHONPATH``.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from tests.support.paths import ROOT

DOCUMENTS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
"""Every document whose blocks are run."""

SHELL = {"sh", "shell", "bash", "console"}
RUNNABLE = {*SHELL, "python", "json"}
DOCUMENTED_PORTS = ("8000", "8765")

_FENCE = re.compile(r"^(?P<indent> {0,3})(?P<fence>```+|~~~+)\s*(?P<info>[^`\s]*)(?P<rest>[^`]*)$")
_TITLE = re.compile(r'title="(?P<name>[\w.-]+\.py)"')
_SKIP = re.compile(r"<!--\s*not run:\s*(?P<why>.+?)\s*-->")


@dataclass(frozen=True)
class Command:
    """One command of a shell block, as written (continuations joined, comment kept)."""

    text: str
    line: int
    expected: tuple[str, ...] | None = None
    """The console block's output lines after the command, or ``None`` (``sh`` blocks)."""

    def argv(self) -> list[str]:
        """The words a shell would run: comments dropped, a trailing ``&`` removed.

        Raises:
            ValueError: the command uses shell syntax a test cannot run as one program
                (pipes, ``&&``, ``;``, redirections).
        """
        words = shlex.split(self.text, comments=True)
        if words and words[-1] == "&":
            words = words[:-1]
        for word in words:
            if word in {"|", "||", "&&", ";", ">", ">>", "<", "&"}:
                raise ValueError(f"{self.text!r} is more than one program ({word!r})")
        return words

    @property
    def background(self) -> bool:
        return self.text.rstrip().endswith("&")


@dataclass(frozen=True)
class Block:
    """One fenced block of a document."""

    path: Path
    line: int
    """1-based line of the opening fence."""
    lang: str
    text: str
    skip: str | None = None
    """The reason given by ``<!-- not run: ... -->`` before the fence."""
    output: str | None = None
    """For a python block: the text block that follows it (what it prints)."""
    commands: tuple[Command, ...] = field(default=())
    title: str | None = None
    """For a python block: the file name it is saved as (``title="my_app.py"``)."""

    @property
    def where(self) -> str:
        return f"{self.path.relative_to(ROOT)}:{self.line}"


def _shell_commands(lang: str, lines: list[str], first: int) -> tuple[Command, ...]:
    commands: list[Command] = []
    if lang == "console":
        current: list[str] | None = None
        start = 0
        out: list[str] = []
        for offset, raw in enumerate([*lines, "$ "]):
            if raw.startswith("$ ") or offset == len(lines):
                if current is not None:
                    commands.append(Command(" ".join(current), start, tuple(out)))
                current, start, out = [raw[2:].rstrip()], first + offset, []
                continue
            if current is not None and current[-1].endswith("\\") and not out:
                current[-1] = current[-1][:-1].rstrip()
                current.append(raw.strip())
            else:
                out.append(raw)
        return tuple(c for c in commands if c.text)
    pending: list[str] = []
    start = 0
    for offset, raw in enumerate(lines):
        stripped = raw.strip()
        if not pending and (not stripped or stripped.startswith("#")):
            continue
        if not pending:
            start = first + offset
        if stripped.endswith("\\"):
            pending.append(stripped[:-1].rstrip())
            continue
        pending.append(stripped)
        commands.append(Command(" ".join(pending), start))
        pending = []
    return tuple(commands)


def blocks(path: Path) -> list[Block]:
    """The fenced blocks of ``path`` whose language is runnable, in order."""
    lines = path.read_text(encoding="utf-8").splitlines()
    found: list[tuple[int, str, list[str], str | None, str | None]] = []
    i = 0
    while i < len(lines):
        opening = _FENCE.match(lines[i])
        if opening is None:
            i += 1
            continue
        fence, lang = opening["fence"], opening["info"].lower()
        before = next((lines[j] for j in range(i - 1, -1, -1) if lines[j].strip()), "")
        skipped = _SKIP.search(before)
        body: list[str] = []
        j = i + 1
        while j < len(lines) and not lines[j].strip().startswith(fence[:3]):
            body.append(lines[j])
            j += 1
        title = _TITLE.search(opening["rest"])
        found.append(
            (
                i + 1,
                lang,
                body,
                skipped["why"] if skipped else None,
                title["name"] if title else None,
            )
        )
        i = j + 1
    out: list[Block] = []
    for k, (line, lang, body, why, title) in enumerate(found):
        if lang not in RUNNABLE:
            continue
        text = "\n".join(body) + "\n"
        if lang == "json" and '"mcpServers"' not in text:
            continue
        following = found[k + 1] if k + 1 < len(found) else None
        output = (
            "\n".join(following[2]) + "\n"
            if lang == "python" and following is not None and following[1] == "text"
            else None
        )
        commands = _shell_commands(lang, body, line + 1) if lang in SHELL else ()
        out.append(Block(path, line, lang, text, why, output, commands, title))
    return out


def every_block() -> Iterator[Block]:
    """The runnable blocks of every document (opted-out ones included, marked)."""
    for path in DOCUMENTS:
        yield from blocks(path)


def with_port(text: str, port: int) -> str:
    """``text`` with the documented ports replaced by ``port`` (see the module docstring)."""
    for documented in DOCUMENTED_PORTS:
        text = re.sub(rf"(?<![\w.]){documented}(?!\w)", str(port), text)
    return text


def matches(expected: tuple[str, ...], actual: str) -> bool:
    """Whether ``actual`` output has the ``expected`` lines (``...`` stands for any lines)."""
    want = [line.rstrip() for line in expected]
    while want and not want[-1]:
        want.pop()
    got = [line.rstrip() for line in actual.splitlines()]
    pattern = "".join(
        "(?:.*\n)*?" if w.strip() in {"...", "…"} else re.escape(w) + "\n" for w in want
    )
    return re.fullmatch(pattern + r"(?:\s*\n)*", "\n".join(got) + "\n") is not None
