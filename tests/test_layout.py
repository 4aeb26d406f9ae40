"""The code stays readable by a newcomer: no module under src/foldkit_agent is over
:data:`MOST_LINES` lines, and no comment or docstring in src/ names an issue, a finding or a
stranger (a comment says why the code is as it is; the ticket that asked for it is history,
which ``git log`` keeps)."""

from __future__ import annotations

import ast
import io
import re
import tokenize
from collections.abc import Iterator
from pathlib import Path

from tests.support.paths import ROOT

SRC = ROOT / "src" / "foldkit_agent"

MOST_LINES = 600
"""Most lines one module may have; a longer one is split by concern."""

TICKET = re.compile(
    r"\bissues?\s*#?\d+"  # "issue 20", "(issue 19)", "issues 19 and 20"
    r"|\bfindings?\s+F?\d[\w-]*"  # "finding F15-1", "finding 3"
    r"|\bF\d+-\d+\b"  # "F15-1"
    r"|\bstrangers?\b"  # "stranger found", "strangers' probes"
    r"|(?<![\w&])#\d+\b",  # "#20" (a ticket number), not "&#10;"
    re.IGNORECASE,
)
"""What names a ticket rather than a reason."""


def lines_of(path: Path) -> int:
    return len(path.read_text().splitlines())


def too_long(paths: list[Path], root: Path = SRC, most: int = MOST_LINES) -> dict[str, int]:
    """Each module of ``paths`` over ``most`` lines (named from ``root``) -> its line count."""
    counts = {str(p.relative_to(root)): lines_of(p) for p in paths}
    return {name: n for name, n in sorted(counts.items()) if n > most}


def prose_of(source: str) -> Iterator[tuple[int, str]]:
    """Every comment and docstring of ``source`` (a string standing alone as a statement: a
    module's, class's or function's docstring, or one under an assignment), with its line."""
    for token in tokenize.generate_tokens(io.StringIO(source).readline):
        if token.type == tokenize.COMMENT:
            yield token.start[0], token.string
    for node in ast.walk(ast.parse(source)):
        if (
            isinstance(node, ast.Expr)
            and isinstance(node.value, ast.Constant)
            and isinstance(node.value.value, str)
        ):
            yield node.lineno, node.value.value


def tickets_named(source: str) -> list[str]:
    """``"line: what"`` for each comment or docstring of ``source`` that names a ticket."""
    found: set[tuple[int, str]] = set()
    for line, text in prose_of(source):
        for match in TICKET.finditer(text):
            found.add((line, match.group(0)))
    return [f"{line}: {what!r}" for line, what in sorted(found)]


def modules() -> list[Path]:
    paths = sorted(SRC.rglob("*.py"))
    assert len(paths) > 50  # the walk saw the package
    return paths


def test_no_module_under_src_is_over_600_lines() -> None:
    assert too_long(modules()) == {}


def test_the_size_check_lists_every_long_module_with_its_count(tmp_path: Path) -> None:
    (tmp_path / "short.py").write_text("x = 1\n" * MOST_LINES)
    (tmp_path / "long.py").write_text("x = 1\n" * (MOST_LINES + 1))
    (tmp_path / "part").mkdir()
    (tmp_path / "part" / "longer.py").write_text("x = 1\n" * 900)
    assert too_long(sorted(tmp_path.rglob("*.py")), root=tmp_path) == {
        "long.py": MOST_LINES + 1,
        "part/longer.py": 900,
    }


def test_no_comment_or_docstring_in_src_names_an_issue_or_a_finding() -> None:
    named: dict[str, list[str]] = {}
    for path in modules():
        found = tickets_named(path.read_text())
        if found:
            named[str(path.relative_to(SRC))] = found
    assert named == {}


def test_the_ticket_check_sees_each_kind_in_comments_and_docstrings() -> None:
    source = '''"""The activity feed (issue 19)."""

import x  # finding F15-1: sessions are free to mint


class A:
    """Issues 20 and 21 asked for this."""

    def f(self) -> None:
        """A stranger found that probes were audited as nobody."""
        # see docs/benchmarks.md, "#20 per-call costs"
        y = "issue 7 in a string is data, not a comment"
'''
    assert tickets_named(source) == [
        "1: 'issue 19'",
        "3: 'finding F15-1'",
        "7: 'Issues 20'",
        "10: 'stranger'",
        "11: '#20'",
    ]


def test_the_ticket_check_lets_reasons_through() -> None:
    source = '''"""Each issue of an invalid input names its path."""

# The common path: a text no longer than MAX_DIGITS cannot overflow.
ENTITY = "&#10;"  # a newline as an HTML entity: &#10;
TICKET = None  # an AuditTicket, released once the sink committed
'''
    assert tickets_named(source) == []
