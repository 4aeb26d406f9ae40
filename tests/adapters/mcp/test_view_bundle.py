"""The generated view's script, adapters/mcp/view/view.js, is what esbuild makes of
view.src.js with the pinned @modelcontextprotocol/ext-apps: rebuilt here by ``make view`` (the
one home of the build command) and compared byte for byte, so the committed file can never
drift from its source or from the pinned package."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from tests.support.paths import ROOT

ESBUILD = ROOT / "tests" / "interop" / "node_modules" / ".bin" / "esbuild"
BUNDLE = ROOT / "src" / "foldkit_agent" / "adapters" / "mcp" / "view" / "view.js"


@pytest.mark.interop
@pytest.mark.skipif(
    not ESBUILD.exists(), reason="npm packages are not installed in tests/interop (make node)"
)
def test_the_committed_bundle_is_what_make_view_builds(tmp_path: Path) -> None:
    rebuilt = tmp_path / "view.js"
    done = subprocess.run(
        ["make", "-s", "view", f"VIEW_OUT={rebuilt}"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        env={**os.environ, "MAKEFLAGS": ""},
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert rebuilt.read_bytes() == BUNDLE.read_bytes(), "run `make view` and commit view.js"


def test_the_bundle_is_one_classic_script_safe_to_inline() -> None:
    text = BUNDLE.read_text("utf-8")
    assert "</script" not in text.lower()  # the generated view inlines it in a <script>
    assert "import(" not in text  # nothing is fetched: the host's frame reaches no network
    assert not any(line.startswith(("import ", "export ")) for line in text.splitlines())
