"""The README's quick start runs as written."""

from __future__ import annotations

import re
from typing import Any

from tests.support.paths import ROOT

README = ROOT / "README.md"


async def test_the_readme_quick_start_runs_and_shows_the_added_todo(capsys: Any) -> None:
    code = re.search(r"## Quick start\n\n```python\n(.*?)```", README.read_text(), re.S)
    assert code is not None
    namespace: dict[str, Any] = {"__name__": "readme_quick_start"}
    exec(compile(code.group(1), "README.md", "exec"), namespace)
    await namespace["main"]()
    assert (
        capsys.readouterr().out.strip()
        == "{'todos': ['Read the guide'], 'selected': None} ['added_todo']"
    )
