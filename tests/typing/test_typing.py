"""Strict pyright rejects exactly the marked lines of the typing cases, and every example is clean.

The cases (``tests/typing/cases/``) are contracts written as a user writes them, with no
annotation on any hook: pyright must infer each hook's types from the declaration and reject
the lines marked ``# expect-error``, and nothing else. ``tests/typing/check.py`` says how the
markers read.
"""

from __future__ import annotations

from pathlib import Path

from tests.typing.check import CASES, Report, check, differences, expected


def test_pyright_rejects_exactly_the_marked_lines_and_the_examples_are_clean() -> None:
    assert sorted(p.name for p in CASES.glob("*.py")), "no typing cases"
    assert check() == []


def test_a_marked_line_pyright_accepts_is_reported_as_missed(tmp_path: Path) -> None:
    case = tmp_path / "case.py"
    case.write_text("x: int = 1  # expect-error\ny: int = 'two'  # expect-error\nz: str = 3\n")
    found = check([case])
    assert len(found) == 2, found
    assert found[0] == f"{case}:1: missed: pyright accepts a line marked expect-error"
    assert found[1].startswith(f"{case}:3: unexpected: reportAssignmentType: ")


def test_a_marker_naming_a_rule_holds_only_for_an_error_of_that_rule(tmp_path: Path) -> None:
    case = tmp_path / "case.py"
    case.write_text("x: int = 'one'  # expect-error: reportAttributeAccessIssue\n")
    marks = {case: expected(case)}
    assert marks == {case: {1: "reportAttributeAccessIssue"}}
    reported = [Report(case, 1, "reportAssignmentType", "not assignable")]
    assert differences(marks, reported) == [
        f"{case}:1: of another rule: expected reportAttributeAccessIssue, got reportAssignmentType"
    ]
    assert differences(marks, [Report(case, 1, "reportAttributeAccessIssue")]) == []
