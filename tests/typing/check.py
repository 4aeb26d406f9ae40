"""Run strict pyright on the typing cases and compare what it reports to what they expect.

A case file says where pyright must reject it: a line ending in ``# expect-error`` must have
at least one error reported on it, and every other line none. A file with no marker must
type-check clean. ``expect-error`` may name the rule too (``# expect-error:
reportAttributeAccessIssue``); then one of the errors on that line must be of that rule.

Run as ``python -m tests.typing.check [PATH ...]`` (what ``make lint`` does): exits 1 and
prints each difference when the reports and the markers disagree. The test suite runs the
same check (``tests/typing/test_typing.py``).
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

from tests.support.paths import ROOT

HERE = Path(__file__).resolve().parent
CONFIG = HERE / "pyrightconfig.json"
"""Strict mode, with this checkout's ``src`` ahead of the installed package."""
CASES = HERE / "cases"
CHECKED: tuple[Path, ...] = (CASES, ROOT / "examples")
"""What ``make lint`` and the suite check: the cases and every example."""

MARKER = re.compile(r"#\s*expect-error(?::\s*(?P<rule>\w+))?\s*$")
PYRIGHT = Path(sys.executable).parent / "pyright"
TIMEOUT = 600  # seconds: a cold pyright on a loaded two-core machine


@dataclass(frozen=True, order=True)
class Report:
    """One error pyright reported: the file, its line (1-based) and its rule."""

    file: Path
    line: int
    rule: str
    message: str = ""


def expected(path: Path) -> dict[int, str | None]:
    """The marked lines of ``path``: line number (1-based) -> the rule named, or ``None``."""
    marks: dict[int, str | None] = {}
    for number, text in enumerate(path.read_text().splitlines(), start=1):
        found = MARKER.search(text)
        if found is not None:
            marks[number] = found.group("rule")
    return marks


def run_pyright(paths: Iterable[Path]) -> list[Report]:
    """The errors strict pyright reports on ``paths`` (files or folders).

    Raises:
        RuntimeError: pyright did not run (no JSON came back), with what it printed.
    """
    argv = [str(PYRIGHT), "--outputjson", "-p", str(CONFIG), *map(str, paths)]
    done = subprocess.run(argv, capture_output=True, text=True, timeout=TIMEOUT, cwd=ROOT)
    try:
        data = json.loads(done.stdout)
    except json.JSONDecodeError:
        raise RuntimeError(f"pyright did not run: {done.stdout}{done.stderr}") from None
    return [
        Report(
            Path(d["file"]).resolve(),
            d["range"]["start"]["line"] + 1,
            d.get("rule", ""),
            d["message"],
        )
        for d in data["generalDiagnostics"]
        if d["severity"] == "error"
    ]


def differences(
    marks: Mapping[Path, Mapping[int, str | None]], reports: Iterable[Report]
) -> list[str]:
    """Each disagreement between the marked lines and the reported errors, as one sentence.

    A marked line with no error is *missed*; an error on an unmarked line is *unexpected*; a
    marked line whose errors are none of the rule it names is *of another rule*.
    """
    by_line: dict[tuple[Path, int], list[Report]] = {}
    for r in reports:
        by_line.setdefault((r.file, r.line), []).append(r)
    found: list[str] = []
    for path, lines in sorted(marks.items()):
        for line, rule in sorted(lines.items()):
            got = by_line.get((path, line), [])
            if not got:
                found.append(f"{path}:{line}: missed: pyright accepts a line marked expect-error")
            elif rule is not None and all(r.rule != rule for r in got):
                rules = ", ".join(sorted({r.rule for r in got}))
                found.append(f"{path}:{line}: of another rule: expected {rule}, got {rules}")
    for (path, line), got in sorted(by_line.items()):
        if line not in marks.get(path, {}):
            found.extend(f"{path}:{line}: unexpected: {r.rule}: {r.message}" for r in got)
    return found


def files(paths: Iterable[Path]) -> list[Path]:
    """Every ``.py`` file under ``paths``, resolved."""
    out: list[Path] = []
    for p in paths:
        out.extend(sorted(p.rglob("*.py")) if p.is_dir() else [p])
    return [p.resolve() for p in out]


def check(paths: Iterable[Path] = CHECKED) -> list[str]:
    """Run pyright on ``paths`` and answer :func:`differences` (empty when all agree)."""
    paths = list(paths)
    marks = {p: expected(p) for p in files(paths)}
    return differences(marks, run_pyright(paths))


def main(argv: list[str]) -> int:
    found = check([Path(a) for a in argv] or CHECKED)
    for line in found:
        print(line)
    return 1 if found else 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
