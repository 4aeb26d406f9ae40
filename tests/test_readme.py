"""The README's quick start runs as a file and prints what the agent sees."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

from tests.support.paths import ROOT

README = ROOT / "README.md"


def test_the_readme_quick_start_runs_as_a_file_and_shows_the_added_todo(tmp_path: Path) -> None:
    code = re.search(r"## Quick start\n\n.*?```python\n(.*?)```", README.read_text(), re.S)
    assert code is not None
    path = tmp_path / "quick_start.py"
    path.write_text(code.group(1), encoding="utf-8")
    done = subprocess.run(
        [sys.executable, str(path)], cwd=tmp_path, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout == "{'todos': ['Read the guide'], 'selected': None} ['added_todo']\n"
