"""The generated view's script, adapters/mcp/view/view.js, is what esbuild makes of
view.src.js with the pinned @modelcontextprotocol/ext-apps: rebuilt here by ``make view`` (the
one home of the build command) and compared byte for byte, so the committed file can never
drift from its source or from the pinned package."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.bundles import ESBUILD, rebuilt
from tests.support.paths import ROOT

BUNDLE = ROOT / "src" / "foldkit_agent" / "adapters" / "mcp" / "view" / "view.js"


@pytest.mark.interop
@pytest.mark.skipif(
    not ESBUILD.exists(), reason="npm packages are not installed in tests/interop (make node)"
)
def test_the_committed_bundle_is_what_make_view_builds(tmp_path: Path) -> None:
    made = rebuilt("view", "VIEW_OUT", tmp_path / "view.js")
    assert made == BUNDLE.read_bytes(), "run `make view` and commit view.js"


def test_the_bundle_is_one_classic_script_safe_to_inline() -> None:
    text = BUNDLE.read_text("utf-8")
    assert "</script" not in text.lower()  # the generated view inlines it in a <script>
    assert "import(" not in text  # nothing is fetched: the host's frame reaches no network
    assert not any(line.startswith(("import ", "export ")) for line in text.splitlines())
