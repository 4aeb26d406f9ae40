"""Every file, function, class and method ``docs/architecture.md`` names exists.

The document's convention (its first paragraph): code is named in single backticks, as

* ``file.py:name`` or ``file.py:Class.method`` - a path under ``src/foldkit_agent/`` and a
  name defined in that file (a function, class, method, constant, or an attribute a class
  assigns), nested names joined by dots;
* ``Class.name`` - a class of ours (a CapWords name, a leading underscore allowed) that
  defines ``name`` in some module under ``src/foldkit_agent/``;
* a path ending in ``.py`` or ``/``: ``edge/calls.py``, ``adapters/mcp/`` (under
  ``src/foldkit_agent/``), or one starting ``tests/``, ``bench/``, ``docs/``, ``examples/``,
  ``deploy/``, ``src/`` (from the repository's root); a ``.md`` path with a folder in it.

Anything else in backticks (wire names, fields, values, ``<placeholders>``) is prose. Names are
found by parsing the source (``ast``), so nothing is imported.
"""

from __future__ import annotations

import ast
import functools
import re
from collections.abc import Iterator
from pathlib import Path

from tests.support.paths import ROOT

PACKAGE = ROOT / "src" / "foldkit_agent"
DOC = ROOT / "docs" / "architecture.md"
FROM_ROOT = ("src/", "tests/", "bench/", "docs/", "examples/", "deploy/")

_SPAN = re.compile(r"(?<!`)`([^`\n]+)`(?!`)")
_FENCE = re.compile(r"^```.*?^```", re.DOTALL | re.MULTILINE)
_NAME = r"[A-Za-z_]\w*"
_LOCATED = re.compile(rf"^([\w./]+\.py):({_NAME}(?:\.{_NAME})*)$")
_PATH = re.compile(r"^[\w.][\w./]*(?:\.py|/)$|^[\w.]+/[\w./]*\.md$")
_MEMBER = re.compile(rf"^(_?[A-Z][A-Za-z0-9]*[a-z][A-Za-z0-9]*)\.({_NAME})$")  # CapWords.name


def spans(text: str) -> Iterator[str]:
    """The inline code spans of a Markdown text, fenced blocks left out."""
    for match in _SPAN.finditer(_FENCE.sub("", text)):
        yield match.group(1).strip()


def _file(path: str) -> Path:
    if path.startswith("foldkit_agent/"):
        return ROOT / "src" / path
    return ROOT / path if path.startswith(FROM_ROOT) else PACKAGE / path


@functools.cache
def _tree(path: Path) -> ast.Module:
    return ast.parse(path.read_text(), str(path))


def _assigned(node: ast.stmt) -> Iterator[str]:
    """The plain names a statement assigns (``x = ...``, ``x: T``, ``x: T = ...``)."""
    if isinstance(node, ast.Assign):
        for target in node.targets:
            if isinstance(target, ast.Name):
                yield target.id
    elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
        yield node.target.id


def _self_attributes(cls: ast.ClassDef) -> Iterator[str]:
    """The attributes a class's methods assign on ``self``."""
    for node in ast.walk(cls):
        targets: list[ast.expr] = []
        if isinstance(node, ast.Assign):
            targets = node.targets
        elif isinstance(node, ast.AnnAssign | ast.AugAssign):
            targets = [node.target]
        for target in targets:
            if (
                isinstance(target, ast.Attribute)
                and isinstance(target.value, ast.Name)
                and target.value.id == "self"
            ):
                yield target.attr


def _member(body: list[ast.stmt], owner: ast.AST | None, name: str) -> ast.AST | bool:
    """The definition of ``name`` in ``body`` (a def or class, to look inside), ``True``
    for a name only assigned there, ``False`` when it is not defined there."""
    for node in body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            if node.name == name:
                return node
        elif name in _assigned(node):
            return True
    return isinstance(owner, ast.ClassDef) and name in _self_attributes(owner)


def defines(path: Path, qualname: str) -> bool:
    """Whether the module at ``path`` defines ``qualname`` (``f``, ``C.m``, ``f.inner``)."""
    found: ast.AST | bool = _tree(path)
    for part in qualname.split("."):
        if not isinstance(
            found, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef
        ):
            return False
        found = _member(found.body, found, part)
        if found is False:
            return False
    return True


@functools.cache
def _classes() -> dict[str, list[ast.ClassDef]]:
    """Every class under ``src/foldkit_agent``, by name."""
    found: dict[str, list[ast.ClassDef]] = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        for node in ast.walk(_tree(path)):
            if isinstance(node, ast.ClassDef):
                found.setdefault(node.name, []).append(node)
    return found


def problems(text: str) -> list[str]:
    """What a Markdown text names that does not exist, one sentence each (empty: all
    exist)."""
    found: list[str] = []
    for span in spans(text):
        located = _LOCATED.match(span)
        member = _MEMBER.match(span)
        if located is not None:
            path, qualname = located.groups()
            file = _file(path)
            if not file.is_file():
                found.append(f"`{span}`: there is no file {path}")
            elif not defines(file, qualname):
                found.append(f"`{span}`: {path} defines no {qualname}")
        elif _PATH.match(span) is not None:
            if not (_file(span).is_dir() if span.endswith("/") else _file(span).is_file()):
                found.append(f"`{span}`: there is no such file or folder")
        elif member is not None:
            cls, name = member.groups()
            classes = _classes().get(cls)
            if not classes:
                found.append(f"`{span}`: no class {cls} under src/foldkit_agent")
            elif not any(_member(c.body, c, name) is not False for c in classes):
                found.append(f"`{span}`: class {cls} defines no {name}")
    return found


def checked(text: str) -> list[str]:
    """The spans of ``text`` that :func:`problems` checks."""
    return [s for s in spans(text) if _LOCATED.match(s) or _PATH.match(s) or _MEMBER.match(s)]


def test_every_file_and_name_the_architecture_doc_names_exists() -> None:
    text = DOC.read_text()
    assert problems(text) == []
    assert len(checked(text)) >= 100  # the walk names its functions in the checked form


def test_a_name_that_does_not_exist_is_reported() -> None:
    line = (
        "The call goes to `edge/calls.py:CallsInFlight.fly`, then `runtime/nowhere.py`, "
        "`runtime/pipeline.py:Call.teleport`, `Call.vanish`, `Nobody.run` and "
        "`adapters/ghost/`; `edge/calls.py:CallsInFlight.run`, `Call.run`, "
        "`runtime/plan.py:Plan.decode`, `edge/calls.py:PARK`, `adapters/mcp/`, "
        "`tools/call` and `<framework>.py` are fine."
    )
    assert problems(line) == [
        "`edge/calls.py:CallsInFlight.fly`: edge/calls.py defines no CallsInFlight.fly",
        "`runtime/nowhere.py`: there is no such file or folder",
        "`runtime/pipeline.py:Call.teleport`: runtime/pipeline.py defines no Call.teleport",
        "`Call.vanish`: class Call defines no vanish",
        "`Nobody.run`: no class Nobody under src/foldkit_agent",
        "`adapters/ghost/`: there is no such file or folder",
    ]


def test_names_in_fenced_blocks_and_library_text_are_not_checked() -> None:
    text = '```\n`runtime/nowhere.py`\n```\nwire: `text/event-stream`, `scope["user"]`\n'
    assert checked(text) == []
